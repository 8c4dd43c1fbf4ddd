"""One forward and one backward of a registry Function, with everything ctx held along the way."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .functions import FUNCTIONS


@dataclass(frozen=True)
class SavedTensor:
    shape: tuple[int, ...]
    dtype: str
    device: str
    values: list[float]


@dataclass(frozen=True)
class FunctionTrace:
    """What went in and out of ``forward`` and ``backward``, next to the built-in reference."""

    name: str
    input: list[float]
    output: list[float]  # forward's return value
    saved: list[SavedTensor]  # ctx.saved_tensors after forward
    needs_input_grad: tuple[bool, ...]  # ctx.needs_input_grad
    grad_output: list[float]  # fed into backward: dLoss/dOutput
    grad_input: list[float]  # returned by backward: dLoss/dInput
    reference_output: list[float]  # the built-in op's forward
    reference_grad_input: list[float]  # the built-in op's backward, same grad_output
    dtype: str = "float32"  # the dtype everything above was computed in


def trace_function(name: str, x: torch.Tensor, grad_output: torch.Tensor | None = None) -> FunctionTrace:
    """Run ``FUNCTIONS[name]`` forward on ``x`` and backward with ``grad_output`` (default: ones)."""
    spec = FUNCTIONS.get(name)
    if spec is None:
        raise ValueError(f"Unknown Function {name!r}; choose one of: {', '.join(FUNCTIONS)}.")
    x = x.detach()
    grad_output = torch.ones_like(x) if grad_output is None else grad_output.to(x.dtype)
    if grad_output.shape != x.shape:
        raise ValueError(f"grad_output must have the input's shape {tuple(x.shape)}, "
                         f"not {tuple(grad_output.shape)}.")
    leaf = x.clone().requires_grad_(True)
    out = spec.apply(leaf)
    ctx = out.grad_fn  # for a custom Function, the graph node *is* its ctx
    saved = [SavedTensor(tuple(t.shape), str(t.dtype).replace("torch.", ""), str(t.device),
                         t.detach().reshape(-1).tolist()) for t in ctx.saved_tensors]
    (grad_input,) = torch.autograd.grad(out, leaf, grad_output)
    ref_leaf = x.clone().requires_grad_(True)
    ref_out = spec.reference(ref_leaf)
    (ref_grad,) = torch.autograd.grad(ref_out, ref_leaf, grad_output)
    flat = lambda t: t.detach().reshape(-1).tolist()  # noqa: E731
    return FunctionTrace(name, flat(x), flat(out), saved, tuple(ctx.needs_input_grad), flat(grad_output),
                         flat(grad_input), flat(ref_out), flat(ref_grad), str(x.dtype).replace("torch.", ""))


_NUMPY = {"float16": np.float16, "float32": np.float32, "float64": np.float64}


def readable(value: float, dtype: str) -> str:
    """The shortest decimal that reads back as the same ``dtype`` number: 0.1 stored in float32 prints as
    0.1, not as the float64 expansion 0.10000000149011612."""
    kind = _NUMPY.get(dtype, np.float64)
    if value != 0 and not 1e-4 <= abs(value) < 1e6:
        return np.format_float_scientific(kind(value), unique=True, trim="-")
    return np.format_float_positional(kind(value), unique=True, trim="-")


def rounded(value: float, dtype: str) -> float:
    """``readable`` as a number, for tables that sort and align numbers."""
    return float(readable(value, dtype))


def inspector_table(t: FunctionTrace) -> dict[str, list[str]]:
    """What went in and out of forward and backward, one row per step and one column per element."""
    rows = {"input x": t.input, "forward returns": t.output,
            **{f"ctx.saved_tensors[{i}]": s.values for i, s in enumerate(t.saved)},
            "grad_output (fed in)": t.grad_output, "backward returns grad_input": t.grad_input}
    return {"step": list(rows), **{f"x[{j}]": [readable(v[j], t.dtype) for v in rows.values()]
                                   for j in range(len(t.input))}}


# torch.testing.assert_close's defaults: a few units in the last place of each dtype
TOLERANCES = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


@dataclass(frozen=True)
class Agreement:
    """Forward and backward of a Function against its built-in, each within the dtype's tolerance."""

    forward_ok: bool
    backward_ok: bool
    forward_diff: float  # largest |ours - built-in| over the outputs
    backward_diff: float  # the same over grad_input
    rtol: float
    atol: float
    dtype: str
    at_kinks_only: bool = False  # the backwards differ only at inputs on a kink, where no one slope is right


def compare_to_reference(t: FunctionTrace, kinks: tuple[float, ...] = ()) -> Agreement:
    """Compare forward outputs and grad_inputs with ``torch.allclose`` at the dtype's tolerance:
    exact equality would call a correct float32 backward wrong over a rounding difference of 3e-8."""
    rtol, atol = TOLERANCES.get(t.dtype, TOLERANCES["float64"])

    def check(ours: list[float], ref: list[float]) -> tuple[bool, float]:
        a, b = torch.tensor(ours, dtype=torch.float64), torch.tensor(ref, dtype=torch.float64)
        return bool(torch.allclose(a, b, rtol=rtol, atol=atol)), float((a - b).abs().max()) if len(ours) else 0.0

    fwd_ok, fwd = check(t.output, t.reference_output)
    bwd_ok, bwd = check(t.grad_input, t.reference_grad_input)
    off = [i for i, x in enumerate(t.input) if x not in kinks]
    at_kinks = not bwd_ok and check([t.grad_input[i] for i in off], [t.reference_grad_input[i] for i in off])[0]
    return Agreement(fwd_ok, bwd_ok, fwd, bwd, rtol, atol, t.dtype, at_kinks)
