"""Judge a student's Function against a challenge: gradcheck, both Jacobians, the forward against the
built-in, the kinks apart, and the verdict in words. Runs inside the sandbox (``sandbox.py``).

Convention: ``J[i, j] = d output_i / d input_j`` (rows are outputs); both Jacobians come from
``gradcheck.jacobians``. Why a failing backward fails, in words, is ``diagnosis.py``.
"""

from __future__ import annotations

import time
import warnings
import weakref
from dataclasses import dataclass, field

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ..gradcheck import jacobians
from .challenges import CHALLENGES, Challenge
from .diagnosis import backward_of, diagnose, reference_slope, varied_grad_output
from .sandbox import Busy, Sandbox, SandboxError, shared_sandbox
from .validator import Refused, explain_error, load, validate

N_POINTS = 8
EPS, ATOL, RTOL = 1e-6, 1e-5, 1e-3
MARGIN = 0.1  # how far the checked points stay from a kink
CLOSE = {"rtol": 1e-4, "atol": 1e-6}


@dataclass(frozen=True)
class Kink:
    """What happens at a point with no single slope: both one-sided slopes, yours, and PyTorch's choice."""

    x: float
    left: float
    right: float
    yours: float | None
    torch_value: float


@dataclass(frozen=True)
class Verdict:
    """Everything the lesson shows about one submission (plain data: it crosses the process boundary)."""

    challenge: str
    passed: bool
    headline: str
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    error_line: int | None = None
    gradcheck_passed: bool | None = None
    forward_ok: bool | None = None
    input_labels: tuple[str, ...] = ()
    output_labels: tuple[str, ...] = ()
    analytical: np.ndarray | None = None
    numerical: np.ndarray | None = None
    mismatch: np.ndarray | None = None
    kinks: tuple[Kink, ...] = ()
    curve: dict = field(default_factory=dict)  # x, yours, reference, slope, reference_slope (one-input only)
    cost: tuple[float, float] | None = None  # bytes and seconds per element of one forward + backward (training)
    checks: tuple[tuple[str, bool, str], ...] = ()  # lesson 8: each check's name, verdict and what it found


def refused(challenge: str, exc: Refused) -> Verdict:
    return Verdict(challenge, False, "Your code was not run.", (str(exc),), error_line=exc.line)


def check_points(c: Challenge) -> list[torch.Tensor]:
    """``N_POINTS`` float64 points per input, spread over the domain and at least MARGIN off every kink."""
    lo, hi = c.domain
    g = torch.Generator().manual_seed(7)
    inputs = []
    for _ in range(c.n_inputs):
        x = torch.linspace(lo + 0.2, hi - 0.3, N_POINTS, dtype=torch.float64)
        x = x + (torch.rand(N_POINTS, generator=g, dtype=torch.float64) - 0.5) * 0.3
        for k in c.kinks:
            near = (x - k).abs() < MARGIN
            x = torch.where(near, k + MARGIN * torch.where(x >= k, 1.0, -1.0).double(), x)
        inputs.append(x)
    return inputs


def judge(source: str, key: str) -> Verdict:
    """The whole check. Errors raised by the student's code become a message with its line number."""
    c = CHALLENGES[key]
    try:
        fn = load(source, c.n_inputs)
    except Refused as exc:
        return refused(key, exc)
    try:
        return run_checks(fn, c)
    except Exception as exc:  # the student's code raised; say where, never show our stack
        line, text = explain_error(exc)
        return Verdict(key, False, "Your code raised an error.", (text,), error_line=line)


