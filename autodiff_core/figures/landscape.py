"""Lesson 7's charts: the loss landscape as contours with each optimizer's path on it, and below it each one's
loss (its height above the lowest, on a log scale). Pure: a surface and snapshots in, plotly JSON out.

The live payload sends each path as a curve of points (``"p<trace>"``: ``[w0, w1]`` by step), which the live
chart draws up to the state it paints, so a state carries only the five current positions. The replay draws
the whole paths at once; its frames move a dot along each path and on each loss curve.
"""

from __future__ import annotations

import base64
import functools
import math
import struct
import zlib
from collections.abc import Sequence

import numpy as np

from ..landscape import LandscapeSnapshot
from ..landscape_story import DOWN
from ..optimizers import NAMES
from ..surfaces import Surface
from . import FigureSpec, _payload, _play_pause, _slider, _template, play_duration, thin_even
from .classroom import RunFigures
from .theme import OKABE_ITO, base_layout

COLORS = dict(zip(NAMES, (OKABE_ITO["vermillion"], OKABE_ITO["blue"], OKABE_ITO["bluish green"],
                          OKABE_ITO["reddish purple"], OKABE_ITO["orange"]), strict=True))
N = len(NAMES)
PATHS, LOSSES = 3, 4 + N  # the first of each group of five traces: the paths, the loss curves
NOW, TARGET, LOSS_NOW = 3 + N, 4 + 2 * N, 5 + 2 * N  # where each one is now (one trace of five dots); the dotted
# line at 99.9% of the way down; each one's loss now (five dots)
LIVE_HEIGHT, REPLAY_HEIGHT = 760, 960
DECADES = 10  # the loss axis reaches at most this far below the start's height above the lowest
IMAGE_WIDTH, LEVELS = 480, 18  # the landscape's picture: pixels across, and contour lines of loss
LOW, LINE = "#c6dbef", "#9aa5b1"  # its shade at the lowest point, and its lines


def contour_image(surface: Surface, start_gap: float) -> dict:
    """The landscape as a picture under the axes (a layout image): log10(loss − lowest) as a shade, paler the
    higher, with a grey contour line at each of ``LEVELS`` even steps of it, so the lines stay evenly spaced down
    a deep, narrow valley. A picture, not a contour trace: Plotly's animation path, which the live chart paints
    with, drops contour traces. Drawn once per surface (a live run's payload is rebuilt a few times a second)."""
    (x0, x1), (y0, y1) = surface.x_range, surface.y_range
    return {"source": _contour_png(surface, start_gap), "xref": "x", "yref": "y", "x": x0, "y": y1,
            "sizex": x1 - x0, "sizey": y1 - y0, "sizing": "stretch", "layer": "below"}


@functools.lru_cache(maxsize=16)
def _contour_png(surface: Surface, start_gap: float) -> str:
    (x0, x1), (y0, y1) = surface.x_range, surface.y_range
    nx = IMAGE_WIDTH
    ny = max(2, round(nx * (y1 - y0) / (x1 - x0)))
    _, _, z = surface.grid(nx, ny)
    shade = np.log10(np.maximum(z - surface.lowest(), 0) + 1e-2 * start_gap)  # (ny, nx), a row per y upwards
    level = (shade - shade.min()) / max(np.ptp(shade), 1e-12) * LEVELS  # 0 at the lowest point, LEVELS highest
    # a line one pixel wide wherever the level crosses a whole number: its distance from the nearest one, in
    # pixels, from how fast the level changes from one pixel to the next (antialiased, as a shader draws them)
    nearest = np.clip(np.round(level), 1, LEVELS - 1)
    per_pixel = np.hypot(*np.gradient(level)) + 1e-12
    ink = np.clip(1 - np.abs(level - nearest) / per_pixel, 0, 1)[..., None]  # (ny, nx, 1)
    low, high, line = (np.array(_rgb(c), np.float64) for c in (LOW, "#ffffff", LINE))
    fill = low + (high - low) * (level / LEVELS)[..., None]  # (ny, nx, 3)
    rgb = fill * (1 - ink) + line * ink
    return png_data_uri(rgb[::-1].round().astype(np.uint8))  # the image's first row is its top


