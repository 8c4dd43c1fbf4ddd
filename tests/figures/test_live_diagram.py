"""Lesson 5's network diagram and gradient flow while a run goes: what each state carries, and its size."""

import base64
import json
import math
import time
from dataclasses import replace

import numpy as np
import pytest
import torch

from autodiff_core.diagram import GRID, ParamTap, network_state
from autodiff_core.features import FEATURES
from autodiff_core.figures.gradflow import LIVE_POINTS, POINTS, gradient_flow_live
from autodiff_core.figures.network import network_live_spec, network_live_state
from autodiff_core.figures.playground import LIVE_WINDOW, playground_live_payload
from autodiff_core.playground import Playground, PlaygroundConfig
from tests.conftest import feed_get, wait_for_run


def weights_now(pg):
    return [(layer.weight.detach().clone(), layer.bias.detach().clone()) for layer in pg.model.layers]


def same(a, b) -> bool:
    return all(torch.equal(w1, w2) and torch.equal(b1, b2) for (w1, b1), (w2, b2) in zip(a, b, strict=True))


def test_the_tap_copies_the_weights_of_the_very_state_it_passes_on():
    pg = Playground(PlaygroundConfig(hidden=(4, 3), activation="Tanh", optimizer="SGD + momentum"))
    tap, at = ParamTap(pg, every=1e9), {}  # only the first and the one asked for
    for snap in tap.stream(pg.run(30, 1)):  # the trainer waits while the state is handed on
        at[snap.step] = weights_now(pg)
        if snap.step == 10:
            tap.want()
        if snap.step == 0:
            first = tap.latest
    assert first[0] == 0 and same(first[1], at[0])  # asked for from the start
    assert not same(first[1], at[30])  # a copy: training on did not change it
    assert tap.latest[0] == 11 and same(tap.latest[1], at[11])  # the state after the request, and only that one


def test_the_tap_copies_a_state_every_so_often_without_being_asked():
    pg = Playground(PlaygroundConfig(hidden=(3,)))
    tap = ParamTap(pg, every=0.0)
    for snap in tap.stream(pg.run(5, 1)):
        assert tap.latest[0] == snap.step and same(tap.latest[1], weights_now(pg))


def test_the_diagram_of_copied_weights_is_the_diagram_of_the_model_at_that_step():
    pg = Playground(PlaygroundConfig(dataset="Circles", hidden=(5, 3), activation="Sigmoid",
                                     features=("X1", "X2", "sin X1")))
    tap = ParamTap(pg, every=1e9)
    for snap in tap.stream(pg.run(20, 1)):
        if snap.step == 7:
            then = network_state(pg)  # from the model itself (tests/figures/test_network_diagram.py checks it)
            tap.want()
        if snap.step == 8:
            expected = network_state(pg)
    step, params = tap.latest
    got = network_state(pg, params=params, step=step)
    assert step == 8 and got.step == expected.step == 8 and then.step == 7
    for a, b in zip(got.maps + got.weights + got.biases, expected.maps + expected.weights + expected.biases,
                    strict=True):
        np.testing.assert_array_equal(a, b)