def run_checks(fn, c: Challenge) -> Verdict:
    """gradcheck, both Jacobians, the forward against the built-in, the diagnosis, the kinks and the curve."""
    xs = check_points(c)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        passed = torch.autograd.gradcheck(fn.apply, tuple(x.clone().requires_grad_() for x in xs), eps=EPS, atol=ATOL,
                                          rtol=RTOL, raise_exception=False)
    analytical, numerical = jacobians(fn.apply, xs, EPS)
    mismatch = np.abs(analytical - numerical) > ATOL + RTOL * np.abs(numerical)
    forward_ok, forward_note = _compare_forward(fn, c, xs)
    reasons = [] if passed else diagnose(fn, c, xs)
    notes = [*([] if forward_ok else [forward_note]), *_needs_input_grad(fn, c, xs), *_in_place_note(fn, c, xs)]
    ok = bool(passed) and forward_ok and not (c.n_inputs > 1 and notes)
    training, cost = training_checks(fn, c) if ok and c.n_inputs == 1 else ([], None)
    headline = ("gradcheck passed and the forward matches " + c.reference_name + "." if ok and not training else
                "gradcheck passed, but your Function does not work at the size and dtype training uses." if ok else
                "gradcheck failed: your backward does not match the slope of your forward." if not passed else
                "gradcheck passed, but the Function is not finished yet.")
    ok, reasons = ok and not training, [*reasons, *training]
    names = ["x"] if c.n_inputs == 1 else ["a", "b", "c"][:c.n_inputs]
    return Verdict(
        c.key, ok, headline, tuple(reasons), tuple(notes), gradcheck_passed=bool(passed), forward_ok=forward_ok,
        input_labels=tuple(f"{n}[{j}]={v:.2f}" for n, x in zip(names, xs, strict=True)
                           for j, v in enumerate(x.tolist())),
        output_labels=tuple(f"out[{i}]" for i in range(N_POINTS)), analytical=analytical, numerical=numerical,
        mismatch=mismatch, kinks=tuple(_kinks(fn, c)), curve=_curve(fn, c) if c.n_inputs == 1 else {}, cost=cost)


TRAINING_SHAPE = (1024, 64)  # lesson 5's 32 x 32 grid through 64 units; lesson 2's default N x H is 6,400
COST_SHAPE = (1024, 1024)  # big enough that its memory shows in the peak RSS


def training_checks(fn, c: Challenge) -> tuple[list[str], tuple[float, float] | None]:
    """Run the Function as lessons 2 and 5 will: a batch of the size training uses, in float32 (training's
    dtype) and float64 (gradcheck's), against the built-in op and against itself. Returns what is wrong, and
    what one forward + backward costs per element (bytes at its peak, seconds) for the run's budget."""
    lo, hi = c.domain
    x64 = torch.rand(TRAINING_SHAPE, generator=torch.Generator().manual_seed(11), dtype=torch.float64)
    x64 = lo + (hi - lo) * x64
    results, reasons = {}, []
    for dtype in (torch.float32, torch.float64):
        x = x64.to(dtype, copy=True).requires_grad_()
        y = fn.apply(x)
        name = str(dtype).removeprefix("torch.")
        if not isinstance(y, torch.Tensor) or y.shape != x.shape or y.dtype != dtype:
            got = f"{tuple(y.shape)}, {y.dtype}" if isinstance(y, torch.Tensor) else type(y).__name__
            reasons.append(f"In {name}, on a batch of shape {TRAINING_SHAPE}, your forward returns {got}; it must "
                           f"return the input's shape and dtype.")
            continue
        (grad,) = torch.autograd.grad(y, x, torch.ones_like(y), allow_unused=True)
        results[name] = (y.detach(), grad)
        reasons += _against_reference(c, x.detach(), y.detach(), grad, name)
    if len(results) == 2 and not reasons:
        (y32, _), (y64, _) = results["float32"], results["float64"]
        if not torch.allclose(y32.double(), y64, rtol=1e-3, atol=1e-4):
            j = int((y32.double() - y64).abs().argmax())
            reasons.append(f"Your forward gives different answers in float32, which training uses, and float64, "
                           f"which gradcheck uses: at input {x64.view(-1)[j].item():.4g}, float32 gives "
                           f"{y32.view(-1)[j].item():.4g} and float64 {y64.view(-1)[j].item():.4g}.")
    return reasons, (None if reasons else _cost(fn, c))


