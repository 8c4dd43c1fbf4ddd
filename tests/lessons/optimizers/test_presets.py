"""Lesson 7's presets, opened the way a teacher shares them (``?preset=<name>``), do what their names say; the
outcome is read from the run the page computed from the widgets the link set, and from what the page says."""

from __future__ import annotations

import numpy as np

from autodiff_core.landscape import stable_rates, surface_of
from autodiff_core.landscape_story import arrival, crossings, paths
from autodiff_core.optimizers import NAMES
from studio.lessons import PRESETS
from tests.studio.test_presets import open_preset, train

LESSON = "optimizers"


def opened(new_app, name: str):
    """The page opened by the preset's link, its run (computed whole as the page opened), and what it says."""
    at = open_preset(new_app, LESSON, name)
    run = at.session_state[f"{LESSON}_run"]
    said = " ".join(m.value for m in at.markdown if m.value.startswith("- "))
    return at, run, {p.name: p for p in paths(run.view()[0])}, said


def test_lesson7_has_these_presets():
    assert list(PRESETS[LESSON]) == ["Momentum on a narrow bowl", "Zig-zag across the valley",
                                     "Past 2/λmax: SGD diverges", "Rosenbrock's valley",
                                     "Lesson 3's loss: momentum overshoots"]


def test_momentum_on_a_narrow_bowl_gets_down_sooner_than_sgd(new_app):
    _, run, p, said = opened(new_app, "Momentum on a narrow bowl")
    lowest = surface_of(run.config).lowest()
    sgd, momentum, nesterov = (arrival(p[n], lowest) for n in ("SGD", "Momentum", "Nesterov"))
    assert momentum is not None and nesterov is not None and (sgd is None or sgd > 2 * momentum)
    assert f"**Momentum** got 99.9% of the way down (the dotted line) in {momentum} steps" in said


def test_zigzag_across_the_valley_bounces_sgd_across_and_still_gets_down(new_app):
    _, run, p, said = opened(new_app, "Zig-zag across the valley")
    surface = surface_of(run.config)
    assert run.config.learning_rate < stable_rates(surface, run.config.momentum).sgd  # below the limit
    assert crossings(p["SGD"], surface) >= 10 and arrival(p["SGD"], surface.lowest()) is not None
    signs = np.sign(p["SGD"].w1[:10])
    assert (signs[1:] == -signs[:-1]).all()  # across the valley it flips side at every step
    assert "Zig-zag across the valley:" in said and "**SGD**" in said.split("Zig-zag across the valley:")[1]


def test_past_two_over_lambda_max_sgd_diverges_while_momentum_converges(new_app):
    _, run, p, said = opened(new_app, "Past 2/λmax: SGD diverges")
    surface = surface_of(run.config)
    rates = stable_rates(surface, run.config.momentum)
    assert rates.sgd < run.config.learning_rate < rates.momentum
    assert p["SGD"].loss[-1] > 1e6 * p["SGD"].loss[0]
    assert arrival(p["Momentum"], surface.lowest()) is not None
    assert "**SGD** diverges" in said and "is not below it" in said


def test_rosenbrocks_valley_sgd_crawls_where_momentum_gets_down(new_app):
    _, run, p, said = opened(new_app, "Rosenbrock's valley")
    lowest = surface_of(run.config).lowest()
    assert run.config.landscape == "Rosenbrock's valley" and run.config.steps == 500
    assert arrival(p["SGD"], lowest) is None and arrival(p["Momentum"], lowest) is not None
    assert p["SGD"].loss[-1] > 1000 * p["Momentum"].loss[-1]  # crawling along the valley's floor
    assert "plain **SGD** had not after 500" in said


def test_lesson3s_loss_momentum_overshoots(new_app):
    _, run, p, said = opened(new_app, "Lesson 3's loss: momentum overshoots")
    assert run.config.landscape == "Logistic regression"
    loss = p["Momentum"].loss
    climb = loss - np.minimum.accumulate(loss)
    assert climb.max() > 0.05 * (loss[0] - surface_of(run.config).lowest())
    assert "**Momentum**'s loss fell to" in said.split("Overshoot:")[1]


def test_a_preset_trained_live_is_the_run_on_screen(new_app):
    at, computed, _, _ = opened(new_app, "Past 2/λmax: SGD diverges")
    run = train(at, LESSON)
    assert run is not computed and run.status == "done" and run.view()[0] == computed.view()[0]
    assert set(NAMES) == {p.name for p in paths(run.view()[0])}
