"""One forward and one backward of a registry Function, with everything ctx held along the way."""

from __future__ import annotations

from dataclasses import dataclass

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
                         flat(grad_input), flat(ref_out), flat(ref_grad))
