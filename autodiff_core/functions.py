"""Custom autograd Functions: the tutorial's MyReLU, its modern twin, and a registry of teaching
Functions with hand-written backwards, correct ones and the deliberately broken ones of ``broken.py``.
(Gradcheck on a registry entry is ``gradcheck.py``.)

A ``torch.autograd.Function`` has two halves that always travel together:

* ``forward`` computes the output from the input and stashes on ``ctx`` whatever ``backward`` needs;
* ``backward`` receives ``grad_output`` (dLoss/dOutput, same shape as the output) and must return
  ``grad_input`` (dLoss/dInput, same shape as the input). By the chain rule that is
  ``grad_output * f'(input)`` for an element-wise function.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch
from torch.autograd import Function

from .broken import (
    ReLUMaskFromGradOutput,
    ReLUNoChainRule,
    ReLUWrongComparison,
    SigmoidSignError,
    SoftplusExpGradient,
    TanhDerivativeOfInput,
)
from .maths import EXP, IDENTITY, LEAKY_RELU, RELU, SIGMOID, SOFTPLUS, TANH, MathFunction, OfMaths


class MyReLU(Function):
    """ReLU written the tutorial's way: ``forward(ctx, input)`` and ``backward(ctx, grad_output)``."""

    @staticmethod
    def forward(ctx, input):
        """In: ``input``, any shape. Out: ``input`` with every negative entry replaced by 0.

        ``ctx.save_for_backward`` keeps the input for backward. It only stores tensors, and it lets
        autograd check that nobody modified them in place before backward ran.
        """
        ctx.save_for_backward(input)
        # clamp(min=0) maps [-1, -2, 3] to [0, 0, 3]
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        """In: ``grad_output`` = dLoss/dOutput. Out: ``grad_input`` = dLoss/dInput, same shape.

        ReLU's slope is 1 where the input was positive and 0 where it was negative, so the incoming
        gradient passes through unchanged except where the input was < 0, where it is zeroed.
        """
        (input,) = ctx.saved_tensors
        grad_input = grad_output.clone()  # never modify grad_output in place: autograd may reuse it
        grad_input[input < 0] = 0
        return grad_input


class MyReLUModern(Function):
    """The same ReLU in the modern form: ``forward`` without ctx, plus ``setup_context``.

    Separating the maths (``forward``) from the bookkeeping (``setup_context``) is what lets
    ``torch.func`` transforms such as ``vmap`` and ``jacrev`` work with a custom Function.
    """

    generate_vmap_rule = True  # only possible in this form: torch.func derives vmap from forward

    @staticmethod
    def forward(input):
        """In: ``input``. Out: ``input.clamp(min=0)``. No ctx here: forward is pure maths."""
        return input.clamp(min=0)

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Called after forward with its inputs and output; saves what backward needs."""
        (input,) = inputs
        ctx.save_for_backward(input)

    @staticmethod
    def backward(ctx, grad_output):
        """Identical to ``MyReLU.backward``: zero the gradient where the input was < 0."""
        (input,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


relu = MyReLU.apply


class MyLeakyReLU(Function):
    """LeakyReLU with slope 0.01 for negative inputs."""

    SLOPE = 0.01

    @staticmethod
    def forward(ctx, input):
        """Out: ``input`` where positive, ``0.01 * input`` where negative."""
        ctx.save_for_backward(input)
        return torch.where(input >= 0, input, input * MyLeakyReLU.SLOPE)

    @staticmethod
    def backward(ctx, grad_output):
        """The slope is 1 for positive inputs and 0.01 for negative ones; multiply it in.

        The slope is built in grad_output's dtype: a float32 constant would turn 0.01 into
        0.009999999776 in a float64 run.
        """
        (input,) = ctx.saved_tensors
        slope = torch.full_like(grad_output, MyLeakyReLU.SLOPE)  # 0.01 in grad_output's dtype
        return torch.where(input >= 0, grad_output, grad_output * slope)


class MySigmoid(Function):
    """Sigmoid, saving its *output*: sigmoid'(x) = s * (1 - s) needs only s."""

    @staticmethod
    def forward(ctx, input):
        """Out: ``s = 1 / (1 + exp(-input))``; s is saved, not the input."""
        s = torch.sigmoid(input)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_output):
        """grad_input = grad_output * s * (1 - s)."""
        (s,) = ctx.saved_tensors
        return grad_output * s * (1 - s)


