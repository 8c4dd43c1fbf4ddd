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


def no_gradient(dead: tuple[float, ...], widths: tuple[int, ...], pinned: float, pinned_wrong: float,
                train_loss: float, train_accuracy: float, test_accuracy: float, activation: str) -> str:
    """Why a run whose last step gave every weight a gradient of exactly 0 has stopped, in words, with its numbers:
    the dead units of each hidden layer (``dead``: their shares, of ``widths`` units), the training points whose
    output is pinned at exactly 0 or 1 (``pinned``; ``pinned_wrong``: those on the wrong side), and what that
    leaves of the loss and the accuracies. For a classifier; a regression's output is never pinned (pass 0)."""
    layers = [f"{round(share * width)} of the {width} units of layer {i + 1}" for i, (share, width)
              in enumerate(zip(dead, widths, strict=True)) if share > 0]
    one = len(layers) == 1 and layers[0].startswith("1 of")
    parts = [f"{' and '.join(layers)} {'is' if one else 'are'} dead ({activation} gives {'it' if one else 'them'} "
             "the same output for every training point)"] if layers else []
    if pinned > 0:
        parts.append(f"the output's sigmoid is pinned at exactly 0 or 1 for {pinned:.0%} of the training points, "
                     "where its slope is exactly 0")
    why = f": {'; and '.join(parts)}" if parts else ""
    chance = ", about what answering one class everywhere gets" if abs(train_accuracy - 0.5) < 0.1 else ""
    text = (f"The last step gave every weight a gradient of exactly 0{why}. While no gradient reaches the weights "
            f"they cannot learn, so the accuracy stays at {train_accuracy:.1%} of the training points right (test "
            f"{test_accuracy:.1%}){chance}.")
    if pinned_wrong > 0:  # BCE takes log(0) as -100 (PyTorch's clamp): a point pinned at the wrong end costs 100
        text += (f" The {pinned_wrong:.0%} of training points pinned at the wrong answer cost the BCE its cap of 100 "
                 f"each (PyTorch clamps log 0 to −100): {100 * pinned_wrong:.3g} of the train loss of "
                 f"{train_loss:.3g}.")
    return text
