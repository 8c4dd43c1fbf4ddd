"""Every sentence lesson 7 says beside its chart is true of the run it draws: each claim is checked here against
the snapshots, computed again another way (numpy over the recorded losses and positions, PyTorch's own Hessian),
for the presets and for a spread of other settings."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from autodiff_core.landscape import LandscapeConfig, surface_of, whole_run
from autodiff_core.landscape_story import DOWN, OVERSHOOT, ZIGZAG, story
from autodiff_core.optimizers import NAMES
from autodiff_core.surfaces import SURFACES

PRESETS = {  # studio/lessons.py's presets for lesson 7, as configs
    "bowl": LandscapeConfig(),
    "zig-zag": LandscapeConfig(learning_rate=0.45),
    "diverges": LandscapeConfig(learning_rate=0.55),
    "rosenbrock": LandscapeConfig(landscape="Rosenbrock's valley", momentum=0.95, steps=500),
    "logistic": LandscapeConfig(landscape="Logistic regression", learning_rate=0.3),
}
SPREAD = [LandscapeConfig(landscape=s, learning_rate=lr, momentum=b, conditioning=k, steps=n)
          for s, lr, b, k, n in itertools.product(SURFACES, (0.02, 0.3, 2.0), (0.0, 0.9), (1.0, 50.0), (40,))
          if k == 1.0 or s == "Narrow bowl"]
CASES = list(PRESETS.values()) + SPREAD + [LandscapeConfig(learning_rate=50.0), LandscapeConfig(dtype="float64")]


def losses(snaps, i: int) -> np.ndarray:
    return np.array([s.loss[i] for s in snaps])


def check(config: LandscapeConfig) -> list[str]:
    """Every fact of the run's story, checked against the run; returns the kinds seen."""
    snaps, surface = whole_run(config), surface_of(config)
    lowest = surface.lowest()
    facts = story(config, snaps)
    for fact in facts:
        d = fact.data
        if fact.kind == "blew up":
            loss = losses(snaps, NAMES.index(d["name"]))
            k = d["step"]
            assert math.isfinite(loss[k - 1]) and np.isnan(loss[k:]).all() and loss[k - 1] == d["last"]
            assert f"at step {k}" in fact.text and f"{d['last']:.3g}" in fact.text
        elif fact.kind == "diverges":
            i = NAMES.index(d["name"])
            loss = losses(snaps, i)
            assert np.isfinite(loss).all() and loss[-1] > loss[0] == d["first"] and loss[-1] == d["final"]
            x, y = snaps[-1].w0[i], snaps[-1].w1[i]
            inside = surface.x_range[0] <= x <= surface.x_range[1] and surface.y_range[0] <= y <= surface.y_range[1]
            assert d["left"] == (not inside) and ("left the chart" in fact.text) == d["left"]
        elif fact.kind == "rate":
            check_rate(config, snaps, fact)
        elif fact.kind == "zigzag":
            for name, count in d["crossings"].items():
                assert count >= ZIGZAG and crossings(snaps, NAMES.index(name), surface) == count
                assert f"**{name}** crossed its floor (the dashed line) {count} times" in fact.text or \
                    f"**{name}** {count}" in fact.text
            quiet = [n for n in NAMES if n not in d["crossings"]]
            assert all(crossings(snaps, NAMES.index(n), surface) < ZIGZAG for n in quiet)
        elif fact.kind == "overshoot":
            for name, o in d.items():
                loss = losses(snaps, NAMES.index(name))
                low, high = o["low"], o["high"]
                assert low < high and loss[low] == loss[:high + 1].min() == o["low_loss"]
                assert loss[high] == o["high_loss"] and loss[high] - loss[low] > OVERSHOOT * (loss[0] - lowest)
                assert f"{loss[high]:.3g} by step {high}" in fact.text
        elif fact.kind in ("speed-up", "race"):
            check_arrivals(config, snaps, fact, lowest)
        elif fact.kind == "first step":
            rms, adam = (NAMES.index(n) for n in ("RMSprop", "Adam"))
            moved = [abs(snaps[1].w0[rms] - snaps[0].w0[rms]), abs(snaps[1].w1[rms] - snaps[0].w1[rms])]
            assert min(moved) / config.learning_rate == pytest.approx(d["rmsprop"]) and d["rmsprop"] >= 5
            assert d["rmsprop"] == pytest.approx(10, rel=0.05)  # 1/√(1 − α), α = 0.99: where |g| ≫ ε
        else:
            raise AssertionError(f"a fact nobody checks: {fact.kind}")
    return [f.kind for f in facts]


def crossings(snaps, i: int, surface) -> int:
    """Independently: walk the path and count each time it changes side of the floor by a visible amount."""
    tol, side, count = 0.01 * (surface.y_range[1] - surface.y_range[0]), 0, 0
    for s in snaps:
        if not math.isfinite(s.w1[i]):
            break
        height = s.w1[i] - float(surface.floor(np.array(s.w0[i])))
        now = 1 if height > tol else -1 if height < -tol else 0
        if now and side and now != side:
            count += 1
        side = now or side
    return count