def decoded(state: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    maps = np.frombuffer(base64.b64decode(state["maps"]), np.uint8)
    return (maps, np.frombuffer(base64.b64decode(state["weights"]), "<f4"),
            np.frombuffer(base64.b64decode(state["biases"]), "<f4"))


def run_states(config: PlaygroundConfig, steps: int):
    pg = Playground(config)
    tap = ParamTap(pg)
    snaps = list(tap.stream(pg.run(steps, 1)))
    step, params = tap.latest
    return pg, snaps, network_state(pg, params=params, step=step)


def payload_of(pg, snaps, state, curve=None):
    spec = network_live_spec(pg.config.features, pg.config.hidden, GRID, title="The network", note="note")
    flow = gradient_flow_live(curve or snaps, len(pg.config.hidden) + 1)
    points = (pg.points_train.numpy(), pg.y_train.numpy())
    return playground_live_payload(snaps, pg.extent, pg.config.grid, points, points, run_id="r", status="running",
                                   status_text="", steps_axis=500, curve=curve,
                                   diagram=(spec, network_live_state(state)), flow=flow)


def test_the_newest_state_carries_every_map_weight_and_bias_of_the_diagram():
    pg, snaps, state = run_states(PlaygroundConfig(hidden=(6, 4), activation="Tanh"), 12)
    data = payload_of(pg, snaps, state)
    assert data["diagram"]["columns"] == [2, 6, 4, 1] and data["diagram"]["grid"] == GRID
    assert data["diagram"]["headers"] == ["inputs", "layer 1", "layer 2", "output"]
    assert data["diagram"]["labels"][1][5] == "layer 1, neuron 6" and data["diagram"]["labels"][0] == ["X1", "X2"]
    *older, newest = data["states"]
    assert len(data["states"]) == LIVE_WINDOW and not any("diagram" in s for s in older)
    assert newest["diagram"]["step"] == state.step
    maps, weights, biases = decoded(newest["diagram"])
    assert len(maps) == (2 + 6 + 4 + 1) * GRID * GRID
    levels = np.concatenate([m.reshape(-1) for m in state.maps])
    np.testing.assert_allclose(maps / 127.5 - 1, np.clip(levels, -1, 1), atol=0.5 / 127.5 + 1e-6)
    np.testing.assert_array_equal(weights, np.concatenate([w.reshape(-1) for w in state.weights]))
    np.testing.assert_array_equal(biases, np.concatenate([b.reshape(-1) for b in state.biases]))
    assert len(weights) == 2 * 6 + 6 * 4 + 4 and len(biases) == 6 + 4 + 1
    json.dumps(data, allow_nan=False)


def test_a_state_of_the_largest_diagram_stays_small():
    config = PlaygroundConfig(hidden=(16,) * 6, features=tuple(FEATURES))
    pg, snaps, state = run_states(config, 2)
    size = len(json.dumps(network_live_state(state)))
    assert size < 30_000, size  # one state a feed update, a few a second (the default network: about 4 KB)
    data = payload_of(pg, snaps, state)
    assert sum("diagram" in s for s in data["states"]) == 1


def test_gradient_flow_curves_are_the_runs_and_stay_bounded():
    pg = Playground(PlaygroundConfig(hidden=(5, 4, 3)))
    snaps = list(pg.run(40, 1))
    spec, curves = gradient_flow_live(snaps, 4)
    names = [t["name"] for t in spec["traces"]]
    assert names == ["layer 1", "layer 1", "layer 2", "layer 2", "layer 3", "layer 3", "output"]
    assert spec["points"] == POINTS and spec["layout"]["yaxis"]["type"] == "log"
    assert curves["f0"]["x"] == list(range(1, 41))  # every step after the first
    assert curves["f0"]["y"] == [s.grad_norms[0] for s in snaps[1:]]
    assert curves["f1"]["y"] == [s.dead[0] for s in snaps[1:]] and curves["f6"]["y"][-1] == snaps[-1].grad_norms[3]
    long = [replace(snaps[1], step=i) for i in range(1, 8001)]  # a long run's trail
    _, curves = gradient_flow_live(long, 4)
    xs = curves["f0"]["x"]
    assert LIVE_POINTS <= len(xs) <= 2 * LIVE_POINTS + 1 and xs[-1] == 8000 and xs == sorted(xs)
    more = long + [replace(snaps[1], step=8001)]
    assert set(gradient_flow_live(more, 4)[1]["f0"]["x"][:-1]) <= set(xs)  # the same steps as it grows


def test_a_gradient_norm_that_is_not_a_number_travels_as_null():
    pg = Playground(PlaygroundConfig(hidden=(3,)))
    snaps = list(pg.run(3, 1))
    snaps[2] = replace(snaps[2], grad_norms=(math.inf, math.nan))
    _, curves = gradient_flow_live(snaps, 2)
    assert curves["f0"]["y"][1] is None and curves["f2"]["y"][1] is None  # f1: layer 1's dead units
    json.dumps(curves, allow_nan=False)


def live_payload(at):
    [el] = [e for e in at.get("bidi_component") if e.proto.id.endswith("playground_live")]
    return json.loads(el.proto.json)


def test_while_a_run_goes_the_feed_carries_the_diagram_and_gradient_flow(app):
    at = app.switch_page("pages/playground.py").run()
    assert live_payload(at)["diagram"] is None  # idle: the diagram is the static figure under the chart
    at.select_slider(key="pg_speed").set_value("200").run()
    at.button(key="pg_play").click().run()
    data = live_payload(at)
    assert data["diagram"]["columns"][1:] == list(at.session_state["pg_session"].model.config.hidden) + [1]
    assert [t["name"] for t in data["flow"]["traces"]][-1] == "output"
    assert not any(c.proto.id.endswith("pg_network") for c in at.get("plotly_chart"))
    seen, flow, deadline = [], {}, time.monotonic() + 30
    while len(seen) < 2 and time.monotonic() < deadline:  # the diagram moves on with the run
        time.sleep(0.3)
        status, update = feed_get(data["feed"])
        assert status == 200
        seen += [s["diagram"]["step"] for s in update["states"] if "diagram" in s and s["diagram"]["step"] not in seen]
        flow = {k: v for k, v in update["curves"].items() if k.startswith("f")}
    assert len(seen) >= 2 and seen == sorted(seen), seen
    assert flow and len(flow["f0"]["x"]) > 0
    at.button(key="pg_pause").click().run()
    wait_for_run(at, "playground", timeout=10)
    assert live_payload(at)["diagram"] is None
    assert any(c.proto.id.endswith("pg_network") for c in at.get("plotly_chart")) and not at.exception


def test_the_replays_curves_come_from_every_recorded_step_not_from_the_thinned_frames():
    from autodiff_core.figures.playground import playground_replay_figure

    pg = Playground(PlaygroundConfig(hidden=(4,)))
    every = list(pg.run(60, 1))
    snaps, curve = every[::15], [s.light() for s in every]  # whole snapshots thinned, as in a long run
    points = (pg.points_train.numpy(), pg.y_train.numpy())
    fig = playground_replay_figure(snaps, pg.extent, pg.config.grid, points, points, curve=curve)
    names = [t.name for t in fig.data]
    train_loss = names.index("train loss")
    assert list(fig.data[train_loss].x) == list(range(61))
    assert list(fig.data[train_loss].y) == [s.train_loss for s in every]
    frame = next(f for f in fig.frames if f.name == "30")  # a frame moves the surface and the line at its step
    assert frame.traces == (0,) and [(s.x0, s.x1) for s in frame.layout.shapes] == [(30, 30)]


def test_regression_points_take_their_targets_colour_on_the_surfaces_scale(app):
    from autodiff_core.figures.playground import SURFACE

    at = app.switch_page("pages/playground.py").run()
    at.selectbox(key="pg_dataset").select("Multi-Gaussian (regression)").run()
    data = live_payload(at)
    pg = at.session_state["pg_session"].model
    points = data["base"][:4]
    assert [t["name"] for t in points] == ["train ≤ 0", "train > 0", "test ≤ 0", "test > 0"]
    targets = {}
    for t in points:
        m = t["marker"]
        assert m["colorscale"] == SURFACE and (m["cmin"], m["cmax"]) == (-1, 1)
        assert abs(m["color"][0]) == max(abs(v) for v in m["color"])  # the legend shows the strongest colour
        targets.update(zip(zip(t["x"], t["y"], strict=True), m["color"], strict=True))
    for xy, y in zip(torch.cat([pg.points_train, pg.points_test]).tolist(), torch.cat([pg.y_train, pg.y_test]).tolist(),
                     strict=True):
        assert targets[tuple(xy)] == pytest.approx(y)
    at.toggle(key="pg_show_test").set_value(False).run()
    assert [len(t["x"]) for t in live_payload(at)["base"][2:4]] == [0, 0] and not at.exception


def test_in_the_presenter_view_the_live_diagram_and_gradient_flow_are_drawn_large(app):
    from autodiff_core.figures.theme import PRESENT_FONT

    at = app.switch_page("pages/playground.py")
    at.session_state["present"] = True
    at.run()
    at.select_slider(key="pg_speed").set_value("20").run()
    at.button(key="pg_play").click().run()
    data = live_payload(at)
    assert data["diagram"]["font"]["size"] == PRESENT_FONT
    assert data["flow"]["layout"]["font"]["size"] == PRESENT_FONT
    at.button(key="pg_pause").click().run()
    wait_for_run(at, "playground", timeout=10)
    assert not at.exception