class MyTanh(Function):
    """Tanh, saving its output: tanh'(x) = 1 - tanh(x)^2."""

    @staticmethod
    def forward(ctx, input):
        """Out: ``t = tanh(input)``; t is saved."""
        t = torch.tanh(input)
        ctx.save_for_backward(t)
        return t

    @staticmethod
    def backward(ctx, grad_output):
        """grad_input = grad_output * (1 - t^2)."""
        (t,) = ctx.saved_tensors
        return grad_output * (1 - t * t)


class MySoftplus(Function):
    """Softplus, log(1 + exp(x)): a smooth ReLU whose derivative is the sigmoid."""

    @staticmethod
    def forward(ctx, input):
        """Out: ``log(1 + exp(input))``, computed stably by ``torch.nn.functional.softplus``."""
        ctx.save_for_backward(input)
        return torch.nn.functional.softplus(input)

    @staticmethod
    def backward(ctx, grad_output):
        """grad_input = grad_output * sigmoid(input)."""
        (input,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(input)


class MyExp(Function):
    """Exp, the Function whose derivative is itself: save the output and reuse it."""

    @staticmethod
    def forward(ctx, input):
        """Out: ``e = exp(input)``; e is saved."""
        e = torch.exp(input)
        ctx.save_for_backward(e)
        return e

    @staticmethod
    def backward(ctx, grad_output):
        """grad_input = grad_output * e."""
        (e,) = ctx.saved_tensors
        return grad_output * e


class MyLinear(Function):
    """Linear (the identity), TF Playground's "Linear" activation: a network of them is one affine map, so
    its decision boundary is a straight line however deep it is."""

    @staticmethod
    def forward(ctx, input):
        """Out: ``input`` unchanged, as a new tensor. Nothing is saved: the slope is 1 everywhere."""
        return input.clone()

    @staticmethod
    def backward(ctx, grad_output):
        """grad_input = grad_output * 1: the gradient passes through untouched."""
        return grad_output


class MySoftmax(Function):
    """Softmax over the last dimension, lesson 5's output for 3 to 6 classes. Not element-wise: each output
    depends on every input of its row, so its backward is a vector-Jacobian product, not a slope."""

    @staticmethod
    def forward(ctx, input):
        """In: ``input`` (..., classes), the logits. Out: ``y`` of the same shape, each row positive and summing
        to 1: ``y_i = exp(input_i) / sum_j exp(input_j)``. The row's largest logit is taken off first (y does not
        change), so exp never overflows. y is saved: the Jacobian needs only y."""
        e = torch.exp(input - input.amax(-1, keepdim=True))
        y = e / e.sum(-1, keepdim=True)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """In: ``g`` = dLoss/dy (..., classes). Out: dLoss/dinput = g @ J, J the Jacobian dy/dinput:
        J_ii = y_i (1 - y_i) and J_ij = -y_i y_j, that is diag(y) - y yᵀ. Multiplied out row by row it is
        ``y * (g - (g * y).sum(-1, keepdim=True))``, and the classes x classes matrix is never built."""
        (y,) = ctx.saved_tensors
        return y * (grad_output - (grad_output * y).sum(-1, keepdim=True))


softmax = MySoftmax.apply


@dataclass(frozen=True)
class FunctionSpec(OfMaths):
    """One registry entry: the Function, whether its backward is right, and the mathematical function it
    computes (``maths``: the built-in it must match, and where it is not smooth)."""

    name: str
    fn: type[Function]
    maths: MathFunction
    correct: bool
    summary: str

    @property
    def apply(self) -> Callable[[torch.Tensor], torch.Tensor]:
        return self.fn.apply


_SPECS = [
    FunctionSpec("ReLU", MyReLU, RELU, True, "The tutorial's MyReLU: max(0, x)."),
    FunctionSpec("ReLU (modern form)", MyReLUModern, RELU, True, "MyReLU written with forward + setup_context."),
    FunctionSpec("LeakyReLU", MyLeakyReLU, LEAKY_RELU, True, "x for x ≥ 0, 0.01·x below."),
    FunctionSpec("Sigmoid", MySigmoid, SIGMOID, True, "1 / (1 + e^-x); saves its output."),
    FunctionSpec("Tanh", MyTanh, TANH, True, "tanh(x); saves its output."),
    FunctionSpec("Softplus", MySoftplus, SOFTPLUS, True, "log(1 + e^x), a smooth ReLU."),
    FunctionSpec("Exp", MyExp, EXP, True, "e^x, its own derivative."),
    FunctionSpec("Linear", MyLinear, IDENTITY, True, "x itself: the identity, slope 1."),
    FunctionSpec("BROKEN ReLU: chain rule forgotten", ReLUNoChainRule, RELU, False,
                 "backward returns the slope without multiplying by grad_output."),
    FunctionSpec("BROKEN ReLU: comparison flipped", ReLUWrongComparison, RELU, False,
                 "backward zeroes the gradient where input > 0 instead of < 0."),
    FunctionSpec("BROKEN ReLU: mask from grad_output", ReLUMaskFromGradOutput, RELU, False,
                 "backward masks with grad_output < 0 instead of input < 0."),
    FunctionSpec("BROKEN Sigmoid: sign error", SigmoidSignError, SIGMOID, False,
                 "backward uses s·(s − 1) instead of s·(1 − s)."),
    FunctionSpec("BROKEN Tanh: derivative of the input", TanhDerivativeOfInput, TANH, False,
                 "backward uses 1 − x² instead of 1 − tanh(x)²."),
    FunctionSpec("BROKEN Softplus: gradient of exp", SoftplusExpGradient, SOFTPLUS, False,
                 "backward returns e^x, the derivative of exp, not sigmoid(x)."),
]

FUNCTIONS: dict[str, FunctionSpec] = {spec.name: spec for spec in _SPECS}
BUILTIN_ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "torch.relu": torch.relu,
    "torch.tanh": torch.tanh,
    "torch.sigmoid": torch.sigmoid,
}


