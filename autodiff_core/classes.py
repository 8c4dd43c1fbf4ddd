"""Lesson 5 with 3 to 6 classes: the network ends in ``MySoftmax`` (``functions.py``) and learns by cross-entropy.

Two classes keep TF Playground's single sigmoid output and binary cross-entropy; from three on, the last layer
has one logit per class, ``MySoftmax`` turns them into probabilities, and the loss is the mean of
``-log p[target]``. With the softmax written by hand, that is what ``F.cross_entropy`` computes from the logits
(tests/engine/test_softmax.py trains both side by side).

The decision surface of many classes is one number per grid point: ``class + strength``, the class the network
picks and how sure it is (0: every class as likely, just under 1: certain), which the figures colour.
"""

from __future__ import annotations

import torch

from .functions import MySoftmax

MAX_CLASSES = 6  # as many as the palette has colour-blind-safe colours to tell apart
STRENGTH_TOP = 0.999  # a surface value's strength stays below 1, so its whole part is its class


def cross_entropy(p: torch.Tensor, target: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
    """In: ``p`` (n, classes) probabilities (MySoftmax's output), ``target`` (n,) class numbers (long). Out: the
    cross-entropy, ``-log p[target]`` per point, averaged (or per point, ``reduction="none"``).

    ``p`` is kept from 0 by the dtype's smallest normal number: a class given probability 0 (float32 runs out
    below about 1e-38) then costs about 87 (float32) instead of infinity. Above it nothing changes."""
    picked = p.gather(-1, target[:, None]).squeeze(-1)  # (n,) the probability of each point's own class
    loss = -picked.clamp_min(torch.finfo(p.dtype).tiny).log()
    return loss.mean() if reduction == "mean" else loss


def jacobian_formula(y: torch.Tensor) -> torch.Tensor:
    """The softmax's Jacobian from its output ``y`` (classes,): ``diag(y) - y yᵀ``, that is y_i (1 - y_i) on the
    diagonal and -y_i y_j off it."""
    return torch.diag(y) - torch.outer(y, y)


def jacobians(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The Jacobian of the softmax at ``logits`` (classes,), twice: through ``MySoftmax``'s backward and through
    ``torch.softmax``'s, each built by ``torch.autograd.functional.jacobian`` one row at a time."""
    def ours(z):
        return MySoftmax.apply(z)

    def theirs(z):
        return torch.softmax(z, -1)

    return (torch.autograd.functional.jacobian(ours, logits),
            torch.autograd.functional.jacobian(theirs, logits))


def surface_values(p: torch.Tensor) -> torch.Tensor:
    """(classes, n) probabilities -> (n,) ``class + strength``: the class picked (the largest probability) and
    its strength, ``(p_max - 1/K) / (1 - 1/K)`` kept under 1 (0 when every class is as likely)."""
    k = p.shape[0]
    top, picked = p.max(0)
    strength = ((top - 1 / k) / (1 - 1 / k)).clamp(0, STRENGTH_TOP)
    return picked.to(p.dtype) + strength


def discrete(value: float) -> float:
    """A surface value made certain: the class it picks at full strength (TF's "Discretize output")."""
    return int(value) + STRENGTH_TOP
