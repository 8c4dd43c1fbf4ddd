"""What a run of lesson 7 did, in sentences computed from its snapshots: which path blew up or diverged, the
largest learning rate that converges on a bowl (derived from its Hessian), which paths zig-zagged across a
narrow valley, which overshot, how much momentum sped things up, who got to the bottom first, and RMSprop's
long first step. Each sentence is a ``Fact`` that carries the numbers it states (``data``), so a test can check
every claim against the run itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .landscape import LandscapeConfig, LandscapeSnapshot, stable_rates, surface_of
from .optimizers import ALPHA, NAMES
from .surfaces import Surface

DOWN = 1e-3  # "99.9% of the way down": the loss within this fraction of the start's height above the lowest
OVERSHOOT = 0.05  # a climb of the loss by this fraction of the start's height above the lowest is an overshoot
ZIGZAG = 3  # crossings of a valley's floor that make a zig-zag
LONG_FIRST_STEP = 5.0  # RMSprop's first step, in learning rates, worth a sentence (it is 1/√(1 − α) = 10)


@dataclass(frozen=True)
class Fact:
    kind: str  # "blew up", "diverges", "rate", "zigzag", "overshoot", "speed-up", "race", "first step"
    text: str  # markdown, written here: names in bold, numbers from the run
    data: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Path:
    """One optimizer's run: its finite points and losses, and the step at which it blew up (if it did)."""

    name: str
    w0: np.ndarray  # (k,) steps 0 .. k-1
    w1: np.ndarray
    loss: np.ndarray
    blew_up: int | None


def paths(snaps: Sequence[LandscapeSnapshot]) -> list[Path]:
    """Each optimizer's path, cut where its loss stopped being finite (the snapshot holds NaN from there on)."""
    out = []
    for i, name in enumerate(NAMES):
        loss = np.array([s.loss[i] for s in snaps], np.float64)
        bad = np.flatnonzero(~np.isfinite(loss))
        k = int(bad[0]) if bad.size else len(loss)
        out.append(Path(name, np.array([s.w0[i] for s in snaps[:k]]), np.array([s.w1[i] for s in snaps[:k]]),
                        loss[:k], int(snaps[k].step) if bad.size else None))
    return out


def arrival(path: Path, lowest: float) -> int | None:
    """The first step at which the path is 99.9% of the way down; None if it never is."""
    gap = path.loss - lowest
    if not gap.size:
        return None
    hit = np.flatnonzero(gap <= DOWN * gap[0])
    return int(hit[0]) if hit.size else None


def crossings(path: Path, surface: Surface) -> int:
    """How often the path crosses the valley's floor: sign changes of its height above the floor, counting only
    points visibly off it (one that has settled on the floor may still jitter about it, unseen)."""
    side = surface.across(path.w0, path.w1)
    tol = 0.01 * (surface.y_range[1] - surface.y_range[0])  # a few pixels on the chart
    signs = np.sign(side[np.abs(side) > tol])
    return int(np.count_nonzero(signs[1:] != signs[:-1]))


def story(config: LandscapeConfig, snaps: Sequence[LandscapeSnapshot]) -> list[Fact]:
    """The sentences the page shows beside the chart of this run."""
    if not snaps:
        return []
    surface = surface_of(config)
    run = paths(snaps)
    lowest = surface.lowest()
    facts = [*_blowups(run, surface, snaps[-1].step)]
    if surface.quadratic and len(run[0].loss):
        facts.append(_rate(config, surface, run[0]))
    facts += [f for f in (_zigzag(run, surface), _overshoot(run, lowest), _speedup(config, run, lowest, snaps),
                          _race(run, lowest, snaps[-1].step), _first_step(config, run)) if f is not None]
    return facts