def _against_reference(c: Challenge, x, y, grad, name: str) -> list[str]:
    ref_x = x.clone().requires_grad_()
    ref = c.reference(ref_x)
    (ref_grad,) = torch.autograd.grad(ref, ref_x, torch.ones_like(ref))
    tol = {"rtol": 1e-3, "atol": 1e-4} if name == "float32" else CLOSE
    for what, yours, want in (("forward", y, ref.detach()), ("backward", grad, ref_grad)):
        if yours is None or yours.shape != want.shape or not torch.allclose(yours, want, **tol):
            if yours is None or yours.shape != want.shape:
                return [f"In {name}, on a batch of shape {TRAINING_SHAPE}, your {what} returns no gradient of "
                        "the input's shape."]
            j = int((yours - want).abs().argmax())
            at, a, b = same_precision(x.view(-1)[j].item(), yours.view(-1)[j].item(), want.view(-1)[j].item())
            return [f"In {name}, on a batch of shape {TRAINING_SHAPE} (training's size), your {what} differs from "
                    f"{c.reference_name}'s: at input {at} it gives {a}, {c.reference_name} gives {b}."]
    return []


def _cost(fn, c: Challenge) -> tuple[float, float]:
    """Bytes and seconds per element of one float32 forward + backward on COST_SHAPE: the peak its tensors
    hold at once, and the time."""
    lo, hi = c.domain
    x = (lo + (hi - lo) * torch.rand(COST_SHAPE)).requires_grad_()
    with _Allocations() as made:
        y = fn.apply(x)
        torch.autograd.grad(y, x, torch.ones_like(y), allow_unused=True)
    t0 = time.perf_counter()  # timed apart: the counting costs time of its own
    y = fn.apply(x)
    torch.autograd.grad(y, x, torch.ones_like(y), allow_unused=True)
    seconds = time.perf_counter() - t0
    return max(16.0, made.bytes / x.numel()), max(1e-9, seconds / x.numel())


class _Allocations(TorchDispatchMode):
    """The peak bytes held at once by the tensors that the operations inside it return (each counted from
    the operation that makes it until it is freed)."""

    def __init__(self) -> None:
        super().__init__()
        self.live = self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor) and not t._is_view():
                size = t.numel() * t.element_size()
                self.live += size
                self.bytes = max(self.bytes, self.live)
                weakref.finalize(t, self._free, size)
        return out

    def _free(self, size: int) -> None:
        self.live -= size


def same_precision(x: float, yours: float, want: float) -> tuple[str, str, str]:
    """The input and the two answers at one precision, with enough digits that the answers read differently:
    "at input -2.87 it gives -2.866" read as a mismatch that only rounding made."""
    digits = next((d for d in range(4, 13) if f"{yours:.{d}g}" != f"{want:.{d}g}"), 12)
    return f"{x:.{digits}g}", f"{yours:.{digits}g}", f"{want:.{digits}g}"


def _compare_forward(fn, c: Challenge, xs) -> tuple[bool, str]:
    with torch.no_grad():
        yours, ref = fn.apply(*xs), c.reference(*xs)
    if not isinstance(yours, torch.Tensor) or yours.shape != ref.shape:
        shape = tuple(yours.shape) if isinstance(yours, torch.Tensor) else type(yours).__name__
        return False, f"Your forward returns {shape}; {c.reference_name} returns shape {tuple(ref.shape)}."
    if torch.allclose(yours, ref, **CLOSE):
        return True, ""
    j = int((yours - ref).abs().argmax())
    x, a, b = same_precision(xs[0][j].item(), yours[j].item(), ref[j].item())
    return False, (f"Your forward differs from {c.reference_name}: at input {x} it gives {a}, "
                   f"{c.reference_name} gives {b}.")


