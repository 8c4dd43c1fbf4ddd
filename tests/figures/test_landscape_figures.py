"""Lesson 7's charts: the replay's JSON is what plotly's validators make of it, it draws exactly the paths and losses
the run recorded, its frames move the dots and nothing else, the live payload is strict JSON even when a path blew
up, and the landscape's picture is a real PNG, darkest at the minimum."""

from __future__ import annotations

import base64
import json
import math
import struct
import zlib

import numpy as np
import plotly.graph_objects as go
import pytest

from autodiff_core.figures.landscape import (
    COLORS,
    LINE,
    LOSS_NOW,
    LOSSES,
    LOW,
    NOW,
    PATHS,
    TARGET,
    landscape_live_payload,
    landscape_replay_spec,
)
from autodiff_core.figures.theme import present_layout
from autodiff_core.landscape import LandscapeConfig, surface_of, whole_run
from autodiff_core.landscape_story import DOWN
from autodiff_core.optimizers import NAMES
from studio.presenter import present_spec

CONFIGS = [LandscapeConfig(), LandscapeConfig(learning_rate=50.0, steps=60),
           LandscapeConfig(landscape="Rosenbrock's valley", steps=450),
           LandscapeConfig(landscape="Logistic regression", learning_rate=0.3)]


def plain(value):
    return json.loads(json.dumps(value, allow_nan=False))


def spec_of(config):
    snaps = whole_run(config)
    return snaps, landscape_replay_spec(snaps, surface_of(config), config.steps)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.landscape} lr {c.learning_rate:g}")
def test_the_replay_is_what_plotly_makes_of_it_and_draws_the_run(config):
    snaps, spec = spec_of(config)
    assert plain(go.Figure(spec).to_plotly_json()) == plain(spec)  # strict JSON, nothing added or changed
    lowest = surface_of(config).lowest()
    for i, name in enumerate(NAMES):
        path, loss = spec["data"][PATHS + i], spec["data"][LOSSES + i]
        assert path["name"] == name and path["line"]["color"] == COLORS[name]
        finite = [s for s in snaps if math.isfinite(s.w0[i])]
        assert (path["x"], path["y"]) == ([s.w0[i] for s in finite], [s.w1[i] for s in finite])
        drawn = [(s.step, s.loss[i] - lowest) for s in finite if s.loss[i] - lowest > 0]
        assert list(zip(loss["x"], loss["y"], strict=True)) == drawn
    target = spec["data"][TARGET]
    assert target["y"] == [DOWN * (snaps[0].loss[0] - lowest)] * 2  # the dotted line the sentences name


@pytest.mark.parametrize("config", CONFIGS[:2], ids=["bowl", "blow-up"])
def test_a_frame_moves_the_five_dots_and_the_loss_dots_and_nothing_else(config):
    snaps, spec = spec_of(config)
    frames, lowest = spec["frames"], surface_of(config).lowest()
    assert [f["name"] for f in frames] == [str(s.step) for s in snaps]  # every step: under 400 of them
    for frame in frames:
        s = snaps[int(frame["name"])]
        assert frame["traces"] == [NOW, LOSS_NOW]
        dots, losses = frame["data"]
        assert dots["x"] == [v if math.isfinite(v) else None for v in s.w0]
        assert losses["y"] == [v - lowest if math.isfinite(v) and v > lowest else None for v in s.loss]
        assert frame["layout"]["title"]["text"].startswith(f"Step {s.step} of 0–{config.steps}<br>SGD ")
    assert spec["layout"]["title"]["text"] == frames[-1]["layout"]["title"]["text"]  # it opens on the last step


def test_the_valley_floor_is_drawn_where_the_sentences_say_it_is():
    for config, valley in ((LandscapeConfig(), True), (LandscapeConfig(conditioning=1.0), False),
                           (LandscapeConfig(landscape="Rosenbrock's valley"), True),
                           (LandscapeConfig(landscape="Logistic regression"), False)):
        floor = spec_of(config)[1]["data"][0]
        assert floor["name"] == "valley floor" and bool(floor["x"]) == valley
        if valley:
            surface = surface_of(config)
            assert np.allclose(floor["y"], surface.floor(np.array(floor["x"])), rtol=1e-4, atol=1e-4)


