"""Why a student's backward fails, in words: it is compared with the right gradient (the built-in op's, from
PyTorch's autograd) and with the mistakes students make, one named message each. The judge (``judge.py``)
calls ``diagnose`` when gradcheck fails.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Mistake:
    """One of the mistakes students make in a backward: its message when it is the only one (``alone``), and as
    one of several found in the same backward (``part``)."""

    alone: str
    part: str


def _wrong_function(what: str) -> Mistake:
    return Mistake("The derivative of the wrong function: your backward computes grad_output · " + what,
                   "it takes the slope of the wrong function: " + what)


FORGOT = Mistake("Your backward forgot grad_output: it returns the slope f'(input), but autograd needs "
                 "grad_output · f'(input) (the chain rule).",
                 "it forgot grad_output: autograd needs grad_output · f'(input) (the chain rule), not the slope alone.")
UNCHANGED = Mistake("Your backward returns grad_output unchanged: multiply it by the slope of your function.",
                    "it never multiplies by the slope of your function.")
SIGN = Mistake("Wrong sign: your backward returns minus the right gradient.",
               "the sign is wrong: it returns minus what it should.")
WRONG_FUNCTIONS = {  # what students compute by mistake -> the mistake that names it
    _wrong_function("(1 − input²), tanh's formula applied to the input instead of the saved output."):
        lambda x: 1 - x * x,
    _wrong_function("e^input, the derivative of exp."): torch.exp,
    _wrong_function("σ(input)·(1 − σ(input)), the sigmoid's slope."):
        lambda x: torch.sigmoid(x) * (1 - torch.sigmoid(x)),
    _wrong_function("input·(1 − input), the sigmoid's formula applied to the input instead of the saved output."):
        lambda x: x * (1 - x),
    _wrong_function("(1 − tanh(input)²), tanh's slope."): lambda x: 1 - torch.tanh(x) ** 2,
    _wrong_function("σ(input), softplus's slope."): torch.sigmoid,
    _wrong_function("(input > 0), ReLU's slope."): lambda x: (x > 0).double(),
    _wrong_function("sign(input), the slope of |x|."): torch.sign,
    _wrong_function("2·input, the slope of x²."): lambda x: 2 * x,
    _wrong_function("input², the slope of x³/3: the 3 is missing."): lambda x: x * x,
    Mistake("The comparison is flipped: your backward lets the gradient through where input < 0 and blocks it where "
            "input > 0.", "the comparison is flipped: it lets the gradient through where input < 0 and blocks it "
            "where input > 0."): lambda x: (x < 0).double(),
}


def mistakes_in(yours, g, slopes: list[tuple[Mistake | None, torch.Tensor]], most: int = 3,
                forgetting: Mistake = FORGOT) -> list[Mistake] | None:
    """The fewest of the usual mistakes that turn the right gradient into ``yours``, or None when no combination
    of at most ``most`` of them does. The gradient is ``grad_output · slope``; a backward may take a wrong slope
    (``slopes``: each with its mistake, None for the right one), forget grad_output (``forgetting``), and get the
    sign wrong."""
    for count in range(1, most + 1):
        for (slope_mistake, slope), forgot, sign in itertools.product(slopes, (False, True), (1, -1)):
            found = [m for m in (slope_mistake, forgetting if forgot else None, SIGN if sign < 0 else None) if m]
            if len(found) == count and same(yours, sign * (slope if forgot else g * slope)):
                return found
    return None


def named(found: list[Mistake], whose: str = "") -> list[str]:
    """The mistakes found in one backward (or in the gradient ``whose``), each named: one alone as it is, several
    one a line ("Mistake 1 of 2: ..."), so a student fixes each, not only the first."""
    if len(found) == 1:
        return [found[0].alone]
    where = f" in the gradient for {whose}" if whose else ""
    return [f"Mistake {i} of {len(found)}{where}: {m.part[0].upper()}{m.part[1:]}" for i, m in enumerate(found, 1)]


def diagnose(fn, c: Challenge, xs) -> list[str]:
    """Why gradcheck failed, in words: compare the backward with the usual mistakes, one or several at once."""
    g = varied_grad_output(xs[0].numel())
    grads = backward_of(fn, xs, g)
    slopes = reference_slope(c, xs)
    right = [g * d for d in slopes]
    if c.n_inputs > 1:
        return _diagnose_many(xs, g, grads, slopes)
    yours, d, x = grads[0], slopes[0], xs[0]
    if yours is None:
        return ["Your backward returned None: it must return the gradient for the input."]
    if yours.shape != x.shape:
        return [f"Your backward returns shape {tuple(yours.shape)}; the input has shape {tuple(x.shape)}."]
    candidates = [(None, d), (UNCHANGED, torch.ones_like(x)), *((m, f(x)) for m, f in WRONG_FUNCTIONS.items())]
    if (one := mistakes_in(yours, g, candidates[:2], most=1)) is not None:  # forgot, unchanged, sign
        return named(one)
    found = [_regional(yours, right[0], x, side, name) for side, name in ((x < 0, "input < 0"), (x > 0, "input > 0"))]
    found = [f for f in found if f]
    if len(found) == 1 and not found[0].startswith(SOME_SIDE):
        return found
    if (several := mistakes_in(yours, g, candidates)) is not None:
        return named(several)
    if len(found) == 1:  # right on one side only, and no usual mistake (or two) explains the other
        return found
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
    return f"{SOME_SIDE}{name}: check the slope on that side."


SOME_SIDE = "Your backward is right except where "


def _diagnose_many(xs, g, grads, slopes) -> list[str]:
    names = ["a", "b", "c"]
    right = [g * d for d in slopes]
    if len(grads) == 2 and same(grads[0], right[1]) and same(grads[1], right[0]):
        return ["The two gradients are swapped: return them in the order of forward's inputs, a's first."]
    out = []
    for k, yours in enumerate(grads):
        n = names[k]
        if yours is None:
            out.append(f"Your backward returned None for {n}, but {n} needs a gradient here.")
            continue
        if same(yours, right[k]):
            continue
        itself = Mistake(f"The gradient for {n} uses {n} itself; ∂(a·b)/∂{n} is the *other* input.",
                         f"it uses {n} itself, where ∂(a·b)/∂{n} is the *other* input.")
        other = Mistake(f"The gradient for {n} is the one that belongs to another input: are they swapped?",
                        "it is the one that belongs to another input.")
        candidates = [(None, slopes[k]), (itself, xs[k]), *((other, d) for j, d in enumerate(slopes) if j != k)]
        forgot = Mistake(f"The gradient for {n} forgot grad_output: multiply it in (the chain rule).",
                         "it forgot grad_output: multiply it in (the chain rule).")
        found = mistakes_in(yours, g, candidates, forgetting=forgot)
        if found == [SIGN]:
            out.append(f"The gradient for {n} has the wrong sign: it is minus the right one.")
        elif found is not None:
            out.extend(named(found, n))
        else:
            out.append(f"The gradient for {n} is wrong.")
    return out or ["Your backward does not match the slope of your forward."]