def check_rate(config, snaps, fact):
    d = fact.data
    surface = surface_of(LandscapeConfig(conditioning=config.conditioning, dtype="float64"))
    hessian = torch.func.hessian(lambda w: surface.loss(w))(torch.tensor([1.0, 2.0], dtype=torch.float64))
    steepest = torch.linalg.eigvalsh(hessian)[-1].item()
    b = config.momentum
    assert d["steepest"] == pytest.approx(steepest) and d["sgd"] == pytest.approx(2 / steepest)
    assert d["momentum"] == pytest.approx(2 * (1 + b) / steepest)
    assert d["nesterov"] == pytest.approx(2 * (1 + b) / ((1 + 2 * b) * steepest))
    sgd = losses(snaps, 0)
    assert d["below"] == (config.learning_rate < 2 / steepest)
    if d["below"]:  # gradient descent below 2/λmax: every step lowers a bowl's loss
        assert d["never rose"] and (np.diff(sgd) <= 0).all() and "never rose" in fact.text
    else:
        assert f"{d['factor']:.3g}" in fact.text or "blew up" in fact.text
        assert d["factor"] == pytest.approx(abs(1 - config.learning_rate * steepest))
        w1 = np.array([s.w1[0] for s in snaps[:20]])  # across the valley each step multiplies SGD's distance
        w1 = w1[np.isfinite(w1) & (np.abs(w1) < 1e15)]
        assert list(np.abs(w1[1:] / w1[:-1])) == pytest.approx([d["factor"]] * (len(w1) - 1), rel=1e-5)


def arrivals(snaps, lowest: float) -> dict[str, int | None]:
    out = {}
    for i, name in enumerate(NAMES):
        gap = losses(snaps, i) - lowest
        target = DOWN * gap[0]
        out[name] = next((k for k, g in enumerate(gap) if g <= target), None)  # NaN never counts
    return out


def check_arrivals(config, snaps, fact, lowest):
    got, steps = arrivals(snaps, lowest), snaps[-1].step
    if fact.kind == "race":
        order = fact.data["order"]
        assert order == sorted(((n, s) for n, s in got.items() if s is not None), key=lambda ns: (ns[1],
                                                                                                 NAMES.index(ns[0])))
        assert fact.data["late"] == [n for n, s in got.items() if s is None]
        first, step = order[0]
        assert f"**{first}**, at step {step}" in fact.text
        return
    if fact.data.get("same"):  # with β = 0, Momentum's and Nesterov's paths are SGD's
        assert config.momentum == 0
        paths = np.array([[s.w0[:3], s.w1[:3]] for s in snaps])  # (steps, 2, 3): SGD, Momentum, Nesterov
        assert np.array_equal(paths[..., 0], paths[..., 1], equal_nan=True)
        assert np.array_equal(paths[..., 0], paths[..., 2], equal_nan=True)
        return
    a, b = got["SGD"], got["Momentum"]
    assert (fact.data["sgd"], fact.data["momentum"]) == (a, b)
    if a is None and b is None:
        assert fact.text.startswith(f"Neither **SGD** nor **Momentum** got 99.9% of the way down in {steps} steps")
    elif b is None:
        assert fact.text.startswith(f"No speed-up here: **SGD** got 99.9% of the way down in {a} steps; "
                                    f"**Momentum** had not after {steps}")
    elif a is None:
        assert f"in {b} steps; plain **SGD** had not after {steps}: more than {steps / b:.1f}× as fast" in fact.text
    elif b < a:
        assert f"in {b} steps, plain **SGD** in {a}: {a / b:.1f}× as fast" in fact.text
    else:
        assert fact.text.startswith(f"No speed-up here: **SGD** got 99.9% of the way down in {a} steps, "
                                    f"**Momentum** in {b}")


@pytest.mark.parametrize("config", CASES, ids=lambda c: f"{c.landscape[:8]} lr{c.learning_rate:g} "
                                                         f"b{c.momentum:g} k{c.conditioning:g} {c.dtype}")
def test_every_sentence_is_true_of_the_run(config):
    check(config)


def test_the_presets_tell_what_their_names_promise():
    kinds = {name: check(config) for name, config in PRESETS.items()}
    assert {"rate", "zigzag", "overshoot", "speed-up", "race", "first step"} <= set(kinds["bowl"])
    assert "diverges" in kinds["diverges"] and "blew up" in kinds["zig-zag"]
    assert "zigzag" in kinds["rosenbrock"] and "rate" not in kinds["rosenbrock"]  # not a bowl: no 2/λmax rule
    assert "overshoot" in kinds["logistic"] and "zigzag" not in kinds["logistic"]  # no narrow valley there


def test_a_round_bowl_has_no_valley_and_no_zigzag_sentence():
    config = LandscapeConfig(conditioning=1.0)
    assert surface_of(config).floor is None
    assert "zigzag" not in [f.kind for f in story(config, whole_run(config))]


def test_no_sentence_is_empty_and_none_has_a_nan():
    for config in CASES:
        for fact in story(config, whole_run(config)):
            assert fact.text.strip() and "nan" not in fact.text.lower().replace("nanoseconds", "")


def test_the_cases_above_exercise_every_kind_of_sentence():
    kinds = {f.kind for config in CASES for f in story(config, whole_run(config))}
    assert kinds == {"blew up", "diverges", "rate", "zigzag", "overshoot", "speed-up", "race", "first step"}