def _needs_input_grad(fn, c: Challenge, xs) -> list[str]:
    """With several inputs, one that needs no gradient must get None, not a computed gradient."""
    if c.n_inputs < 2:
        return []
    seen = []

    def backward(ctx, grad_output):
        result = fn.backward(ctx, grad_output)
        seen.append(result)
        return result

    spy = type("Spy", (torch.autograd.Function,), {"forward": staticmethod(fn.forward),
                                                   "backward": staticmethod(backward)})
    a = xs[0].clone().requires_grad_()
    spy.apply(a, *xs[1:]).sum().backward()
    returned = seen[0] if seen else None
    if not isinstance(returned, tuple) or len(returned) != c.n_inputs:
        return [f"backward must return {c.n_inputs} values, one per input of forward."]
    extra = [n for n, r in zip(["a", "b", "c"][1:], returned[1:], strict=False) if r is not None]
    if extra:
        return [f"When only a needs a gradient, ctx.needs_input_grad is (True, False), yet your backward still "
                f"computed one for {', '.join(extra)}: check `ctx.needs_input_grad[i]` and return None there."]
    return []


def _in_place_note(fn, c: Challenge, xs) -> list[str]:
    g = varied_grad_output(xs[0].numel())
    kept = g.clone()
    backward_of(fn, xs, g)
    if not torch.equal(g, kept):
        return ["Your backward changed grad_output in place. Autograd may still need it: `.clone()` it first."]
    return []


def _kinks(fn, c: Challenge) -> list[Kink]:
    out = []
    for k in c.kinks:
        x = torch.tensor([k], dtype=torch.float64)
        h = 1e-4
        with torch.no_grad():
            left = ((fn.apply(x) - fn.apply(x - h)) / h).item()
            right = ((fn.apply(x + h) - fn.apply(x)) / h).item()
        (g,) = backward_of(fn, [x], torch.ones(1, dtype=torch.float64))
        (t,) = reference_slope(c, [x])
        out.append(Kink(k, left, right, None if g is None else g.item(), t.item()))
    return out


CURVE_GRAD_OUTPUT = 2.0  # not 1, so a backward that forgets grad_output shows on the curve


def _curve(fn, c: Challenge) -> dict:
    """Forward, and backward with grad_output = 2 (twice the slope), on a grid: yours and the reference's."""
    lo, hi = c.domain
    x = torch.linspace(lo, hi, 121, dtype=torch.float64)
    with torch.no_grad():
        yours, ref = fn.apply(x), c.reference(x)
    (slope,) = backward_of(fn, [x], torch.full_like(x, CURVE_GRAD_OUTPUT))
    ref_slope = CURVE_GRAD_OUTPUT * reference_slope(c, [x])[0]
    if not isinstance(yours, torch.Tensor) or yours.shape != x.shape or slope is None or slope.shape != x.shape:
        return {}
    return {"x": x.numpy(), "yours": yours.numpy(), "reference": ref.numpy(), "slope": slope.detach().numpy(),
            "reference_slope": ref_slope.numpy()}


def check(source: str, key: str, sandbox: Sandbox | None = None, owner: str | None = None) -> Verdict:
    """Validate here (a refusal runs nothing), then judge in the sandbox under its limits, taking turns with
    other ``owner``s (browser sessions)."""
    c = CHALLENGES[key]
    try:
        validate(source, c.n_inputs)
    except Refused as exc:
        return refused(key, exc)
    return in_sandbox(judge, source, key, sandbox, owner)


def in_sandbox(task, source: str, key: str, sandbox: Sandbox | None = None, owner: str | None = None) -> Verdict:
    """``task(source, key)``, a judge, run in the sandbox: its verdict, or one that says why it did not run."""
    try:
        return (sandbox or shared_sandbox()).run(task, source, key, owner=owner)
    except Busy as exc:
        return Verdict(key, False, "Your code was not checked this time.", (str(exc),))
    except SandboxError as exc:
        return Verdict(key, False, "Your code was stopped.", (str(exc),))
