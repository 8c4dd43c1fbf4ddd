"""Pure figure builders: snapshots in, figures out. No training, no Streamlit.

Two kinds of output:
* ``*_live_payload``: plain dicts for the live chart component (Plotly JSON pieces plus the recent
  states to paint). Built without plotly's validators, since they are rebuilt up to ten times a second.
* ``*_figure``: ``go.Figure`` objects for ``st.plotly_chart``: static charts and replay animations.
"""

from __future__ import annotations

import base64
import functools
import json
import math
from collections.abc import Sequence

import numpy as np

from ..logistic import LogisticSnapshot
from ..two_layer import TwoLayerSnapshot
from .replay_layout import picture_first, picture_size
from .theme import CLASS_COLORS, FONT, base_layout, style  # noqa: F401  (re-exported: one theme for all figures)

LOSS_COLOR, ACCURACY_COLOR = "#ff7f0e", "#9467bd"
WINDOW = 60  # recent states sent to the browser on each update
MAX_FRAMES = 400  # replay animations are thinned to about this many frames (every iteration of a short run)


def _finite(*values: float) -> bool:
    return all(math.isfinite(v) for v in values)


def thin(items: Sequence, limit: int = MAX_FRAMES) -> list:
    """At most ``limit`` items, evenly spread, always keeping the first and the last."""
    if len(items) <= limit:
        return list(items)
    idx = np.unique(np.linspace(0, len(items) - 1, limit).round().astype(int))
    return [items[i] for i in idx]


