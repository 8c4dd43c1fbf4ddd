"""Lesson 6's challenges: Functions for students to write, each with a hint, a reference solution
(student-style source that goes through the same validator and sandbox) and a built-in op to match.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..maths import (
    ABS,
    CLAMP,
    CUBE,
    GELU_TANH,
    LEAKY_RELU,
    MULTIPLY,
    RELU,
    SIGMOID,
    SILU,
    SOFTPLUS,
    TANH,
    MathFunction,
    OfMaths,
)

KEY = re.compile(r"^[a-z0-9_]{1,24}$")


@dataclass(frozen=True)
class Challenge(OfMaths):
    """One exercise. ``maths`` is the function to write: ``reference`` is the built-in the forward must
    match; ``kinks`` are the points where the function has no single slope (the checker keeps its points
    away and shows them apart)."""

    key: str  # URL-safe id, used in ?solved=
    title: str
    formula: str  # markdown, ours
    task: str  # markdown, ours
    skeleton: str
    solution: str
    hint: str
    maths: MathFunction


def _skeleton(name: str, forward: str = "...", backward: str = "...", params: str = "input") -> str:
    return (f"class {name}(torch.autograd.Function):\n"
            "    @staticmethod\n"
            f"    def forward(ctx, {params}):\n"
            f"{_indent(forward)}\n"
            "\n"
            "    @staticmethod\n"
            "    def backward(ctx, grad_output):\n"
            f"{_indent(backward)}\n")


def _indent(body: str) -> str:
    return "\n".join("        " + line if line else "" for line in body.strip("\n").split("\n"))


def _solution(name: str, forward: str, backward: str, params: str = "input") -> str:
    return _skeleton(name, forward, backward, params)


SAVE_INPUT = "ctx.save_for_backward(input)"
GET_INPUT = "(input,) = ctx.saved_tensors"
GELU_C = math.sqrt(2 / math.pi)
GELU_FORWARD = f"""ctx.save_for_backward(input)
inner = {GELU_C!r} * (input + 0.044715 * input ** 3)
return 0.5 * input * (1 + torch.tanh(inner))"""

_CHALLENGES = [
    Challenge(
        "relu", "ReLU", "relu(x) = max(0, x)",
        "The tutorial's `MyReLU`: write forward and backward.",
        _skeleton("MyReLU", "# 1. save what backward needs\n# 2. return max(0, input)\n..."),
        _solution("MyReLU", f"{SAVE_INPUT}\nreturn input.clamp(min=0)",
                  f"{GET_INPUT}\ngrad_input = grad_output.clone()\ngrad_input[input < 0] = 0\nreturn grad_input"),
        "The slope is 1 where input > 0 and 0 where input < 0. Clone grad_output, then zero it where input < 0: "
        "`grad_input[input < 0] = 0`.",
        RELU),
    Challenge(
        "leaky_relu", "LeakyReLU", "leaky_relu(x) = x if x ≥ 0, else 0.01·x",
        "Like ReLU, but negative inputs keep a small slope of 0.01.",
        _skeleton("MyLeakyReLU"),
        _solution("MyLeakyReLU", f"{SAVE_INPUT}\nreturn torch.where(input >= 0, input, 0.01 * input)",
                  f"{GET_INPUT}\nreturn grad_output * torch.where(input >= 0, 1.0, 0.01)"),
        "The slope is 1 for input ≥ 0 and 0.01 below: `torch.where(input >= 0, 1.0, 0.01)`, times grad_output.",
        LEAKY_RELU),
    Challenge(
        "sigmoid", "Sigmoid (save the output)", "σ(x) = 1 / (1 + e^(−x)),  σ'(x) = σ(x)·(1 − σ(x))",
        "Save the *output* s, not the input: the slope needs only s.",
        _skeleton("MySigmoid"),
        _solution("MySigmoid", "s = torch.sigmoid(input)\nctx.save_for_backward(s)\nreturn s",
                  "(s,) = ctx.saved_tensors\nreturn grad_output * s * (1 - s)"),
        "In forward: `s = torch.sigmoid(input)`, then `ctx.save_for_backward(s)`. In backward: "
        "`grad_output * s * (1 - s)`.",
        SIGMOID),
    Challenge(
        "tanh", "Tanh", "tanh'(x) = 1 − tanh(x)²",
        "Save the output t = tanh(input); the slope is 1 − t².",
        _skeleton("MyTanh"),
        _solution("MyTanh", "t = torch.tanh(input)\nctx.save_for_backward(t)\nreturn t",
                  "(t,) = ctx.saved_tensors\nreturn grad_output * (1 - t * t)"),
        "1 − t² uses the *output* t. Writing 1 − input² is the derivative of another function.",
        TANH),
    Challenge(
        "softplus", "Softplus", "softplus(x) = log(1 + eˣ),  softplus'(x) = σ(x)",
        "A smooth ReLU. Its slope is the sigmoid of the input.",
        _skeleton("MySoftplus"),
        _solution("MySoftplus", f"{SAVE_INPUT}\nreturn torch.log(1 + torch.exp(input))",
                  f"{GET_INPUT}\nreturn grad_output * torch.sigmoid(input)"),
        "Forward: `torch.log(1 + torch.exp(input))`. Backward: `grad_output * torch.sigmoid(input)`.",
        SOFTPLUS),
    Challenge(
        "silu", "SiLU / Swish", "silu(x) = x·σ(x),  silu'(x) = σ(x) + x·σ(x)·(1 − σ(x))",
        "x times its own sigmoid. Use the product rule.",
        _skeleton("MySiLU"),
        _solution("MySiLU", f"{SAVE_INPUT}\nreturn input * torch.sigmoid(input)",
                  f"{GET_INPUT}\ns = torch.sigmoid(input)\nreturn grad_output * (s + input * s * (1 - s))"),
        "Product rule: d/dx [x·σ(x)] = σ(x) + x·σ'(x), and σ'(x) = σ(x)(1 − σ(x)).",
        SILU),
    Challenge(
        "gelu", "GELU (tanh form)", "gelu(x) ≈ ½·x·(1 + tanh(u)),  u = √(2/π)·(x + 0.044715·x³)",
        "The forward is given. Write backward: product rule plus chain rule through tanh.",
        _skeleton("MyGELU", GELU_FORWARD),
        _solution("MyGELU", GELU_FORWARD,
                  f"{GET_INPUT}\nt = torch.tanh({GELU_C!r} * (input + 0.044715 * input ** 3))\n"
                  f"du = {GELU_C!r} * (1 + 3 * 0.044715 * input ** 2)\n"
                  "return grad_output * (0.5 * (1 + t) + 0.5 * input * (1 - t * t) * du)"),
        "With t = tanh(u): d/dx = ½(1 + t) + ½·x·(1 − t²)·du/dx, and du/dx = √(2/π)·(1 + 3·0.044715·x²).",
        GELU_TANH),
    Challenge(
        "cube", "x³", "f(x) = x³,  f'(x) = 3x²",
        "A polynomial: no kinks, no saved output tricks.",
        _skeleton("MyCube"),
        _solution("MyCube", f"{SAVE_INPUT}\nreturn input ** 3", f"{GET_INPUT}\nreturn grad_output * 3 * input ** 2"),
        "Save the input; the slope is 3·input².",
        CUBE),
    Challenge(
        "abs", "|x| (a kink)", "|x|: slope −1 left of 0, +1 right of it",
        "A kink at 0: gradcheck checks points away from it; the kink is shown apart.",
        _skeleton("MyAbs"),
        _solution("MyAbs", f"{SAVE_INPUT}\nreturn input.abs()", f"{GET_INPUT}\nreturn grad_output * torch.sign(input)"),
        "The slope is the sign of the input: `torch.sign(input)`.",
        ABS),
    Challenge(
        "clamp", "clamp(−1, 1) (two kinks)", "clamp(x, −1, 1): slope 1 inside (−1, 1), 0 outside",
        "Two kinks, at −1 and 1.",
        _skeleton("MyClamp"),
        _solution("MyClamp", f"{SAVE_INPUT}\nreturn input.clamp(min=-1, max=1)",
                  f"{GET_INPUT}\ngrad_input = grad_output.clone()\ngrad_input[(input < -1) | (input > 1)] = 0\n"
                  "return grad_input"),
        "Let the gradient through inside (−1, 1) and zero it outside: `grad_input[(input < -1) | (input > 1)] = 0`.",
        CLAMP),
    Challenge(
        "multiply", "a · b (two inputs)", "f(a, b) = a·b,  ∂f/∂a = b,  ∂f/∂b = a",
        "Two inputs, two gradients: return one per input. When an input needs no gradient "
        "(`ctx.needs_input_grad[i]` is False), return None for it instead of computing it.",
        _skeleton("MyMul", params="a, b"),
        _solution("MyMul", "ctx.save_for_backward(a, b)\nreturn a * b",
                  "a, b = ctx.saved_tensors\ngrad_a = None\ngrad_b = None\nif ctx.needs_input_grad[0]:\n"
                  "    grad_a = grad_output * b\nif ctx.needs_input_grad[1]:\n    grad_b = grad_output * a\n"
                  "return grad_a, grad_b", params="a, b"),
        "Each input's gradient is grad_output times the *other* input. Guard each with "
        "`if ctx.needs_input_grad[0]:` and return `grad_a, grad_b` (None where not needed).",
        MULTIPLY),
]

CHALLENGES: dict[str, Challenge] = {c.key: c for c in _CHALLENGES}


def parse_solved(text: str | None) -> tuple[list[str], str]:
    """``"relu,tanh"`` from the URL -> the known keys, in challenge order, and a warning for the rest."""
    if not text:
        return [], ""
    parts = [p.strip() for p in str(text)[:400].split(",") if p.strip()]
    known = [k for k in CHALLENGES if k in parts]
    unknown = [p for p in parts if p not in CHALLENGES]
    warning = f"Ignored {len(unknown)} unknown challenge name(s) in the link." if unknown else ""
    return known, warning


def format_solved(keys) -> str:
    """The ``?solved=`` value for a set of keys, in challenge order."""
    return ",".join(k for k in CHALLENGES if k in set(keys))
