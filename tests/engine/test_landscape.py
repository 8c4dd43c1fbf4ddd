"""Lesson 7's engine against PyTorch itself: each update written by hand takes ``torch.optim``'s step bit for
bit (every step's weights, float32 and float64, as lesson 4's manual SGD is checked), the chart's paths are those
weights, a path that blows up stops without breaking the run, and the largest learning rates derived from a
bowl's Hessian are where runs stop converging."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch

from autodiff_core.landscape import (
    LandscapeConfig,
    first_difference,
    hand_vs_torch,
    stable_rates,
    surface_of,
    train_landscape,
    whole_run,
)
from autodiff_core.optimizers import NAMES, OPTIMIZERS
from autodiff_core.surfaces import SURFACES, Surface

BITS = {torch.float32: torch.int32, torch.float64: torch.int64}


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal as stored: every bit of every number (NaN included, and -0.0 told from 0.0)."""
    return a.dtype == b.dtype and torch.equal(a.view(BITS[a.dtype]), b.view(BITS[b.dtype]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("landscape", list(SURFACES))
@pytest.mark.parametrize("name", NAMES)
def test_each_update_by_hand_takes_torch_optims_step_bit_for_bit(name, landscape, dtype):
    config = LandscapeConfig(landscape=landscape, dtype=dtype, steps=150)
    pairs = hand_vs_torch(config, name)
    assert len(pairs) == 150
    assert all(torch.equal(hand, twin) for hand, twin in pairs), name
    assert not torch.equal(pairs[-1][0], pairs[0][0])  # it did move
    assert first_difference(config, name) is None


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("config", [
    LandscapeConfig(momentum=0.0),  # no velocity at all: torch.optim.SGD keeps none either
    LandscapeConfig(momentum=0.999, learning_rate=0.02, conditioning=300.0),
    LandscapeConfig(learning_rate=0.45, steps=120),  # Nesterov blows up to inf, then NaN
    LandscapeConfig(learning_rate=50.0, steps=40, dtype="float64"),  # three of them blow up
], ids=["no momentum", "heavy momentum", "nesterov blows up", "huge rate"])
def test_the_same_bits_at_the_edges_nan_and_inf_included(name, config):
    assert all(same_bits(hand, twin) for hand, twin in hand_vs_torch(config, name))
    assert first_difference(config, name) is None  # what the page's check says


def test_the_twins_are_the_torch_optim_calls_the_page_names():
    p = torch.zeros(2, requires_grad=True)
    kinds = {name: type(spec.twin(p, 0.1, 0.9)).__name__ for name, spec in OPTIMIZERS.items()}
    assert kinds == {"SGD": "SGD", "Momentum": "SGD", "Nesterov": "SGD", "RMSprop": "RMSprop", "Adam": "Adam"}
    groups = {name: spec.twin(p, 0.1, 0.9).param_groups[0] for name, spec in OPTIMIZERS.items()}
    assert [groups[n]["momentum"] for n in ("SGD", "Momentum", "Nesterov")] == [0.0, 0.9, 0.9]
    assert [groups[n]["nesterov"] for n in ("SGD", "Momentum", "Nesterov")] == [False, False, True]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("landscape", list(SURFACES))
def test_the_paths_on_the_chart_are_the_weights_checked_against_torch(landscape, dtype):
    config = LandscapeConfig(landscape=landscape, dtype=dtype, steps=60)
    snaps = list(train_landscape(config))
    assert [s.step for s in snaps] == list(range(61))  # the start, then one snapshot a step
    start = surface_of(config).start
    assert all((s0, s1) == start for s0, s1 in zip(snaps[0].w0, snaps[0].w1, strict=True))
    for i, name in enumerate(NAMES):
        hand = [start] + [tuple(h.tolist()) for h, _ in hand_vs_torch(config, name)]
        assert [(s.w0[i], s.w1[i]) for s in snaps] == hand, name
        w = torch.tensor([(s.w0[i], s.w1[i]) for s in snaps], dtype=getattr(torch, dtype))
        losses = [float(surface_of(config).loss(row)) for row in w]  # the loss recorded is the loss there
        assert [s.loss[i] for s in snaps] == losses


def test_a_path_that_blows_up_stops_there_and_the_others_go_on():
    config = LandscapeConfig(learning_rate=50.0, steps=60)  # float32: the SGD family overflows within ten steps
    snaps = list(train_landscape(config))
    assert len(snaps) == 61 and not snaps[-1].diverged
    for i, name in enumerate(NAMES):
        finite = [math.isfinite(s.loss[i]) for s in snaps]
        if name in ("RMSprop", "Adam"):  # their steps are about lr long, whatever the slope: never inf
            assert all(finite), name
            continue
        k = finite.index(False)
        assert 0 < k < 15 and not any(finite[k:]), name  # once gone, gone
        assert all(math.isnan(s.w0[i]) and math.isnan(s.w1[i]) for s in snaps[k:])


def test_a_run_whose_every_path_blows_up_ends_with_a_message(monkeypatch):
    def cliff(conditioning, dtype, device, seed):  # a loss no float holds, from the start
        return Surface("Cliff", lambda w0, w1: (w0 * 0 + 1e39) * (w1 * 0 + 1e39), (0.0, 0.0), (0.0, 0.0),
                       (-1.0, 1.0), (-1.0, 1.0))

    monkeypatch.setitem(SURFACES, "Cliff", cliff)
    [snap] = list(train_landscape(LandscapeConfig(landscape="Cliff")))
    assert snap.diverged and snap.step == 0 and all(math.isnan(v) for v in snap.loss)
    assert snap.message.startswith("Every path blew up by step 0") and "make it smaller" in snap.message


def test_a_whole_run_is_computed_once_per_config():
    config = LandscapeConfig(steps=30)
    assert whole_run(config) is whole_run(LandscapeConfig(steps=30))
    assert whole_run(config) == tuple(train_landscape(config))


@pytest.mark.parametrize("landscape", list(SURFACES))
def test_the_minimum_is_where_the_slope_is_zero_and_the_loss_lowest(landscape):
    surface = surface_of(LandscapeConfig(landscape=landscape, dtype="float64"))
    w = torch.tensor(surface.minimum, dtype=torch.float64, requires_grad=True)
    surface.loss(w).backward()
    assert w.grad.abs().max() < 1e-9
    low, high = surface.curvatures()
    assert 0 < low <= high  # a minimum: curving up in every direction
    xs, ys, z = surface.grid(41, 37)
    assert z.shape == (37, 41) and z.min() >= surface.lowest() - 1e-12


@pytest.mark.parametrize("kappa", [1.0, 20.0, 300.0])
def test_the_bowls_curvatures_are_its_hessians_eigenvalues(kappa):
    surface = surface_of(LandscapeConfig(conditioning=kappa, dtype="float64"))
    hessian = torch.func.hessian(lambda w: surface.loss(w))(torch.tensor([0.3, -0.7], dtype=torch.float64))
    eig = torch.linalg.eigvalsh(hessian).tolist()  # the same anywhere on a bowl
    assert surface.curvatures() == pytest.approx(eig, rel=1e-12)
    assert eig[1] / eig[0] == pytest.approx(kappa)


def _ends(config: LandscapeConfig, name: str) -> tuple[float, float]:
    i = NAMES.index(name)
    snaps = list(train_landscape(config))
    return snaps[0].loss[i], snaps[-1].loss[i]


@pytest.mark.parametrize("kappa, beta", [(1.0, 0.9), (20.0, 0.5), (100.0, 0.9)])
@pytest.mark.parametrize("name", ["SGD", "Momentum", "Nesterov"])
def test_the_largest_rate_derived_from_the_bowl_is_where_runs_stop_converging(name, kappa, beta):
    """Just below the derived limit the run converges; just above it, the same run diverges."""
    base = LandscapeConfig(conditioning=kappa, momentum=beta, steps=500, dtype="float64")
    rates = stable_rates(surface_of(base), beta)
    limit = {"SGD": rates.sgd, "Momentum": rates.momentum, "Nesterov": rates.nesterov}[name]
    assert rates.steepest == pytest.approx(torch.linalg.eigvalsh(torch.func.hessian(
        lambda w: surface_of(base).loss(w))(torch.zeros(2, dtype=torch.float64)))[-1].item())
    first, last = _ends(replace(base, learning_rate=0.98 * limit), name)
    assert last < 1e-3 * first, "just below the limit it converges"
    first, last = _ends(replace(base, learning_rate=1.02 * limit), name)
    assert not last < first, "just above it, it does not"


def test_the_limits_are_two_over_lambda_max_and_momentums_stretch_of_it():
    rates = stable_rates(surface_of(LandscapeConfig()), 0.9)
    assert rates.steepest == pytest.approx(4.0)  # the bowl's steepest curvature, STEEP
    assert (rates.sgd, rates.momentum, rates.nesterov) == pytest.approx((0.5, 0.95, 3.8 / 2.8 / 4))


@pytest.mark.parametrize("bad", [dict(landscape="Moon"), dict(learning_rate=0.0), dict(momentum=1.0),
                                 dict(steps=0), dict(steps=501), dict(conditioning=0.5), dict(dtype="float16")])
def test_a_config_out_of_range_says_which_field(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        LandscapeConfig(**bad)