def _rgb(color: str) -> tuple[int, int, int]:
    return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))


def png_data_uri(rgb: np.ndarray) -> str:
    """An (h, w, 3) uint8 picture as a PNG in a data URI: drawn by the browser, fetched from nowhere."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[r].tobytes() for r in range(h))  # each row: filter type 0, then its pixels

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _round(values) -> list[float]:
    return [float(f"{v:.5g}") for v in values]


def _base(surface: Surface, start_gap: float, steps: int) -> list[dict]:
    """Every trace, in the order the indices above name; the paths and curves empty (the states fill them)."""
    floor_x = np.linspace(*surface.x_range, 101) if surface.floor is not None else np.array([])
    floor_y = surface.floor(floor_x) if surface.floor is not None else np.array([])
    marks = [{"type": "scatter", "mode": "lines", "name": "valley floor", "x": _round(floor_x),
              "y": _round(floor_y), "line": {"color": "#555555", "width": 1.5, "dash": "dash"}, "hoverinfo": "name",
              "showlegend": False},
             {"type": "scatter", "mode": "markers+text", "name": "minimum", "x": [surface.minimum[0]],
              "y": [surface.minimum[1]], "text": ["min"], "textposition": "bottom center", "showlegend": False,
              "marker": {"symbol": "star", "size": 16, "color": "#000000"}},
             {"type": "scatter", "mode": "markers+text", "name": "start", "x": [surface.start[0]],
              "y": [surface.start[1]], "text": ["start"], "textposition": _beside(surface), "showlegend": False,
              "marker": {"symbol": "circle-open", "size": 14, "color": "#000000", "line": {"width": 2}}}]
    paths = [{"type": "scatter", "mode": "lines", "name": n, "x": [], "y": [], "legendgroup": n,
              "line": {"color": COLORS[n], "width": 2.5}, "marker": {"color": COLORS[n], "size": 4}} for n in NAMES]
    losses = [{"type": "scatter", "mode": "lines", "name": f"{n} loss", "x": [], "y": [], "xaxis": "x2",
               "yaxis": "y2", "legendgroup": n, "showlegend": False, "line": {"color": COLORS[n], "width": 2.5}}
              for n in NAMES]
    target = {"type": "scatter", "mode": "lines", "name": "99.9% of the way down", "x": [0, max(steps, 1)],
              "y": [DOWN * start_gap] * 2, "xaxis": "x2", "yaxis": "y2", "showlegend": False, "hoverinfo": "name",
              "line": {"color": "#555555", "width": 1.5, "dash": "dot"}}
    return [*marks, *paths, _dots("now", "x", "y", 13), *losses, target, _dots("loss now", "x2", "y2", 10)]


def _beside(surface: Surface) -> str:
    """Where the start's label goes: away from the nearer side of the view."""
    (x0, x1), x = surface.x_range, surface.start[0]
    return "top left" if x > (x0 + x1) / 2 else "top right"


def _dots(name: str, xaxis: str, yaxis: str, size: int) -> dict:
    """One trace of five dots, one per optimizer in its colour (a state moves one trace, not five)."""
    return {"type": "scatter", "mode": "markers", "name": name, "x": [None] * N, "y": [None] * N, "xaxis": xaxis,
            "yaxis": yaxis, "showlegend": False, "hoverinfo": "x+y",
            "marker": {"color": list(COLORS.values()), "size": size, "line": {"color": "white", "width": 2}}}


