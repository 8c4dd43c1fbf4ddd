"""Lesson 7's five optimizers, each update written by hand: what ``torch.optim``'s ``step()`` does to one
parameter, line for line, in the same order of operations, so that the two agree bit for bit (the tests hold
them to ``torch.equal`` on every step, in float32 and float64).

Each update gets the weights ``w`` (2,) and their gradient ``g`` (2,) under ``torch.no_grad()`` and changes
``w`` in place. Its state (a velocity, running averages) lives on the object, as ``optimizer.state[p]`` does.
``OPTIMIZERS`` names each one with the ``torch.optim`` call it reproduces (``twin``). The twins are built with
``foreach=False``: the per-tensor loop that torch runs on the CPU by default, and that these updates mirror
(a GPU's default, ``foreach``, groups the same arithmetic by tensor lists).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

ALPHA = 0.99  # RMSprop's smoothing constant (torch.optim.RMSprop's default)
BETAS = (0.9, 0.999)  # Adam's β1 and β2 (torch.optim.Adam's defaults)
EPS = 1e-8  # both add it to the root mean square, so that a zero gradient never divides by zero


class SGD:
    """Plain gradient descent: step downhill, in proportion to the slope.  w ← w − lr·g"""

    def __init__(self, lr: float, momentum: float = 0.0) -> None:
        self.lr = lr

    def step(self, w: torch.Tensor, g: torch.Tensor) -> None:
        w.add_(g, alpha=-self.lr)  # w -= lr * g, rounded once, as torch.optim does


class Momentum:
    """The heavy ball: a velocity that keeps a memory of past gradients.  v ← β·v + g;  w ← w − lr·v

    In a narrow valley the gradients across it alternate in sign and cancel in v, while those along it add
    up: the ball speeds up where the slope is gentle but steady. Too much β and it overshoots."""

    def __init__(self, lr: float, momentum: float) -> None:
        self.lr, self.beta = lr, momentum
        self.velocity: torch.Tensor | None = None  # (2,), optimizer.state[p]["momentum_buffer"]

    def step(self, w: torch.Tensor, g: torch.Tensor) -> None:
        if self.beta == 0:  # no memory: plain SGD (torch.optim keeps no velocity then either)
            w.add_(g, alpha=-self.lr)
            return
        self.velocity = velocity_after(self.velocity, g, self.beta)
        w.add_(self.velocity, alpha=-self.lr)  # w -= lr * v


class Nesterov(Momentum):
    """Momentum that looks ahead: the step is the gradient plus β times the new velocity, the direction the
    ball is about to take.  v ← β·v + g;  w ← w − lr·(g + β·v)

    It brakes before the far wall of a valley, so it overshoots less than plain momentum."""

    def step(self, w: torch.Tensor, g: torch.Tensor) -> None:
        if self.beta == 0:  # no memory, nothing to look ahead with: plain SGD
            w.add_(g, alpha=-self.lr)
            return
        self.velocity = velocity_after(self.velocity, g, self.beta)
        look_ahead = g.add(self.velocity, alpha=self.beta)  # (2,) g + β v
        w.add_(look_ahead, alpha=-self.lr)  # w -= lr * (g + β v)


def velocity_after(velocity: torch.Tensor | None, g: torch.Tensor, beta: float) -> torch.Tensor:
    """The velocity after this gradient: the gradient itself on the first step (torch.optim's choice, not
    β·0 + g), then β·v + g in place."""
    if velocity is None:
        return g.detach().clone()  # (2,)
    return velocity.mul_(beta).add_(g)  # v = β v + g


class RMSprop:
    """Each weight gets its own step size: divide by the root of a running mean of its squared gradients.
    s ← α·s + (1 − α)·g²;  w ← w − lr·g / (√s + ε)

    A steep direction (large gradients) gets small steps, a gentle one large steps: the step is about lr
    in every weight, whatever the slope. s starts at 0 and is not corrected for it, so the first step is
    lr/√(1 − α) = 10·lr."""

    def __init__(self, lr: float, momentum: float = 0.0) -> None:
        self.lr = lr
        self.square_avg: torch.Tensor | None = None  # (2,), optimizer.state[p]["square_avg"]

    def step(self, w: torch.Tensor, g: torch.Tensor) -> None:
        if self.square_avg is None:
            self.square_avg = torch.zeros_like(w)
        self.square_avg.mul_(ALPHA).addcmul_(g, g, value=1 - ALPHA)  # s = α s + (1 − α) g²
        rms = self.square_avg.sqrt().add_(EPS)  # (2,) √s + ε: each weight's typical gradient
        w.addcdiv_(g, rms, value=-self.lr)  # w -= lr * g / (√s + ε)


class Adam:
    """Momentum and RMSprop together, with both running means corrected for starting at 0.
    m ← β1·m + (1 − β1)·g;  v ← β2·v + (1 − β2)·g²;  w ← w − lr/(1 − β1ᵗ) · m / (√(v/(1 − β2ᵗ)) + ε)"""

    def __init__(self, lr: float, momentum: float = 0.0) -> None:
        self.lr, self.t = lr, 0
        self.exp_avg: torch.Tensor | None = None  # (2,) m, the running mean of g
        self.exp_avg_sq: torch.Tensor | None = None  # (2,) v, the running mean of g²

    def step(self, w: torch.Tensor, g: torch.Tensor) -> None:
        beta1, beta2 = BETAS
        if self.exp_avg is None:
            self.exp_avg, self.exp_avg_sq = torch.zeros_like(w), torch.zeros_like(w)
        self.t += 1
        self.exp_avg.lerp_(g, 1 - beta1)  # m = m + (1 − β1)(g − m) = β1 m + (1 − β1) g
        self.exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)  # v = β2 v + (1 − β2) g²
        # bias corrections: m and v start at 0, so early on they are too small by these factors
        correction1 = 1 - beta1 ** float(self.t)
        correction2 = 1 - beta2 ** float(self.t)
        denom = (self.exp_avg_sq.sqrt() / correction2 ** 0.5).add_(EPS)  # (2,) √(v / (1 − β2ᵗ)) + ε
        w.addcdiv_(self.exp_avg, denom, value=-(self.lr / correction1))  # w -= lr/(1 − β1ᵗ) * m / denom


@dataclass(frozen=True)
class OptimizerSpec:
    """One of the lesson's optimizers: its update by hand and the ``torch.optim`` call it reproduces."""

    name: str
    by_hand: Callable[[float, float], object]  # (lr, momentum) -> an object with step(w, g)
    twin: Callable[[torch.Tensor, float, float], torch.optim.Optimizer]  # (param, lr, momentum) -> torch's own
    torch_call: str  # the twin, as the page names it


