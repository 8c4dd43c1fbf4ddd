"""Why a student's backward fails, in words: it is compared with the right gradient (the built-in op's, from
PyTorch's autograd) and with the mistakes students make, one named message each. The judge (``judge.py``)
calls ``diagnose`` when gradcheck fails.
"""

from __future__ import annotations

import torch

from .challenges import Challenge


def backward_of(fn, xs, grad_output) -> tuple:
    """The gradients ``fn``'s backward returns for ``grad_output``, one per input (None where it gave none)."""
    leaves = [x.clone().requires_grad_() for x in xs]
    y = fn.apply(*leaves)
    return torch.autograd.grad(y, leaves, grad_output, allow_unused=True)


def varied_grad_output(n: int) -> torch.Tensor:
    """A grad_output that is not all ones, so forgetting it shows: 0.5, -1.5, 2.0, ... ."""
    return torch.tensor([(0.5, -1.5, 2.0, 0.75)[i % 4] for i in range(n)], dtype=torch.float64)


def reference_slope(c: Challenge, xs) -> list[torch.Tensor]:
    """The right answer: the reference op's own derivative, from PyTorch's autograd."""
    leaves = [x.clone().requires_grad_() for x in xs]
    y = c.reference(*leaves)
    return [d.reshape(-1) for d in torch.autograd.grad(y, leaves, torch.ones_like(y))]


def same(a, b) -> bool:
    """``a`` exists, has ``b``'s shape and is close to it."""
    return a is not None and a.shape == b.shape and torch.allclose(a, b, rtol=1e-3, atol=1e-5)


WRONG = "The derivative of the wrong function: your backward computes grad_output · "
WRONG_FUNCTIONS = {  # what students compute by mistake -> the message that names it
    WRONG + "(1 − input²), tanh's formula applied to the input instead of the saved output.": lambda x: 1 - x * x,
    WRONG + "e^input, the derivative of exp.": torch.exp,
    WRONG + "σ(input)·(1 − σ(input)), the sigmoid's slope.": lambda x: torch.sigmoid(x) * (1 - torch.sigmoid(x)),
    WRONG + "input·(1 − input), the sigmoid's formula applied to the input instead of the saved output.":
        lambda x: x * (1 - x),
    WRONG + "(1 − tanh(input)²), tanh's slope.": lambda x: 1 - torch.tanh(x) ** 2,
    WRONG + "σ(input), softplus's slope.": torch.sigmoid,
    WRONG + "(input > 0), ReLU's slope.": lambda x: (x > 0).double(),
    WRONG + "sign(input), the slope of |x|.": torch.sign,
    WRONG + "2·input, the slope of x².": lambda x: 2 * x,
    WRONG + "input², the slope of x³/3: the 3 is missing.": lambda x: x * x,
    "The comparison is flipped: your backward lets the gradient through where input < 0 and blocks it where "
    "input > 0.": lambda x: (x < 0).double(),
}


def diagnose(fn, c: Challenge, xs) -> list[str]:
    """Why gradcheck failed, in words: compare the backward with the usual mistakes."""
    g = varied_grad_output(xs[0].numel())
    grads = backward_of(fn, xs, g)
    right = [g * d for d in reference_slope(c, xs)]
    if c.n_inputs > 1:
        return _diagnose_many(c, xs, g, grads, right)
    yours, d, x = grads[0], reference_slope(c, xs)[0], xs[0]
    if yours is None:
        return ["Your backward returned None: it must return the gradient for the input."]
    if yours.shape != x.shape:
        return [f"Your backward returns shape {tuple(yours.shape)}; the input has shape {tuple(x.shape)}."]
    if same(yours, d):
        return ["Your backward forgot grad_output: it returns the slope f'(input), but autograd needs "
                "grad_output · f'(input) (the chain rule)."]
    if same(yours, g):
        return ["Your backward returns grad_output unchanged: multiply it by the slope of your function."]
    if same(yours, -right[0]):
        return ["Wrong sign: your backward returns minus the right gradient."]
    found = [_regional(yours, right[0], x, side, name) for side, name in ((x < 0, "input < 0"), (x > 0, "input > 0"))]
    found = [f for f in found if f]
    if found and len(found) < 2:
        return found
    for message, slope in WRONG_FUNCTIONS.items():
        if same(yours, g * slope(x)):
            return [message]
    bad = int((yours - right[0]).abs().argmax())
    return [f"Your backward does not compute the slope of this function. At input {x[bad].item():.3g} with "
            f"grad_output {g[bad].item():.3g} it returns {yours[bad].item():.4g}; the right value is "
            f"{right[0][bad].item():.4g}. Compare the two heatmaps below."]


def _regional(yours, right, x, where, name) -> str:
    """A message when the backward is right everywhere except on one side of 0."""
    other = ~where
    if not where.any() or not same(yours[other], right[other]) or same(yours[where], right[where]):
        return ""
    if same(yours[where], -right[where]):
        return f"Wrong sign where {name}: there your gradient is minus the right one."
    if same(yours[where], torch.zeros_like(right[where])):
        return f"Your backward returns 0 where {name}, but the slope there is not 0."
    return f"Your backward is right except where {name}: check the slope on that side."


def _diagnose_many(c, xs, g, grads, right) -> list[str]:
    names = ["a", "b", "c"]
    if len(grads) == 2 and same(grads[0], right[1]) and same(grads[1], right[0]):
        return ["The two gradients are swapped: return them in the order of forward's inputs, a's first."]
    out = []
    for k, (yours, want) in enumerate(zip(grads, right, strict=True)):
        n = names[k]
        if yours is None:
            out.append(f"Your backward returned None for {n}, but {n} needs a gradient here.")
        elif same(yours, want):
            continue
        elif same(yours, want / g):
            out.append(f"The gradient for {n} forgot grad_output: multiply it in (the chain rule).")
        elif same(yours, g * xs[k]):
            out.append(f"The gradient for {n} uses {n} itself; ∂(a·b)/∂{n} is the *other* input.")
        elif any(same(yours, r) for r in right):
            out.append(f"The gradient for {n} is the one that belongs to another input: are they swapped?")
        else:
            out.append(f"The gradient for {n} is wrong.")
    return out or ["Your backward does not match the slope of your forward."]
