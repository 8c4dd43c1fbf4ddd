"""Gradcheck helpers: run ``torch.autograd.gradcheck`` on a registry Function and return a report
with both Jacobians, ready to draw.

Convention used everywhere here: ``J[i, j] = d output_i / d input_j`` (rows are outputs).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .broken import ReLUMaskFromGradOutput, ReLUNoChainRule
from .functions import FUNCTIONS, FunctionSpec

MAX_POINTS = 64


@dataclass(frozen=True)
class GradcheckReport:
    """What gradcheck concluded, and the evidence: the analytical and numerical Jacobians."""

    name: str
    passed: bool  # torch.autograd.gradcheck's verdict
    gradgrad_passed: bool | None  # gradgradcheck's verdict; None when not run
    max_abs_error: float  # largest |analytical - numerical| over the Jacobian
    worst: tuple[int, int]  # (output, input) index of that largest error
    input: np.ndarray  # (n,) the points checked
    analytical: np.ndarray  # (n, n) from the Function's backward
    numerical: np.ndarray  # (n, n) from central finite differences of forward
    mismatch: np.ndarray  # (n, n) bool: entries outside atol + rtol * |numerical|
    near_kink: tuple[int, ...]  # inputs closer than eps to a point where the function has no slope
    dtype: str
    message: str
    missed: str = ""  # when a known-broken backward passed: why gradcheck could not see the bug here


def sample_input(spec: FunctionSpec, n: int = 8, seed: int = 0, *, keep_off_kinks: bool = True,
                 margin: float = 0.05) -> torch.Tensor:
    """``n`` float64 points spread over the Function's domain, pushed at least ``margin`` off kinks."""
    if not 1 <= n <= MAX_POINTS:
        raise ValueError(f"n must be between 1 and {MAX_POINTS}, not {n}.")
    g = torch.Generator().manual_seed(seed)
    lo, hi = spec.domain
    x = torch.rand(n, generator=g, dtype=torch.float64) * (hi - lo) + lo
    if keep_off_kinks:
        for k in spec.kinks:
            close = (x - k).abs() < margin
            x = torch.where(close, k + margin * torch.where(x >= k, 1.0, -1.0).to(x.dtype), x)
    return x