def _layout(surface: Surface, steps: int, start_gap: float, *, top: int, bottom: int) -> dict:
    """The landscape above with equal units on both axes (a valley's true shape), the losses below: one column
    that fits a phone; the presenter view puts them side by side."""
    return {
        **base_layout(), "margin": {"l": 70, "r": 20, "t": top, "b": bottom},
        "xaxis": {"range": list(surface.x_range), "title": {"text": "w0"}, "zeroline": False, "constrain": "domain"},
        "yaxis": {"domain": [0.42, 1], "range": list(surface.y_range), "title": {"text": "w1"}, "zeroline": False,
                  "scaleanchor": "x", "scaleratio": 1, "constrain": "domain", "constraintoward": "top"},
        "xaxis2": {"anchor": "y2", "range": [0, max(steps, 1)], "title": {"text": "step"}},
        "yaxis2": {"domain": [0, 0.27], "anchor": "x2", "type": "log", "exponentformat": "power",
                   "range": loss_range(start_gap), "tickmode": "array", **_decade_ticks(loss_range(start_gap)),
                   "title": {"text": "loss − lowest"}},
        "legend": {"orientation": "h", "x": 0.5, "xanchor": "center", "y": 1.02, "yanchor": "bottom"},
        "images": [contour_image(surface, start_gap)], "uirevision": "keep",
    }


def loss_range(start_gap: float) -> list[float]:
    """Fixed while a run goes (a new range would lay the chart out again): from ``DECADES`` decades below the
    start's height above the lowest to a decade above it, where a climbing path still shows."""
    top = math.ceil(math.log10(start_gap) + 1e-9) + 1
    return [float(top - 1 - DECADES), float(top)]


def _decade_ticks(span: list[float]) -> dict:
    """A tick every third decade, written 10ᵏ (a tick at every one of eleven crowds a projector's axis)."""
    powers = [k for k in range(int(span[1]), int(span[0]) - 1, -1) if k % 3 == 0]  # 1, 10⁻³, 10⁻⁶, ...
    return {"tickvals": [10.0 ** k for k in powers],
            "ticktext": [{0: "1", 1: "10"}.get(k, f"10<sup>{k}</sup>".replace("-", "−")) for k in powers]}


def _points(snaps: Sequence[LandscapeSnapshot], i: int) -> list[LandscapeSnapshot]:
    return [s for s in snaps if math.isfinite(s.w0[i]) and math.isfinite(s.w1[i])]


def caption(s: LandscapeSnapshot, steps: int) -> str:
    """"Step 37 of 0–100": the steps count from 0, the start."""
    return f"Step {s.step:,} of 0–{steps:,}"


def _num(v: float, digits: int = 3) -> str:
    return f"{v:.{digits}g}" if math.isfinite(v) else "blew up"


def landscape_live_payload(snaps: Sequence[LandscapeSnapshot], surface: Surface, *, run_id: str, status: str,
                           status_text: str, steps: int) -> dict:
    """The live chart's payload: each path and loss curve so far, and a state per step with the five dots."""
    lowest = surface.lowest()
    start_gap = _start_gap(snaps, surface, lowest)
    curves = {}
    for i in range(N):
        pts = _points(snaps, i)
        curves[f"p{PATHS + i}"] = {"x": [s.step for s in pts], "y": [[s.w0[i], s.w1[i]] for s in pts]}
        good = [(s.step, s.loss[i] - lowest) for s in pts if s.loss[i] - lowest > 0]
        curves[LOSSES + i] = {"x": [g[0] for g in good], "y": [g[1] for g in good]}
    states = [{"seq": s.step, "step": s.step, "caption": caption(s, steps),
               "metrics": [["step", f"{s.step:,}"], *([n, _num(s.loss[i])] for i, n in enumerate(NAMES))],
               "traces": {NOW: _now(s)}} for s in snaps[-60:]]
    layout = _layout(surface, steps, start_gap, top=110, bottom=60)
    return _payload(run_id, status, status_text, layout, _base(surface, start_gap, steps), curves, states,
                    height=LIVE_HEIGHT, empty_caption="Press Train to draw the paths live.")


def _now(s: LandscapeSnapshot) -> dict:
    """The five dots where the optimizers stand: None for a path that blew up (no dot, the others keep their
    colours)."""
    return {"x": [_finite(v) for v in s.w0], "y": [_finite(v) for v in s.w1]}


def _finite(v: float) -> float | None:
    return v if math.isfinite(v) else None