def thin_even(items: Sequence, key, limit: int = MAX_FRAMES) -> list:
    """At most about ``limit`` items whose ``key`` (an iteration) is a multiple of one round stride (1, 2, 5,
    10, 20, ...), and always the last: a replay slider's labels then step evenly ("0 20 40 ... 400"), where
    an even spread of indices gave "180 201 221"."""
    if len(items) <= limit:
        return list(items)
    span = key(items[-1]) - key(items[0])
    stride = next(m * 10 ** e for e in range(12) for m in (1, 2, 5) if span // (m * 10 ** e) + 2 <= limit)
    kept = [it for it in items if key(it) % stride == 0] or [items[0]]
    return kept + ([items[-1]] if kept[-1] is not items[-1] else [])


def _payload(run_id, status, status_text, layout, base, curves, states, *, height=420, empty_caption="",
             window=WINDOW, max_behind=WINDOW // 2, surface=None):
    """The live chart's payload (studio/live_chart.js). The protocol:

    * ``states``: the newest ``window`` states, oldest first, each ``{"seq", "step", "traces", "caption",
      "metrics"}`` (and ``"surface"``). ``seq`` rises with the step (it is the step), and a state with a
      given ``seq`` never changes: the live feed encodes each once and sends it once per chart.
    * ``curves``: ``{trace index: {"x": steps ascending, "y": ...}}``, the whole run so far. The feed sends
      only the points after the chart's newest ``seq``, so x must be in the same units as ``seq``. A key
      ``"p<trace index>"`` is a path: its ``y`` holds points ``[x, y]``, one per step, drawn as the trace's x and y.
    * ``layout`` may change as the run goes (an axis range, say): the feed resends it when it does. So may
      the styles of the ``base`` traces (then the feed resends them, points and all), but not their data:
      the points are sent with the script run, and again only if a trace's style changes.

    ``max_behind``: pending states beyond which the browser jumps ahead instead of painting each.
    ``surface``: colours for a state's ``surface`` (a probability grid drawn under the x/y axes)."""
    return {"run": run_id, "status": status, "status_text": status_text, "layout": layout, "base": base,
            "curves": curves, "states": states[-window:], "height": height, "pace_ms": 20,
            "max_behind": max_behind, "empty_caption": empty_caption, "surface": surface}


# ---- two-layer net ----

def decades(values: Sequence[float]) -> list[float]:
    """A log-axis range of whole decades around ``values`` (log10 units). Fixed ranges let the browser
    repaint traces without laying out the axes again, and whole decades change only now and then."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    if not positive:
        return [0.0, 1.0]
    return [math.floor(math.log10(min(positive))), math.ceil(math.log10(max(positive)) + 1e-9)]


def two_layer_metrics(s: TwoLayerSnapshot) -> list[list[str]]:
    return [["step", f"{s.step:,}"], ["loss", f"{s.loss:.4g}"], ["‖w1‖", f"{s.w1_norm:.4g}"],
            ["‖w2‖", f"{s.w2_norm:.4g}"], ["‖∂loss/∂w1‖", f"{s.grad_w1_norm:.3g}"],
            ["‖∂loss/∂w2‖", f"{s.grad_w2_norm:.3g}"]]


def two_layer_live_payload(snaps: Sequence[TwoLayerSnapshot], *, run_id: str, status: str, status_text: str,
                           steps: int) -> dict:
    """Loss curve on a log scale, with the weight and gradient norms as metrics.

    A diverged run's last loss is drawn when it is still a number (the explosion is the lesson); while
    a run goes the x-axis spans all its steps, and once it has ended it fits the steps it took."""
    good = [s for s in snaps if _finite(s.loss) and s.loss > 0]
    # A run that diverged to inf or nan ends on a state with no point to draw: it still gets the heading.
    shown = good + [snaps[-1]] if snaps and snaps[-1].diverged and (not good or snaps[-1] is not good[-1]) else good
    end = steps - 1 if status in ("running", "idle") or not shown else shown[-1].step
    layout = {
        **base_layout(), "margin": {"l": 70, "r": 20, "t": 10, "b": 55},
        "xaxis": {"title": {"text": "step"}, "range": [0, max(end, 1)],
                  **({"tick0": 0, "dtick": 1} if end <= 10 else {})},  # a step is a whole number
        "yaxis": {"title": {"text": "loss (sum of squares)"}, "type": "log", "exponentformat": "power",
                  "range": decades([s.loss for s in good])},
        "showlegend": False,
    }
    base = [{"type": "scatter", "mode": "lines+markers" if len(good) < 20 else "lines", "name": "loss",
             "line": {"width": 3, "color": "#1f77b4"}, "marker": {"size": 8}}]
    curves = {0: {"x": [s.step for s in good], "y": [s.loss for s in good]}}
    states = [{"seq": s.step, "step": s.step, "traces": {}, "caption": _two_layer_caption(s, steps),
               "metrics": two_layer_metrics(s)} for s in shown[-WINDOW:]]
    return _payload(run_id, status, status_text, layout, base, curves, states,
                    empty_caption="Press Train to start.")


def _two_layer_caption(s: TwoLayerSnapshot, steps: int) -> str:
    """"Step 298 of 0–499": the steps count from 0, as the loop and the x-axis do, so the last reads as the last."""
    last = " (the last)" if s.step == steps - 1 and not s.diverged else ""
    return f"Step {s.step:,} of 0–{steps - 1:,}{last}" + (": diverged" if s.diverged else "")


# ---- logistic regression ----

def data_ranges(x: np.ndarray, pad: float = 1.0) -> tuple[list[float], list[float]]:
    """Fixed axis ranges around the points, so the view never jumps while the boundary moves."""
    lo, hi = x.min(axis=0) - pad, x.max(axis=0) + pad
    return [float(lo[0]), float(hi[0])], [float(lo[1]), float(hi[1])]


def boundary_line(s: LogisticSnapshot, x_range: list[float]) -> dict:
    """The line w0*x + w1*y + b = 0 across the plot, as a trace update (vertical when w1 == 0)."""
    if not _finite(s.w0, s.w1, s.b) or (s.w0 == 0 and s.w1 == 0):
        return {"x": [], "y": []}
    if s.w1 == 0:
        x = -s.b / s.w0
        return {"x": [x, x], "y": [-1e6, 1e6]}
    xs = list(x_range)
    return {"x": xs, "y": [(-s.w0 * v - s.b) / s.w1 for v in xs]}


def logistic_caption(s: LogisticSnapshot) -> str:
    """The tutorial's caption: iteration, w0, w1, b and accuracy (and its Loss= label)."""
    return (f"Iteration: {s.iteration}   w0: {s.w0:.2f}   w1: {s.w1:.2f}   b: {s.b:.2f}   "
            f"accuracy: {s.accuracy:.2%}   Loss={s.loss:.4f}")


def logistic_metrics(s: LogisticSnapshot) -> list[list[str]]:
    return [["iteration", f"{s.iteration:,}"], ["loss", f"{s.loss:.4f}"], ["accuracy", f"{s.accuracy:.1%}"],
            ["w0", f"{s.w0:.3f}"], ["w1", f"{s.w1:.3f}"], ["b", f"{s.b:.3f}"]]


LIVE_HEIGHT = 760
WRAP_LEGEND = {"itemwidth": 30, "x": 0, "xanchor": "left"}  # its groups wrap where the width runs out
REPLAY_MARGIN = (56, 40)  # px left and right of the replay: a phone's picture gets the width (replay_layout)


def _logistic_layout(x: np.ndarray, last_iteration: int, max_loss: float = 1.0, *, top: int = 110,
                     bottom: int = 60) -> dict:
    """The points above, loss and accuracy below: one column that fits a phone and a projector alike.

    The scatter keeps equal units on both axes, so the boundary's angle is the true one. The legend sits
    above the points; the loss and accuracy curves are named by their axis titles, in their colours."""
    xr, yr = data_ranges(x)
    return {
        **base_layout(), "margin": {"l": 70, "r": 70, "t": top, "b": bottom},
        "xaxis": {"range": xr, "title": {"text": "x₀"}, "zeroline": False, "constrain": "domain"},
        "yaxis": {"domain": [0.42, 1], "range": yr, "title": {"text": "x₁"}, "zeroline": False,
                  "scaleanchor": "x", "scaleratio": 1, "constrain": "domain"},
        "xaxis2": {"anchor": "y2", "range": [0, max(last_iteration, 1)], "title": {"text": "iteration"}},
        "yaxis2": {"domain": [0, 0.27], "anchor": "x2", "range": [0, _nice_ceiling(max_loss)],
                   "title": {"text": "BCE loss", "font": {"color": LOSS_COLOR}}},
        "yaxis3": {"anchor": "x2", "overlaying": "y2", "side": "right", "range": [0, 1.02],
                   "tickvals": [0, 0.5, 1], "tickformat": ".0%", "showgrid": False,
                   "ticklabelstandoff": 10,  # "100%" clear of the accuracy's end marker on the plot's edge
                   "title": {"text": "accuracy", "font": {"color": ACCURACY_COLOR}}},
        "legend": {"orientation": "h", "x": 0.5, "xanchor": "center", "y": 1.02, "yanchor": "bottom"},
        "uirevision": "keep",
    }


def _nice_ceiling(v: float) -> float:
    """The smallest of 1, 2 or 5 times a power of ten that is >= v: a loss axis that rarely changes."""
    if not math.isfinite(v) or v <= 0:
        return 1.0
    p = 10 ** math.floor(math.log10(v))
    return next(m * p for m in (1, 2, 5, 10) if m * p >= v)


def _logistic_base(x: np.ndarray, y: np.ndarray) -> list[dict]:
    # each entry a legend group of its own: a horizontal legend that wraps then sizes each by its text (ungrouped
    # entries get columns as wide as the widest: three rows on a phone)
    points = [{"type": "scatter", "mode": "markers", "name": f"class {c}", "legendgroup": f"class {c}",
               "x": x[y == c, 0].tolist(),
               "y": x[y == c, 1].tolist(), "marker": {"color": CLASS_COLORS[c], "size": 8, "opacity": 0.8}}
              for c in (0, 1)]
    return points + [
        {"type": "scatter", "mode": "lines", "name": "decision boundary", "legendgroup": "boundary", "x": [], "y": [],
         "line": {"color": "#2ca02c", "width": 4}},
        {"type": "scatter", "mode": "lines", "name": "loss", "xaxis": "x2", "yaxis": "y2", "showlegend": False,
         "line": {"color": LOSS_COLOR, "width": 3}},  # named by its axis title, in its colour
        {"type": "scatter", "mode": "lines", "name": "accuracy", "xaxis": "x2", "yaxis": "y3", "showlegend": False,
         "line": {"color": ACCURACY_COLOR, "width": 3, "dash": "dot"}},
    ]


def logistic_live_payload(snaps: Sequence[LogisticSnapshot], x: np.ndarray, y: np.ndarray, *, run_id: str,
                          status: str, status_text: str, max_iterations: int) -> dict:
    """Points, the moving boundary, and loss and accuracy curves beside them."""
    good = [s for s in snaps if not s.diverged]
    layout = _logistic_layout(x, max_iterations - 1, max((s.loss for s in good), default=1.0))
    span = _boundary_span(layout["xaxis"]["range"])
    curves = {3: {"x": [s.iteration for s in good], "y": [s.loss for s in good]},
              4: {"x": [s.iteration for s in good], "y": [s.accuracy for s in good]}}
    states = [{"seq": s.iteration, "step": s.iteration, "traces": {2: boundary_line(s, span)},
               "caption": logistic_caption(s), "metrics": logistic_metrics(s), "weights": [s.w0, s.w1, s.b]}
              for s in good[-WINDOW:]]  # weights: where a student who forks the run goes on from
    return _payload(run_id, status, status_text, layout, _logistic_base(x, y), curves, states,
                    height=LIVE_HEIGHT, empty_caption="Press Train to start.")


def replay_caption(s: LogisticSnapshot) -> str:
    """The tutorial's caption on three short lines, so it fits a phone."""
    return (f"Iteration: {s.iteration}<br>accuracy: {s.accuracy:.2%}   Loss={s.loss:.4f}<br>"
            f"w0: {s.w0:.2f}   w1: {s.w1:.2f}   b: {s.b:.2f}")


def logistic_replay_figure(snaps: Sequence[LogisticSnapshot], x: np.ndarray, y: np.ndarray,
                           max_iterations: int):
    """The finished run as an animation: Play/Pause and a slider, played by the browser alone.

    The loss and accuracy curves show the whole run, and a dot on each marks the frame's iteration. Every
    frame carries its own title, so the caption follows the slider and Play. The iteration axis ends
    where the run ended (``max_iterations`` only when nothing was recorded)."""
    import plotly.graph_objects as go

    return go.Figure(logistic_replay_spec(snaps, x, y, max_iterations))


class FigureSpec(dict):
    """A figure's JSON, made as plotly's validators would leave it (its builder's tests check that they change
    nothing). Whatever draws a figure through ``to_plotly_json()`` (``studio.charts.plot``) draws it as it is."""

    def to_plotly_json(self) -> dict:
        return self


def logistic_replay_spec(snaps: Sequence[LogisticSnapshot], x: np.ndarray, y: np.ndarray,
                         max_iterations: int) -> FigureSpec:
    """``logistic_replay_figure`` as plotly JSON, as plotly's validators leave it (tests check that they
    change nothing). Lesson 3's page draws this: validating 381 frames and a slider of 381 steps cost
    0.1-0.3 s of the server's one GIL per finished run, thirty times over when a class ends together."""
    good = [s for s in snaps if not s.diverged]
    last = good[-1].iteration if good else max_iterations - 1
    layout = _logistic_layout(x, last, max((s.loss for s in good), default=1.0))
    layout["margin"].update(l=REPLAY_MARGIN[0], r=REPLAY_MARGIN[1])
    xr = _boundary_span(layout["xaxis"]["range"])
    # A frame changes only the boundary and the two dots (REPLAY_TRACES), a few numbers each: when every
    # frame redrew the curves so far, 381 frames came to 1.3 MB, and building and checking them cost the
    # server 0.1-0.3 s per finished run; thirty runs ending together made the last live feeds wait seconds.
    frames = [{"name": str(s.iteration), "traces": list(REPLAY_TRACES), "data": _replay_frame_data(s, xr),
               "layout": {"title": {"text": replay_caption(s)}}} for s in thin_even(good, lambda s: s.iteration)]
    base = _logistic_base(x, y)
    base[3].update(x=_typed(np.array([t.iteration for t in good], np.int32)),
                   y=_typed(np.array([t.loss for t in good], np.float32)))
    base[4].update(x=base[3]["x"], y=_typed(np.array([t.accuracy for t in good], np.float32)))
    base += [{"type": "scatter", "mode": "markers", "name": name, "xaxis": "x2", "yaxis": axis, "showlegend": False,
              "x": [], "y": [], "hoverinfo": "name+x+y", "marker": {"color": color, "size": 13,
                                                                      "line": {"color": "white", "width": 2}}}
             for name, axis, color in (("loss now", "y2", LOSS_COLOR), ("accuracy now", "y3", ACCURACY_COLOR))]
    if frames:  # start on the final state; Play runs from the beginning
        for i, update in zip(REPLAY_TRACES, frames[-1]["data"], strict=True):
            base[i].update(x=update["x"], y=update["y"])
    # The house look (theme.style) and the replay's own layout, in the one layout the figure is made with:
    # each update_layout on a figure of 400 frames took 10-30 ms more.
    layout.update(legend={**layout["legend"], **base_layout()["legend"], **WRAP_LEGEND},
                  title={**base_layout()["title"], "text": frames[-1]["layout"]["title"]["text"] if frames else "",
                         "x": 0.5, "xanchor": "center"},
                  updatemenus=[_play_pause(redraw=True, x=0, duration=play_duration(len(frames)))],
                  sliders=[_slider([f["name"] for f in frames], x=0, length=1, redraw=True)])
    picture_first(layout, picture=picture_size(layout["xaxis"]["range"], layout["yaxis"]["range"], layout["margin"]),
                  caption_lines=3, legend_rows=2)  # "class 0  class 1" over "decision boundary" on a phone
    layout["template"] = _template(layout["template"])  # plotly.js knows no template by name
    if not frames:
        del layout["sliders"][0]["steps"]  # as plotly's validators drop an empty list
    return FigureSpec(data=base, layout=layout, **({"frames": frames} if frames else {}))


@functools.cache
def _template_json(name: str) -> str:
    import plotly.io as pio

    return json.dumps(pio.templates[name].to_plotly_json())


def _template(name: str) -> dict:
    """Plotly's template ``name`` in full, as a figure's validators expand it; a fresh copy each time."""
    return json.loads(_template_json(name))


REPLAY_TRACES = (2, 5, 6)  # what a replay frame changes: the boundary, the dot on the loss, the dot on the accuracy


def _replay_frame_data(s: LogisticSnapshot, x_range: list[float]) -> list[dict]:
    line = boundary_line(s, x_range)
    return [{"type": "scatter", "x": [_short(v) for v in line["x"]], "y": [_short(v) for v in line["y"]]},
            {"type": "scatter", "x": [s.iteration], "y": [_short(s.loss)]},
            {"type": "scatter", "x": [s.iteration], "y": [_short(s.accuracy)]}]


def _short(v: float) -> float:
    """Six significant digits: a pixel's worth on any screen, and a third of the JSON of a full double."""
    return float(f"{v:.6g}")


_TYPED = {"int32": "i4", "float32": "f4", "float64": "f8"}


def _typed(a: np.ndarray) -> dict:
    """A numpy array as plotly.js's binary array (what plotly would make of it when sending, made once here
    rather than after its validators have copied it)."""
    a = np.ascontiguousarray(a)
    return {"dtype": _TYPED[str(a.dtype)], "bdata": base64.b64encode(a.tobytes()).decode("ascii")}


def _boundary_span(x_range: list[float]) -> list[float]:
    """The boundary drawn well past the points, so it crosses the whole plot however wide it is."""
    pad = 10 * (x_range[1] - x_range[0])
    return [x_range[0] - pad, x_range[1] + pad]


def play_duration(frames: int) -> int:
    """Milliseconds a frame while playing: a whole replay in about 12 s, however many frames it has."""
    return max(30, min(120, 12_000 // max(frames, 1)))


def _play_pause(*, redraw: bool = False, x: float = 0, y: float = -0.2, duration: int = 120) -> dict:
    """Play continues from the shown frame (from the start when it shows the last); Pause stops there.

    Pausing interrupts Plotly's animation, whose promise then rejects with ``undefined`` and nobody can
    catch it from here: ``studio.animation.quiet_interrupted_animations`` keeps that off the console."""
    play = {"frame": {"duration": duration, "redraw": redraw}, "fromcurrent": True, "mode": "immediate",
            "transition": {"duration": 0}}
    pause = {"frame": {"duration": 0, "redraw": redraw}, "mode": "immediate", "transition": {"duration": 0}}
    return {"type": "buttons", "direction": "left", "x": x, "y": y, "xanchor": "left", "yanchor": "top",
            "pad": {"t": 0, "r": 10}, "showactive": False,
            "buttons": [{"label": "▶ Play", "method": "animate", "args": [None, play]},
                        {"label": "❚❚ Pause", "method": "animate", "args": [[None], pause]}]}


def _slider(names: list[str], *, x: float = 0.25, length: float = 0.75, y: float = -0.14,
            redraw: bool = False) -> dict:
    return {"active": max(len(names) - 1, 0), "x": x, "len": length, "y": y, "yanchor": "top",
            "pad": {"t": 10, "b": 0}, "currentvalue": {"prefix": "iteration "},
            "steps": [{"label": n, "method": "animate",
                       "args": [[n], {"mode": "immediate", "frame": {"duration": 0, "redraw": redraw},
                                      "transition": {"duration": 0}}]} for n in names]}