def _blowups(run: list[Path], surface: Surface, last: int):
    for p in run:
        if p.blew_up == 0:
            yield Fact("blew up", f"**{p.name}**'s loss was not a finite number even at the start, so it has no path.",
                       {"name": p.name, "step": 0, "last": math.nan})
        elif p.blew_up is not None:
            yield Fact("blew up", f"**{p.name}** blew up: its loss was {p.loss[-1]:.3g} at step {p.blew_up - 1}, and "
                                  f"at step {p.blew_up} no longer a finite number, so its path ends there.",
                       {"name": p.name, "step": p.blew_up, "last": float(p.loss[-1])})
        elif p.loss[-1] > p.loss[0]:
            gone = not _inside(surface, p.w0[-1], p.w1[-1])
            yield Fact("diverges", f"**{p.name}** diverges: its loss grew from {p.loss[0]:.3g} to {p.loss[-1]:.3g} in "
                                   f"{last} steps{', and its path left the chart' if gone else ''}.",
                       {"name": p.name, "first": float(p.loss[0]), "final": float(p.loss[-1]), "left": gone})


def _inside(surface: Surface, x: float, y: float) -> bool:
    return surface.x_range[0] <= x <= surface.x_range[1] and surface.y_range[0] <= y <= surface.y_range[1]


def _rate(config: LandscapeConfig, surface: Surface, sgd: Path) -> Fact:
    """The largest rate that converges, derived from the bowl's curvature, and what SGD did at this one."""
    r, lr, b = stable_rates(surface, config.momentum), config.learning_rate, config.momentum
    text = (f"On this bowl the steepest curvature (the Hessian's largest eigenvalue) is λmax = {r.steepest:.3g}, so "
            f"plain gradient descent converges only for learning rates below 2/λmax = {r.sgd:.3g}")
    if b > 0:
        text += (f"; momentum β = {b:g} raises the limit to 2(1+β)/λmax = {r.momentum:.3g} for Momentum, and to "
                 f"2(1+β)/((1+2β)λmax) = {r.nesterov:.3g} for Nesterov")
    factor = abs(1 - lr * r.steepest)  # what each step multiplies SGD's distance across the valley by
    falls = bool(np.all(np.diff(sgd.loss) <= 0))
    if lr < r.sgd:
        how = "never rose" if falls else "fell"
        outcome = (f"Your learning rate {lr:g} is below it: SGD's loss {how}, from {sgd.loss[0]:.3g} to "
                   f"{sgd.loss[-1]:.3g}.")
    elif sgd.blew_up is not None:
        outcome = f"Your learning rate {lr:g} is not below it, and SGD blew up at step {sgd.blew_up}."
    else:
        outcome = (f"Your learning rate {lr:g} is not below it: each step multiplies SGD's distance across the "
                   f"valley by |1 − lr·λmax| = {factor:.3g}, so its loss went from {sgd.loss[0]:.3g} to "
                   f"{sgd.loss[-1]:.3g}.")
    return Fact("rate", f"{text}. {outcome}", {"steepest": r.steepest, "sgd": r.sgd, "momentum": r.momentum,
                                               "nesterov": r.nesterov, "factor": factor, "below": lr < r.sgd,
                                               "never rose": falls})


def _zigzag(run: list[Path], surface: Surface) -> Fact | None:
    if surface.floor is None:
        return None
    counts = {p.name: crossings(p, surface) for p in run}
    zig = sorted(((c, n) for n, c in counts.items() if c >= ZIGZAG), key=lambda cn: (-cn[0], NAMES.index(cn[1])))
    if not zig:
        return None
    (c, first), *rest = zig
    others = "".join(f", **{n}** {k}" for k, n in rest)
    return Fact("zigzag", f"Zig-zag across the valley: **{first}** crossed its floor (the dashed line) {c} times"
                          f"{others}. A step long enough to cross the valley bounces between its steep walls.",
                {"crossings": {n: k for k, n in zig}})


def _overshoot(run: list[Path], lowest: float) -> Fact | None:
    clauses, data = [], {}
    for p in run:
        if p.blew_up is not None or p.loss[-1] > p.loss[0] or len(p.loss) < 3:
            continue  # a path that blew up or diverges has its own sentence
        low = np.minimum.accumulate(p.loss)
        climb = p.loss - low
        j = int(np.argmax(climb))
        if climb[j] <= OVERSHOOT * (p.loss[0] - lowest):
            continue
        i = int(np.argmin(p.loss[:j + 1]))
        clauses.append(f"**{p.name}**'s loss fell to {p.loss[i]:.3g} by step {i}, then climbed back to "
                       f"{p.loss[j]:.3g} by step {j}" if i else
                       f"**{p.name}**'s loss climbed from {p.loss[0]:.3g} at the start to {p.loss[j]:.3g} by step {j}")
        data[p.name] = {"low": i, "high": j, "low_loss": float(p.loss[i]), "high_loss": float(p.loss[j])}
    if not clauses:
        return None
    return Fact("overshoot", "Overshoot: " + "; ".join(clauses) + ". Carried past the lowest point it had reached, "
                "the path went uphill again.", data)