def _start_gap(snaps: Sequence[LandscapeSnapshot], surface: Surface, lowest: float) -> float:
    """How far above the lowest the start is: what the loss axis and the landscape's shades are scaled by (1 when
    it is no finite number, as on a landscape where every path blew up at once)."""
    gap = (snaps[0].loss[0] if snaps else surface.at(surface.start)) - lowest
    return max(gap, 1e-12) if math.isfinite(gap) else 1.0


def replay_caption(s: LandscapeSnapshot, steps: int) -> str:
    """The step and each optimizer's loss, on four short lines, so it fits a phone."""
    parts = [f"{n} {_num(s.loss[i], 2)}" for i, n in enumerate(NAMES)]
    pairs = ["   ".join(parts[i:i + 2]) for i in range(0, N, 2)]
    return "<br>".join([caption(s, steps), *pairs])


def landscape_replay_spec(snaps: Sequence[LandscapeSnapshot], surface: Surface, steps: int) -> FigureSpec:
    """The finished run: every path drawn whole, and frames (Play, slider) that move a dot along each path and
    on each loss curve, with the losses of that step as the title. Plotly JSON as its validators leave it."""
    lowest = surface.lowest()
    start_gap = _start_gap(snaps, surface, lowest)
    base = _base(surface, start_gap, steps)
    for i in range(N):
        pts = _points(snaps, i)
        base[PATHS + i].update(x=[s.w0[i] for s in pts], y=[s.w1[i] for s in pts])
        good = [(s.step, s.loss[i] - lowest) for s in pts if s.loss[i] - lowest > 0]
        base[LOSSES + i].update(x=[g[0] for g in good], y=[g[1] for g in good])
    frames = [{"name": str(s.step), "traces": [NOW, LOSS_NOW],
               "data": _frame_data(s, lowest), "layout": {"title": {"text": replay_caption(s, steps)}}}
              for s in thin_even(list(snaps), lambda s: s.step)]
    if frames:  # start on the final state; Play runs from the beginning
        for i, update in zip(frames[-1]["traces"], frames[-1]["data"], strict=True):
            base[i].update(x=update["x"], y=update["y"])
    layout = _layout(surface, steps, start_gap, top=240, bottom=200)
    layout.update(height=REPLAY_HEIGHT, legend={**layout["legend"], **base_layout()["legend"]},
                  title={**base_layout()["title"], "text": frames[-1]["layout"]["title"]["text"] if frames else "",
                         "x": 0.5, "xanchor": "center", "y": 1, "yanchor": "top", "yref": "container",
                         "pad": {"t": 52}},
                  updatemenus=[_play_pause(redraw=True, x=0, y=-0.16, duration=play_duration(len(frames)))],
                  sliders=[_slider([f["name"] for f in frames], x=0, length=1, y=-0.23, redraw=True)])
    layout["sliders"][0]["currentvalue"]["prefix"] = "step "
    layout["template"] = _template(layout["template"])
    if not frames:
        del layout["sliders"][0]["steps"]
    return FigureSpec(data=base, layout=layout, **({"frames": frames} if frames else {}))


def _frame_data(s: LandscapeSnapshot, lowest: float) -> list[dict]:
    gaps = [v - lowest for v in s.loss]
    shown = [g if math.isfinite(g) and g > 0 else None for g in gaps]  # a log axis draws no 0
    return [{"type": "scatter", **_now(s)},
            {"type": "scatter", "x": [s.step if g is not None else None for g in shown], "y": shown}]


def _replay(config, snaps: Sequence[LandscapeSnapshot]):
    import plotly.graph_objects as go

    from ..landscape import surface_of

    return go.Figure(landscape_replay_spec(snaps, surface_of(config), config.steps))


# A finished run for a class: its replay, and SGD's height above the lowest as the loss curve that ghosts, the
# board and a question's outcome read (plain gradient descent: the reference the other four are measured by).
LANDSCAPE = RunFigures(curve=lambda s: (s.step, s.loss[0] - s.lowest), replay=_replay, axes=("x2", "y2"),
                       positive=True, decided_by_settings=True)
