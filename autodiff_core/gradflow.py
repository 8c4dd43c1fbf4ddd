"""Gradient flow through an MLP: how large each layer's gradient is, and how many of its units are dead.

A class watches these beside the loss. With sigmoid units at depth 6 the first layers' gradients are
orders of magnitude smaller than the last one's (vanishing gradients); with ReLU at a large learning rate
whole layers stop passing anything back (dead units).
"""

from __future__ import annotations

import torch


def weight_grad_norms(weights: list[torch.Tensor]) -> torch.Tensor:
    """``(L,)`` the 2-norm of each layer's weight gradient, first layer first, on the device.

    One fused call for all layers (what ``clip_grad_norm_`` uses) and no host sync: the caller reads them
    with the rest of a snapshot.
    """
    return torch.stack(torch._foreach_norm([w.grad for w in weights]))


def dead_fractions(hidden: list[torch.Tensor], *, points_dim: int = 0) -> torch.Tensor:
    """``(L-1,)`` per hidden layer, the fraction of its units that give the same output for every point.

    ``hidden[i]`` is layer i's activations ``(n, width)`` over a data set, or ``(width, n)`` with
    ``points_dim=1``. A unit whose output never changes (for ReLU: 0 everywhere) passes no gradient back,
    whatever the loss: it is dead.
    """
    if not hidden:
        return torch.zeros(0)
    units_dim = 1 - points_dim
    lo, hi = torch.cat(hidden, units_dim).aminmax(dim=points_dim)  # every layer's units at once
    constant = (lo == hi).to(lo.dtype)
    return torch.stack([c.mean() for c in constant.split([h.shape[units_dim] for h in hidden])])
