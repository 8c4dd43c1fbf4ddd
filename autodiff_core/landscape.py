"""Lesson 7: five optimizers on a loss landscape of two weights. They start from the same point with the same
learning rate (and the same momentum, for the two that use one), and take their steps in lockstep; each
update is written by hand (``autodiff_core/optimizers.py``) and reproduces ``torch.optim``'s step bit for bit
(``hand_vs_torch``).

A run is tiny (two weights, a few hundred steps), so a page computes it whole whenever a setting moves, and
streams the same run step by step when asked to draw it live.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from .devices import resolve_device, resolve_dtype
from .footprint import Footprint
from .optimizers import NAMES, OPTIMIZERS
from .stopping import checkpoint
from .surfaces import SURFACES, Surface, make_surface
from .validation import require_choice, require_device_name, require_dtype, require_float, require_int

MAX_STEPS = 500  # a whole run of them takes well under a second (bench/landscape.py)


@dataclass(frozen=True)
class LandscapeConfig:
    """Everything that decides a run. The defaults show momentum's speed-up on a narrow bowl."""

    landscape: str = "Narrow bowl"  # one of SURFACES
    conditioning: float = 20.0  # the bowl's κ = λmax/λmin: how much narrower it is than long
    learning_rate: float = 0.1  # the same for all five
    momentum: float = 0.9  # β of Momentum and Nesterov
    steps: int = 100
    seed: int = 10  # lesson 3's points, for the logistic surface
    device: str = "cpu"
    dtype: str = "float32"

    def __post_init__(self) -> None:
        require_choice("landscape", self.landscape, list(SURFACES))
        require_float("conditioning", self.conditioning, 1.0, 1000.0)
        require_float("learning_rate", self.learning_rate, 0.0, 1e3, lo_open=True)
        require_float("momentum", self.momentum, 0.0, 1.0, hi_open=True)
        require_int("steps", self.steps, 1, MAX_STEPS)
        require_int("seed", self.seed, 0, 2**63 - 1)
        require_device_name(self.device)
        require_dtype(self.dtype)

    def footprint(self) -> Footprint:
        """Two weights per optimizer (and lesson 3's points): a step is Python's overhead, five times over."""
        return Footprint(10_000, 5 * 3_000, fixed_bytes=2**20, fixed_seconds=1e-3, hint="Take fewer steps.")


@dataclass(frozen=True, slots=True)
class LandscapeSnapshot:
    """Where each optimizer stands after ``step`` updates, and the loss there; in the order of ``NAMES``.
    A path that blew up (its loss no longer a finite number) holds NaN from that step on."""

    step: int
    w0: tuple[float, ...]
    w1: tuple[float, ...]
    loss: tuple[float, ...]
    lowest: float = 0.0  # the loss at the landscape's minimum, where every loss curve is headed
    diverged: bool = False  # every path blew up: the run ends here
    message: str = ""


@functools.lru_cache(maxsize=32)
def surface_of(config: LandscapeConfig) -> Surface:
    """The run's landscape (one object per config: its contours are drawn once)."""
    return make_surface(config.landscape, config.conditioning, seed=config.seed, device=config.device,
                        dtype=config.dtype)


def starting_weights(surface: Surface, config: LandscapeConfig) -> torch.Tensor:
    """The start, as a leaf tensor that autograd fills a gradient for: (2,)."""
    return torch.tensor(surface.start, dtype=resolve_dtype(config.dtype), device=resolve_device(config.device),
                        requires_grad=True)


def train_landscape(config: LandscapeConfig) -> Iterator[LandscapeSnapshot]:
    """Step all five optimizers in lockstep and yield one snapshot per step, the start (step 0) included: where
    each stands and its loss there. A path whose loss stops being a finite number stops there; when every path
    has, the run ends with a message."""
    surface = surface_of(config)
    weights = [starting_weights(surface, config) for _ in NAMES]  # one (2,) leaf per optimizer
    updates = [OPTIMIZERS[name].by_hand(config.learning_rate, config.momentum) for name in NAMES]
    alive, lowest = [True] * len(NAMES), surface.lowest()
    for step in range(config.steps + 1):
        checkpoint()  # Stop ends the run here
        where = torch.stack([w.detach() for w in weights])  # (5, 2) after `step` updates: a copy, kept
        losses = []
        for i, (w, update) in enumerate(zip(weights, updates, strict=True)):
            # forward and loss: the height of the landscape where this optimizer stands
            loss = surface.loss(w)  # () scalar
            losses.append(loss.detach())
            if step == config.steps or not alive[i]:
                continue
            # backward: the slope there, into w.grad (2,)
            loss.backward()
            # update, by hand (torch.optim's step, line for line)
            with torch.no_grad():
                update.step(w, w.grad)
            # zero grads
            w.grad = None
        snap = _snapshot(step, where, losses, alive, lowest)
        yield snap
        if snap.diverged:
            return


