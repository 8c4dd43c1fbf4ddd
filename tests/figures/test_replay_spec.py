"""Lesson 3's finished view for a class whose runs end together: the replay's JSON is made as plotly's
validators would leave it (so the page skips them), its frames change a few numbers each, and the
benchmark's students speak through testkit/ws_client.py. Sizes are asserted, never times."""

from __future__ import annotations

import base64
import json
import sys
from dataclasses import replace

import numpy as np
import plotly.graph_objects as go
import pytest

from autodiff_core import LogisticConfig, train_logistic
from autodiff_core.figures import REPLAY_TRACES, FigureSpec, logistic_replay_figure, logistic_replay_spec
from autodiff_core.figures.classroom import LOGISTIC, ghost_record, ghost_traces
from autodiff_core.logistic import logistic_data
from studio import classroom, feed
from studio.runner import LiveRun
from tests.studio.test_feed import poll, states_payload


@pytest.fixture(scope="module")
def lesson():
    config = replace(LogisticConfig(), record_every=1)  # as the page records: every iteration
    snaps = list(train_logistic(config))
    x, y = (t.numpy() for t in logistic_data(config))
    return config, snaps, x, y


def plain(value) -> object:
    return json.loads(json.dumps(value))


def decoded(array: dict) -> np.ndarray:
    """A plotly.js binary array ({"dtype", "bdata"}) as numbers."""
    return np.frombuffer(base64.b64decode(array["bdata"]), np.dtype(array["dtype"]))


def test_the_spec_is_what_plotly_validators_make_of_it(lesson):
    config, snaps, x, y = lesson
    spec = logistic_replay_spec(snaps, x, y, config.max_iterations)
    assert isinstance(spec, FigureSpec) and spec.to_plotly_json() is spec
    assert plain(go.Figure(spec).to_plotly_json()) == plain(spec)  # nothing added, dropped or changed
    assert plain(logistic_replay_figure(snaps, x, y, config.max_iterations).to_plotly_json()) == plain(spec)
    assert isinstance(spec["layout"]["template"], dict)  # plotly.js knows no template by name


def test_a_frame_moves_the_boundary_and_two_dots_and_nothing_else(lesson):
    config, snaps, x, y = lesson
    spec = logistic_replay_spec(snaps, x, y, config.max_iterations)
    frames, by_name = spec["frames"], {str(s.iteration): s for s in snaps}
    assert len(frames) == len(snaps) == 381
    names = [t["name"] for t in spec["data"]]
    assert [names[i] for i in REPLAY_TRACES] == ["decision boundary", "loss now", "accuracy now"]
    for frame in frames:
        s = by_name[frame["name"]]
        assert frame["traces"] == list(REPLAY_TRACES)
        boundary, loss, accuracy = frame["data"]
        assert len(boundary["x"]) == len(boundary["y"]) == 2
        assert loss["x"] == accuracy["x"] == [s.iteration]
        assert loss["y"][0] == pytest.approx(s.loss, rel=1e-5)
        assert accuracy["y"][0] == pytest.approx(s.accuracy, rel=1e-5)
        assert frame["layout"]["title"]["text"].startswith(f"Iteration: {s.iteration}<br>")
    # the whole run's curves are drawn once, under the dots, not again in every frame
    loss, accuracy = spec["data"][3], spec["data"][4]
    assert list(decoded(loss["x"])) == list(decoded(accuracy["x"])) == [s.iteration for s in snaps]
    assert list(decoded(loss["y"])) == pytest.approx([s.loss for s in snaps], rel=1e-6)
    assert list(decoded(accuracy["y"])) == pytest.approx([s.accuracy for s in snaps], rel=1e-6)
    # 1.37 MB when each frame carried the curves so far (thirty of them sent at once when a class ends)
    assert len(json.dumps(spec["frames"])) < 200_000
    assert len(go.Figure(spec).to_json()) < 300_000


def test_the_final_frame_is_what_the_figure_shows_before_play(lesson):
    config, snaps, x, y = lesson
    spec = logistic_replay_spec(snaps, x, y, config.max_iterations)
    last = spec["frames"][-1]
    for i, update in zip(REPLAY_TRACES, last["data"], strict=True):
        assert (spec["data"][i]["x"], spec["data"][i]["y"]) == (update["x"], update["y"])
    assert spec["layout"]["title"]["text"] == last["layout"]["title"]["text"]


def test_ghosts_join_the_spec_as_they_join_the_figure(lesson, monkeypatch):
    config, snaps, x, y = lesson
    ghost = {**ghost_record(LOGISTIC, "", snaps[:200]), "label": "lr 0.02"}
    traces = ghost_traces(LOGISTIC, [ghost, {**ghost, "label": "pinned", "pinned": True}], [-20.0, 20.0])
    monkeypatch.setattr(classroom, "_traces", lambda lesson, run, reference=None: traces)
    spec = logistic_replay_spec(snaps, x, y, config.max_iterations)
    figure = classroom.add_ghosts(go.Figure(spec), "logistic", None)
    classroom.add_ghosts_to_spec(spec, "logistic", None)
    assert plain(go.Figure(spec).to_plotly_json()) == plain(figure.to_plotly_json())
    assert spec["layout"]["margin"]["t"] > logistic_replay_spec(snaps, x, y, 1000)["layout"]["margin"]["t"]


def test_an_empty_run_still_makes_a_valid_spec(lesson):
    _, _, x, y = lesson
    spec = logistic_replay_spec([], x, y, 100)
    assert "frames" not in spec and plain(go.Figure(spec).to_plotly_json()) == plain(spec)


def test_a_feed_answer_says_how_long_the_feed_spent_on_it():
    run = LiveRun("test", None, lambda: (i for i in range(3)), lambda s: s)
    run.start().join(5)
    url = feed.publish(run, states_payload())
    [route] = feed.ROUTES
    match, scope = route.matches({"type": "http", "path": url, "method": "GET", "headers": []})
    from starlette.requests import Request

    response = feed.live(Request({"type": "http", "method": "GET", "headers": [], "query_string": b"after=0",
                                  **scope}))
    timing = response.headers["server-timing"]
    assert timing.startswith("feed;dur=") and float(timing.split("=")[1]) >= 0
    assert poll(url, after=0)[0] == 200


def test_the_benchmark_speaks_through_the_shared_websocket_client():
    import importlib.util
    from pathlib import Path

    from testkit import ws_client

    path = Path(__file__).resolve().parents[2] / "bench" / "classroom.py"
    spec = importlib.util.spec_from_file_location("classroom", path)
    bench = sys.modules.setdefault("classroom", importlib.util.module_from_spec(spec))  # as test_class_load
    spec.loader.exec_module(bench)
    assert issubclass(bench.Student, ws_client.Student)
    text = path.read_text()
    assert "ForwardMsg_pb2" not in text and "import websockets" not in text  # one client: testkit/ws_client.py