def correct_functions() -> list[str]:
    """Names of the registry entries whose backward is right."""
    return [name for name, spec in FUNCTIONS.items() if spec.correct]


def activation_names() -> list[str]:
    """Every name a trainer accepts as its activation: the registry, the built-ins, then the caller's own
    Functions from lesson 6."""
    return [*FUNCTIONS, *BUILTIN_ACTIVATIONS, *student_activations()]


def get_activation(name: str) -> Callable[[torch.Tensor], torch.Tensor]:
    """The callable for a registry name (its ``apply``), a built-in such as ``"torch.relu"``, or one of the
    caller's Functions from lesson 6."""
    if name in FUNCTIONS:
        return FUNCTIONS[name].apply
    if name in BUILTIN_ACTIVATIONS:
        return BUILTIN_ACTIVATIONS[name]
    students = student_activations()
    if name in students:
        return students[name]
    raise ValueError(f"activation must be one of: {', '.join(activation_names())}; not {name!r}.")


# ---- Functions students wrote in lesson 6 ----
# They are not kept here: each browser session holds its own (studio/session_functions.py), as callables that
# compute in a sandboxed worker (grading/remote.py). The caller hands them to the thread it computes on with
# ``bind_student_activations``: the app's script thread its session's, at each run; a training thread its run's.

_bound = threading.local()


def student_activations() -> Mapping[str, Callable[[torch.Tensor], torch.Tensor]]:
    """The caller's Functions from lesson 6: those bound to this thread (none if none were)."""
    bound = getattr(_bound, "functions", None)
    return bound if bound is not None else {}


def bind_student_activations(functions: Mapping[str, Callable] | None) -> None:
    """Give the calling thread these student Functions (a script run's session's, or a training run's, captured
    from its session); None takes them back."""
    _bound.functions = functions