def _snapshot(step: int, where: torch.Tensor, losses: list[torch.Tensor], alive: list[bool],
              lowest: float) -> LandscapeSnapshot:
    """One host sync for all five: positions (5, 2) and their losses; a path that blew up is marked, and is NaN
    from then on."""
    values = torch.cat([where.view(-1), torch.stack(losses)]).tolist()
    n = len(where)
    w0, w1, loss = values[0:2 * n:2], values[1:2 * n:2], values[2 * n:]
    for i in range(n):
        if not (alive[i] and math.isfinite(loss[i]) and math.isfinite(w0[i]) and math.isfinite(w1[i])):
            alive[i] = False
            w0[i] = w1[i] = loss[i] = math.nan
    diverged = not any(alive)
    message = (f"Every path blew up by step {step}: the loss was no longer a finite number. The learning rate is "
               "too large; make it smaller." if diverged else "")
    return LandscapeSnapshot(step, tuple(w0), tuple(w1), tuple(loss), lowest, diverged, message)


@functools.lru_cache(maxsize=32)
def whole_run(config: LandscapeConfig) -> tuple[LandscapeSnapshot, ...]:
    """The run computed whole, once per config (snapshots never change): what a page draws when a setting moves."""
    return tuple(train_landscape(config))


def hand_vs_torch(config: LandscapeConfig, name: str) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The weights after every step of optimizer ``name``, by hand and by ``torch.optim`` (its ``twin``), from
    one start on one surface: ``config.steps`` pairs of (2,) tensors, compared by the caller."""
    surface, spec = surface_of(config), OPTIMIZERS[name]
    hand, twin = starting_weights(surface, config), starting_weights(surface, config)
    update, optimizer = spec.by_hand(config.learning_rate, config.momentum), spec.twin(twin, config.learning_rate,
                                                                                        config.momentum)
    pairs = []
    for _ in range(config.steps):
        surface.loss(hand).backward()
        with torch.no_grad():
            update.step(hand, hand.grad)
        hand.grad = None
        surface.loss(twin).backward()
        optimizer.step()
        optimizer.zero_grad()
        pairs.append((hand.detach().clone(), twin.detach().clone()))
    return pairs


def first_difference(config: LandscapeConfig, name: str) -> int | None:
    """The first step (counted from 1) after which the hand-written update's weights differ from torch.optim's
    in any bit; None when they agree at every step."""
    for step, (hand, twin) in enumerate(hand_vs_torch(config, name), 1):
        if not same_bits(hand, twin):
            return step
    return None


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal as stored: every bit of every number (a NaN included, and -0.0 told from 0.0)."""
    as_ints = {torch.float32: torch.int32, torch.float64: torch.int64}
    return a.dtype == b.dtype and torch.equal(a.view(as_ints[a.dtype]), b.view(as_ints[b.dtype]))


@dataclass(frozen=True)
class StableRates:
    """The largest learning rates with which each of the SGD family converges on a quadratic of curvature
    ``steepest`` (the Hessian's largest eigenvalue): derived from the update, for the page to say and the tests
    to check against runs."""

    steepest: float  # λmax
    sgd: float  # 2 / λmax
    momentum: float  # 2(1 + β) / λmax
    nesterov: float  # 2(1 + β) / ((1 + 2β) λmax)


def stable_rates(surface: Surface, momentum: float) -> StableRates:
    """On a quadratic each direction of curvature λ is its own one-dimensional problem. Plain gradient descent
    multiplies the distance along it by (1 − lr·λ) each step, which shrinks only while lr·λ < 2; the steepest
    direction decides. Heavy-ball momentum's two-step recurrence is stable while lr·λ < 2(1 + β), and
    Nesterov's while lr·λ < 2(1 + β)/(1 + 2β)."""
    _, steepest = surface.curvatures()
    b = momentum
    return StableRates(steepest, 2 / steepest, 2 * (1 + b) / steepest, 2 * (1 + b) / ((1 + 2 * b) * steepest))