def _sgd_twin(p: torch.Tensor, lr: float, momentum: float, nesterov: bool = False) -> torch.optim.Optimizer:
    # torch refuses nesterov=True without momentum; with none, Nesterov's update is plain SGD's anyway
    return torch.optim.SGD([p], lr=lr, momentum=momentum, nesterov=nesterov and momentum > 0, foreach=False)


OPTIMIZERS: dict[str, OptimizerSpec] = {spec.name: spec for spec in (
    OptimizerSpec("SGD", SGD, lambda p, lr, m: _sgd_twin(p, lr, 0.0), "torch.optim.SGD(lr)"),
    OptimizerSpec("Momentum", Momentum, _sgd_twin, "torch.optim.SGD(lr, momentum)"),
    OptimizerSpec("Nesterov", Nesterov, lambda p, lr, m: _sgd_twin(p, lr, m, nesterov=True),
                  "torch.optim.SGD(lr, momentum, nesterov=True)"),
    OptimizerSpec("RMSprop", RMSprop, lambda p, lr, m: torch.optim.RMSprop([p], lr=lr, alpha=ALPHA, eps=EPS,
                                                                            foreach=False),
                  "torch.optim.RMSprop(lr)"),
    OptimizerSpec("Adam", Adam, lambda p, lr, m: torch.optim.Adam([p], lr=lr, betas=BETAS, eps=EPS, foreach=False),
                  "torch.optim.Adam(lr)"),
)}
NAMES = tuple(OPTIMIZERS)
