"""The mathematical functions the lessons teach, each declared once: the built-in PyTorch op a Function must
match, how that op is written in code, where the function has no single slope, and where to look at it.

Lesson 1's registry (``functions.FUNCTIONS``) and lesson 6's challenges (``grading.challenges``) both hold
one of these, so ReLU's kink or Exp's domain is written in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class MathFunction:
    """A function and its built-in reference. ``kinks`` are the points with no single slope (checkers keep
    their points away and show them apart); ``domain`` is the interval checked and drawn."""

    reference: Callable[..., torch.Tensor]
    reference_name: str  # how the built-in is written in code
    kinks: tuple[float, ...] = ()
    domain: tuple[float, float] = (-3.0, 3.0)
    n_inputs: int = 1


class OfMaths:
    """For a frozen dataclass with a ``maths: MathFunction`` field (a lesson's Function, a challenge): its
    reference, the reference's name in code, kinks, domain and number of inputs, read through ``maths``."""

    maths: MathFunction

    @property
    def reference(self) -> Callable[..., torch.Tensor]:
        return self.maths.reference

    @property
    def reference_name(self) -> str:
        """How the built-in reference is written in code."""
        return self.maths.reference_name

    @property
    def kinks(self) -> tuple[float, ...]:
        return self.maths.kinks

    @property
    def domain(self) -> tuple[float, float]:
        return self.maths.domain

    @property
    def n_inputs(self) -> int:
        return self.maths.n_inputs


RELU = MathFunction(torch.relu, "torch.relu", kinks=(0.0,))
LEAKY_RELU = MathFunction(lambda x: F.leaky_relu(x, 0.01), "F.leaky_relu(x, 0.01)", kinks=(0.0,))
SIGMOID = MathFunction(torch.sigmoid, "torch.sigmoid")
TANH = MathFunction(torch.tanh, "torch.tanh")
SOFTPLUS = MathFunction(F.softplus, "F.softplus")
EXP = MathFunction(torch.exp, "torch.exp", domain=(-2.0, 2.0))
IDENTITY = MathFunction(torch.nn.Identity(), "nn.Identity()")
SILU = MathFunction(F.silu, "F.silu")
GELU_TANH = MathFunction(lambda x: F.gelu(x, approximate="tanh"), "F.gelu(x, approximate='tanh')")
CUBE = MathFunction(lambda x: torch.pow(x, 3), "torch.pow(x, 3)", domain=(-2.0, 2.0))
ABS = MathFunction(torch.abs, "torch.abs", kinks=(0.0,))
CLAMP = MathFunction(lambda x: torch.clamp(x, -1, 1), "torch.clamp(x, -1, 1)", kinks=(-1.0, 1.0))
MULTIPLY = MathFunction(torch.mul, "torch.mul", n_inputs=2)
SINH = MathFunction(torch.sinh, "torch.sinh", domain=(-2.0, 2.0))
SORT = MathFunction(lambda x: torch.sort(x).values, "torch.sort")  # the sorted values; the indices come apart