def jacobians(apply, xs: Sequence[torch.Tensor], eps: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Analytical Jacobian (one backward per output) and central-difference numerical Jacobian, in float64.

    ``apply`` takes the tensors ``xs``; with several inputs their columns sit side by side, ``xs[0]``'s
    first. Lesson 1's report and lesson 6's judge both draw these.
    """
    return _analytical(apply, xs).numpy(), _numerical(apply, xs, eps).numpy()


def _analytical(apply, xs: Sequence[torch.Tensor]) -> torch.Tensor:
    """Row i: the gradients backward returns for a grad_output that is 1 at output i and 0 elsewhere."""
    leaves = [x.detach().clone().requires_grad_(True) for x in xs]
    y = apply(*leaves).reshape(-1)
    analytical = torch.zeros(y.numel(), sum(x.numel() for x in xs), dtype=torch.float64)
    for i in range(y.numel()):
        grad_output = torch.zeros_like(y)
        grad_output[i] = 1.0
        rows = torch.autograd.grad(y, leaves, grad_output, retain_graph=True, allow_unused=True)
        analytical[i] = torch.cat([torch.zeros(x.numel(), dtype=torch.float64) if row is None
                                   else row.detach().reshape(-1).double() for row, x in zip(rows, xs, strict=True)])
    return analytical


def _numerical(apply, xs: Sequence[torch.Tensor], eps: float) -> torch.Tensor:
    """Column j: (forward(x + eps at input j) - forward(x - eps at input j)) / (2 eps)."""
    columns = []
    with torch.no_grad():
        for k, x in enumerate(xs):
            flat = x.detach().reshape(-1)
            for j in range(flat.numel()):
                plus, minus = flat.clone(), flat.clone()
                plus[j] += eps
                minus[j] -= eps
                shifted = [_replaced(xs, k, v.reshape(x.shape)) for v in (plus, minus)]
                diff = apply(*shifted[0]) - apply(*shifted[1])
                columns.append(diff.reshape(-1).double() / (2 * eps))
    return torch.stack(columns, dim=1)


def _replaced(xs: Sequence[torch.Tensor], k: int, x: torch.Tensor) -> list[torch.Tensor]:
    """``xs`` with input ``k`` replaced by ``x``."""
    return [x if i == k else other for i, other in enumerate(xs)]


def _run_check(check, apply, inputs, **kwargs) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # non-double inputs warn; the report says so instead
        try:
            return bool(check(apply, inputs, raise_exception=False, **kwargs))
        except RuntimeError:
            return False


def gradcheck_report(name: str, x: torch.Tensor | None = None, *, eps: float = 1e-6, atol: float = 1e-5,
                     rtol: float = 1e-3, gradgrad: bool = False) -> GradcheckReport:
    """Run gradcheck on the registry Function ``name`` at points ``x`` (default: 8 points off kinks)."""
    spec = FUNCTIONS.get(name)
    if spec is None:
        raise ValueError(f"Unknown Function {name!r}; choose one of: {', '.join(FUNCTIONS)}.")
    x = sample_input(spec) if x is None else x.detach().reshape(-1)
    if not 1 <= x.numel() <= MAX_POINTS:
        raise ValueError(f"gradcheck_report takes 1 to {MAX_POINTS} points, not {x.numel()}.")
    xg = x.clone().requires_grad_(True)
    passed = _run_check(torch.autograd.gradcheck, spec.apply, (xg,), eps=eps, atol=atol, rtol=rtol)
    gg = _run_check(torch.autograd.gradgradcheck, spec.apply, (xg,), eps=eps, atol=atol, rtol=rtol) \
        if gradgrad else None
    analytical, numerical = jacobians(spec.apply, [x], eps)
    error = np.abs(analytical - numerical)
    worst = np.unravel_index(int(np.argmax(error)), error.shape)
    mismatch = error > atol + rtol * np.abs(numerical)
    near = tuple(int(j) for j, v in enumerate(x.tolist()) if any(abs(v - k) < eps for k in spec.kinks))
    return GradcheckReport(
        name=name, passed=passed, gradgrad_passed=gg, max_abs_error=float(error.max()),
        worst=(int(worst[0]), int(worst[1])), input=x.double().numpy(), analytical=analytical,
        numerical=numerical, mismatch=mismatch, near_kink=near, dtype=str(x.dtype).replace("torch.", ""),
        message=_explain(spec, x, passed, error, worst, near, x.dtype),
        missed=_missed(spec, x) if passed and not spec.correct else "",
    )


# Why gradcheck can pass a broken backward: it feeds one-hot grad_outputs (one 1, zeros elsewhere) at the
# points given, so a bug that needs a negative grad_output, or another point, never shows.
_BLIND_SPOTS = {
    ReLUMaskFromGradOutput: "gradcheck's grad_outputs are one-hot (a single 1, zeros elsewhere), never negative, so "
                            "a mask taken from grad_output < 0 never zeroes anything; and with every input "
                            "positive, ReLU's true gradient is grad_output itself. Add a negative point and it fails.",
    ReLUNoChainRule: "With every input negative, ReLU's true gradient is 0 whatever grad_output is, and so is "
                     "this backward's. Add a positive point and it fails.",
}


def _missed(spec: FunctionSpec, x: torch.Tensor) -> str:
    """What to say when gradcheck passes a Function we know is broken: a pass is not a proof."""
    why = _BLIND_SPOTS.get(spec.fn, "gradcheck only compares at the points given, and none of them exposes the bug.")
    return f"gradcheck passed, but this backward is wrong: {spec.summary} {why}"


def _name_points(x: torch.Tensor, which: tuple[int, ...]) -> str:
    """``x[1] = 0`` or ``x[1] = 0 and x[3] = 0``: each input by its element and value, as the charts label
    them, never a bare index that reads like a value."""
    names = [f"x[{j}] = {float(x[j]):g}" for j in which]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _explain(spec, x, passed, error, worst, near, dtype) -> str:
    if passed:
        return f"{spec.name}: backward matches finite differences (largest error {error.max():.2e})."
    i, j = worst
    parts = [f"{spec.name}: backward disagrees with finite differences; largest error {error.max():.3g}, "
             f"in d out[{i}] / d x[{j}]."]
    if near:
        parts.append(f"{'The input' if len(near) == 1 else 'The inputs'} {_name_points(x, near)} "
                     f"{'sits' if len(near) == 1 else 'sit'} on a kink, where the "
                     "function has no single slope: finite differences average the two sides, so even a correct "
                     "backward fails there.")
    if dtype != torch.float64:
        parts.append(f"The input is {str(dtype).replace('torch.', '')}: with eps = 1e-6 its rounding "
                     "error swamps the difference, so use float64.")
    if not spec.correct:
        parts.append(f"The bug: {spec.summary}")
    return " ".join(parts)