def _speedup(config: LandscapeConfig, run: list[Path], lowest: float, snaps) -> Fact | None:
    sgd, mom = run[0], run[1]
    steps = snaps[-1].step
    if not (len(sgd.loss) and len(mom.loss)):
        return None  # no path to compare
    if config.momentum == 0:
        return Fact("speed-up", "With momentum 0, **Momentum** and **Nesterov** take exactly **SGD**'s steps: their "
                                "paths lie on SGD's.", {"same": True})
    a, b = arrival(sgd, lowest), arrival(mom, lowest)
    data = {"sgd": a, "momentum": b}
    if a is None and b is None:
        return Fact("speed-up", f"Neither **SGD** nor **Momentum** got 99.9% of the way down in {steps} steps.", data)
    if b is None:
        return Fact("speed-up", f"No speed-up here: **SGD** got 99.9% of the way down in {a} steps; **Momentum** had "
                                f"not after {steps}.", data)
    if a is None:
        return Fact("speed-up", f"Momentum's speed-up: **Momentum** got 99.9% of the way down (the dotted line) in "
                                f"{b} steps; plain **SGD** had not after {steps}: more than {steps / b:.1f}× as fast.",
                    data)
    if b >= a:
        return Fact("speed-up", f"No speed-up here: **SGD** got 99.9% of the way down in {a} steps, **Momentum** in "
                                f"{b}.", data)
    return Fact("speed-up", f"Momentum's speed-up: **Momentum** got 99.9% of the way down (the dotted line) in {b} "
                            f"steps, plain **SGD** in {a}: {a / b:.1f}× as fast.", data)


def _race(run: list[Path], lowest: float, steps: int) -> Fact | None:
    arrived = sorted((arrival(p, lowest), NAMES.index(p.name), p.name) for p in run
                      if arrival(p, lowest) is not None)
    if not arrived:
        return None
    late = [p.name for p in run if arrival(p, lowest) is None]
    (step, _, first), *rest = arrived
    then = "; then " + ", ".join(f"{n} ({s})" for s, _, n in rest) if rest else ""
    missing = f"; {_names(late)} had not by step {steps}" if late else ""
    return Fact("race", f"First 99.9% of the way down: **{first}**, at step {step}{then}{missing}.",
                {"order": [(n, s) for s, _, n in arrived], "late": late})


def _first_step(config: LandscapeConfig, run: list[Path]) -> Fact | None:
    """RMSprop's first step is 1/√(1 − α) learning rates long in each weight; Adam's, corrected, about one."""
    rms, adam = run[3], run[4]
    if len(rms.loss) < 2 or len(adam.loss) < 2:
        return None
    lr = config.learning_rate
    moved = min(abs(rms.w0[1] - rms.w0[0]), abs(rms.w1[1] - rms.w1[0])) / lr
    adam_moved = max(abs(adam.w0[1] - adam.w0[0]), abs(adam.w1[1] - adam.w1[0])) / lr
    if not moved >= LONG_FIRST_STEP:
        return None
    return Fact("first step", f"**RMSprop**'s first step moved each weight by {_rates(moved)}: its mean of "
                              f"squared gradients starts at 0, and after one step holds only (1 − α)·g², so it divides "
                              f"by √(1 − α)·|g| = |g|/{1 / math.sqrt(1 - ALPHA):.3g}. **Adam** corrects its means for "
                              f"starting at 0, and its first step was {_rates(adam_moved)}.",
                {"rmsprop": moved, "adam": adam_moved})


def _rates(v: float) -> str:
    return f"{v:.3g} learning rate{'' if f'{v:.3g}' == '1' else 's'}"


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