def test_the_live_payload_is_strict_json_with_paths_as_points_by_step():
    config = LandscapeConfig(learning_rate=50.0, steps=40)  # three paths blow up
    snaps = whole_run(config)
    data = landscape_live_payload(snaps[:30], surface_of(config), run_id="r", status="running", status_text="",
                                  steps=config.steps)
    json.dumps(data, allow_nan=False)  # the live feed refuses NaN
    for i in range(len(NAMES)):
        path = data["curves"][f"p{PATHS + i}"]
        finite = [s for s in snaps[:30] if math.isfinite(s.w0[i])]
        assert path == {"x": [s.step for s in finite], "y": [[s.w0[i], s.w1[i]] for s in finite]}
    last = data["states"][-1]
    assert last["seq"] == last["step"] == 29 and last["caption"] == "Step 29 of 0–40"
    assert last["traces"][NOW]["x"][3:] == [snaps[29].w0[3], snaps[29].w0[4]]  # RMSprop's and Adam's dots
    assert last["traces"][NOW]["x"][0] is None  # SGD's is gone: no dot, the others keep their colours
    assert [m[0] for m in last["metrics"]] == ["step", *NAMES] and last["metrics"][1][1] == "blew up"


def _rgb(color: str) -> tuple[int, ...]:
    return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))


def decode_png(uri: str) -> np.ndarray:
    """A data URI's PNG (8-bit RGB, filter 0 rows, as png_data_uri writes) back into pixels (h, w, 3)."""
    png = base64.b64decode(uri.split(",", 1)[1])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(png):
        (length,), kind = struct.unpack(">I", png[pos:pos + 4]), png[pos + 4:pos + 8]
        body = png[pos + 8:pos + 8 + length]
        assert struct.unpack(">I", png[pos + 8 + length:pos + 12 + length])[0] == zlib.crc32(kind + body)
        chunks[kind] = body
        pos += 12 + length
    w, h, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, color) == (8, 2)
    rows = zlib.decompress(chunks[b"IDAT"])
    assert len(rows) == h * (1 + 3 * w) and all(rows[r * (1 + 3 * w)] == 0 for r in range(h))
    return np.frombuffer(bytes(b for r in range(h) for b in rows[r * (1 + 3 * w) + 1:(r + 1) * (1 + 3 * w)]),
                         np.uint8).reshape(h, w, 3)


@pytest.mark.parametrize("config", CONFIGS[::2], ids=["bowl", "rosenbrock"])
def test_the_landscape_is_a_png_darkest_where_the_loss_is_lowest(config):
    layout = spec_of(config)[1]["layout"]
    [image] = layout["images"]
    surface = surface_of(config)
    (x0, x1), (y0, y1) = surface.x_range, surface.y_range
    assert (image["x"], image["y"], image["sizex"], image["sizey"]) == (x0, y1, x1 - x0, y1 - y0)
    pixels = decode_png(image["source"]).astype(int)
    h, w, _ = pixels.shape
    col = round((surface.minimum[0] - x0) / (x1 - x0) * (w - 1))
    row = round((y1 - surface.minimum[1]) / (y1 - y0) * (h - 1))  # the picture's first row is its top
    at_minimum, corner = tuple(pixels[row, col]), pixels[0, 0]
    assert at_minimum == _rgb(LOW)  # the lowest shade, and no line through the minimum itself
    assert corner.sum() > sum(at_minimum)  # high up the walls it is paler
    lines = (np.abs(pixels - _rgb(LINE)).sum(-1) < 12).mean()
    assert 0.002 < lines < 0.3  # contour lines, thin ones


def test_in_the_presenter_view_the_landscape_and_the_losses_sit_side_by_side():
    spec = present_spec(plain(spec_of(LandscapeConfig())[1]), fit=True)
    layout = spec["layout"]
    assert layout["xaxis"]["domain"][1] < layout["xaxis2"]["domain"][0] and layout["height"] <= 720
    assert layout["yaxis2"]["tickfont"]["size"] >= 18 and layout["yaxis2"]["tickmode"] == "array"
    assert len(present_layout(dict(layout))["yaxis2"]["tickvals"]) <= 4  # a tick every third decade, not eleven
