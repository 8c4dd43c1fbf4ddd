"""Figure builders for the classification playground: decision surface, points, loss and accuracy.

One column: the decision surface on top (equal units on both axes, so a circle stays a circle), loss and
test accuracy below. Plotly cannot change its layout with the width, and a column fits a phone (390 px)
as well as a projector, where side-by-side plots would push their axis titles into each other.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

from ..playground import PlaygroundSnapshot
from . import _payload, play_duration, thin
from .theme import CLASS_COLORS, FONT_SIZE, OKABE_ITO, base_layout, style

SURFACE = [[0, CLASS_COLORS[0]], [0.5, "#f7f7f7"], [1, CLASS_COLORS[1]]]
SURFACE_RGB = [[int(color[i:i + 2], 16) for i in (1, 3, 5)] for _, color in SURFACE]  # for the live canvas
LOSS_COLOR, ACCURACY_COLOR = OKABE_ITO["orange"], OKABE_ITO["reddish purple"]
LIVE_WINDOW = 8  # a surface is grid*grid numbers: send only the newest few states
LIVE_HEIGHT = 640
REPLAY_FRAMES = 400  # every step of a short run; a frame holds a whole surface (sent as float32, 4 KB)
REPLAY_CURVE = 80  # points of each curve in a frame: 400 frames stay near 3 MB
REPLAY_HEIGHT = 920
REPLAY_TOP = 186  # room for the toolbar, the caption under it and the legend (one row on a laptop, three on a phone)
TOOLBAR = 50  # px above the caption: Plotly's toolbar's row at the top right (as the lesson 3 replay's)
STEP_TICKS = 4  # intervals at most on the step axis: "1,000"-wide labels fit a phone's plot, about 230 px
STEP_CLEAR = 0.88  # the last tick at most this far along the step axis: its centred label stays clear of "0%"
# A regression's score in the accuracy fields: the share of the targets' variance explained, R² (clipped to 0..1)
VARIANCE_EXPLAINED = "variance explained"


def score_name(regression: bool) -> str:
    """What the snapshot's accuracy fields hold: the share of points right, or for a regression the share of
    the targets' variance explained (R²). Every label of lesson 5 names it by this."""
    return VARIANCE_EXPLAINED if regression else "accuracy"


def step_axis(last: int) -> dict:
    """The step axis from 0 to a little past ``last``, ticked at round steps (1, 2 or 5 × 10^k, at most
    STEP_TICKS intervals). Its right end lies past the last tick by enough that the tick's label, centred on it,
    never meets the accuracy axis's "0%" at the plot's right edge, whatever the run's length and the width:
    Plotly's own ticks, chosen for the width, could fall on the very end on a phone."""
    last = max(int(last), 1)
    dtick = next(m * 10**k for k in range(16) for m in (1, 2, 5) if last <= STEP_TICKS * m * 10**k)
    end = last * 1.02
    top = end // dtick * dtick  # the last tick inside the axis (at most STEP_TICKS + 1 of them in all)
    return {"range": [0, max(end, top / STEP_CLEAR)], "tickmode": "linear", "tick0": 0, "dtick": dtick}


def _layout(extent, steps_axis: int, regression: bool = False) -> dict:
    x0, x1, y0, y1 = extent
    layout = base_layout(
        margin={"l": 56, "r": 68, "t": 10, "b": 55},
        plot_bgcolor="rgba(0,0,0,0)", paper_bgcolor="rgba(0,0,0,0)",  # the live surface shows through
        xaxis={"range": [x0, x1], "title": {"text": "X1"}, "zeroline": False, "constrain": "domain"},
        yaxis={"domain": [0.44, 1], "range": [y0, y1], "title": {"text": "X2"}, "zeroline": False,
               "scaleanchor": "x", "scaleratio": 1, "constrain": "domain", "constraintoward": "top"},
        xaxis2={"anchor": "y2", **step_axis(steps_axis), "title": {"text": "step"}, "ticklabelstandoff": 2},
        yaxis2={"domain": [0, 0.25], "anchor": "x2", "range": [0, 1],
                "ticklabelstandoff": 4,  # clear of the step axis's "0"
                "title": {"text": "squared error" if regression else "BCE loss"}},
        yaxis3={"anchor": "x2", "overlaying": "y2", "side": "right", "range": [0, 1.02], "tickformat": ".0%",
                "tickvals": [0, 0.5, 1], "ticklabelstandoff": 3, "showgrid": False,
                "title": {"text": score_name(regression), "font": {"color": ACCURACY_COLOR}}},
        # five entries, each as wide as its text, wrapping only where the width runs out: one row on a
        # laptop, two or three on a phone (fixed columns made four rows everywhere, over a small plot)
        legend={"orientation": "h", "x": 0, "y": 1.01, "yanchor": "bottom", "font": {"size": FONT_SIZE},
                "entrywidthmode": "pixels", "entrywidth": 0, "itemwidth": 30},
    )
    for axis in ("xaxis", "yaxis", "xaxis2", "yaxis2", "yaxis3"):  # the margins above fit the axes: the
        layout[axis]["automargin"] = False  # template's automargin would shrink the replay on a phone
    return layout


def drawn(points, y, regression: bool) -> tuple:
    """Points (tensors) as ``_points`` takes them: with their class, or for a regression with the targets' signs
    and the targets, which colour them. The page, a loaded run and an export draw them through this."""
    y = y.cpu().float().numpy()
    points = points.cpu().float().numpy()
    return (points, (y > 0).astype(np.float32), y) if regression else (points, y)


def _points(train, test) -> list[dict]:
    """Four traces: train and test points of class 0 and 1. ``train`` and ``test`` are ``(points, classes)``,
    or for a regression ``(points, classes, targets)``: the classes are then the targets' signs, and each point
    takes its target's colour on the surface's continuous scale (-1 orange, 0 white, +1 blue)."""
    traces = []
    for (x, y, *values), kind, symbol in ((train, "train", "circle"), (test, "test", "circle-open")):
        for c in (0, 1):
            xy = x[y == c]
            marker = {"color": CLASS_COLORS[c], "size": 7, "symbol": symbol,
                      "line": {"width": 1.5 if kind == "test" else 0.5, "color": "white"
                               if kind == "train" else CLASS_COLORS[c]}}
            if values:  # the most saturated first: the legend shows a trace's first point
                v = np.asarray(values[0])[y == c]
                order = np.argsort(-np.abs(v), kind="stable")
                xy, v = xy[order], v[order]
                marker.update(color=v.tolist(), colorscale=SURFACE, cmin=-1, cmax=1)
                marker["line"] = {"width": marker["line"]["width"], "color": "#888888"}  # a target near 0 is white
            # one legend entry a class, shown by its (filled) training points; the page says hollow is test
            name = f"{kind} {'> 0' if c else '≤ 0'}" if values else (f"class {c}" if kind == "train" else f"test {c}")
            traces.append({"type": "scatter", "mode": "markers", "name": name, "legendgroup": f"class {c}",
                           "showlegend": kind == "train", "x": xy[:, 0].tolist(), "y": xy[:, 1].tolist(),
                           "marker": marker})
    return traces


def _curves(regression: bool = False) -> list[dict]:
    return [
        {"type": "scatter", "mode": "lines", "name": "train loss", "xaxis": "x2", "yaxis": "y2",
         "line": {"color": LOSS_COLOR, "width": 3}},
        {"type": "scatter", "mode": "lines", "name": "test loss", "xaxis": "x2", "yaxis": "y2",
         "line": {"color": LOSS_COLOR, "width": 3, "dash": "dot"}},
        {"type": "scatter", "mode": "lines", "name": f"test {score_name(regression)}", "xaxis": "x2", "yaxis": "y3",
         "line": {"color": ACCURACY_COLOR, "width": 3}},
    ]


def _surface(extent, grid: int, regression: bool = False) -> dict:
    """The decision surface as a heatmap, interpolated like the live chart's canvas (not in blocks). For a
    regression it holds the network's output, -1..1 (``_heat`` turns the snapshot's 0..1 surface into it)."""
    x0, x1, y0, y1 = extent
    name = "output" if regression else "P(class 1)"
    return {"type": "heatmap", "x": np.linspace(x0, x1, grid).tolist(), "y": np.linspace(y0, y1, grid).tolist(),
            "z": [], "zmin": -1 if regression else 0, "zmax": 1, "zsmooth": "best", "colorscale": SURFACE,
            "opacity": 0.8, "showscale": False, "name": name, "showlegend": False,
            "hovertemplate": f"{name} = %{{z:.2f}}<extra></extra>"}


def _heat(s: PlaygroundSnapshot, regression: bool) -> np.ndarray:
    """The snapshot's surface as the heatmap's z: P(class 1), or a regression's output ((output + 1) / 2 stored)."""
    z = np.array(s.surface, np.float32)
    return z * 2 - 1 if regression else z


def caption(s: PlaygroundSnapshot, regression: bool = False) -> str:
    return (f"Step {s.step:,}   train loss {s.train_loss:.3f}   test loss {s.test_loss:.3f}   "
            f"test {score_name(regression)} {s.test_accuracy:.1%}")


def replay_caption(s: PlaygroundSnapshot, regression: bool = False) -> str:
    """The caption on two short lines, so it fits a phone."""
    return (f"Step {s.step:,}   test {score_name(regression)} {s.test_accuracy:.1%}<br>"
            f"train loss {s.train_loss:.3f}   test loss {s.test_loss:.3f}")


def metrics(s: PlaygroundSnapshot, regression: bool = False) -> list[list[str]]:
    name = score_name(regression)
    return [["step", f"{s.step:,}"], ["train loss", f"{s.train_loss:.4f}"], ["test loss", f"{s.test_loss:.4f}"],
            [f"train {name}", f"{s.train_accuracy:.1%}"], [f"test {name}", f"{s.test_accuracy:.1%}"]]


def _loss_top(good: Sequence[PlaygroundSnapshot]) -> float:
    top = max((max(s.train_loss, s.test_loss) for s in good), default=1.0)
    return max(1.0, round(top + 0.05, 1))


def playground_live_payload(snaps: Sequence[PlaygroundSnapshot], extent, grid: int, train, test, *, run_id: str,
                            status: str, status_text: str, steps_axis: int,
                            curve: Sequence[PlaygroundSnapshot] | None = None,
                            diagram: tuple[dict, dict | None] | None = None, flow: tuple[dict, dict] | None = None,
                            regression: bool = False) -> dict:
    """Decision surface under the train (filled) and test (hollow) points, loss and accuracy below.
    The surface travels as a grid per state; the browser draws it on a canvas under the plot area.
    ``curve``: the states the loss and accuracy curves are drawn from (light ones, for every recorded step)
    when ``snaps`` keeps only some of them; ``snaps`` by default.

    Drawn under them while a run goes: ``diagram``, the network (``network.network_live_spec`` and one
    ``network_live_state``, which rides on the newest state, so the diagram repaints once per feed update, a
    few times a second); ``flow``, the gradient flow (``gradflow.gradient_flow_live``), whose curves
    join the others. ``regression``: the axes, legend, heading and metrics name the loss squared error and the
    score the variance explained (R²), which is what the snapshot's accuracy fields hold there."""
    good = [s for s in snaps if not s.diverged]
    points = good if curve is None else [s for s in curve if not s.diverged]
    layout = _layout(extent, steps_axis, regression)
    layout["yaxis2"]["range"] = [0, _loss_top(points)]
    steps = [s.step for s in points]
    curves = {4: {"x": steps, "y": [s.train_loss for s in points]},
              5: {"x": steps, "y": [s.test_loss for s in points]},
              6: {"x": steps, "y": [s.test_accuracy for s in points]}}
    states = [{"seq": s.step, "step": s.step, "traces": {}, "surface": s.surface, "caption": caption(s, regression),
               "metrics": metrics(s, regression)} for s in good[-LIVE_WINDOW:]]
    if diagram is not None and diagram[1] is not None and states:
        states[-1]["diagram"] = diagram[1]
    if flow is not None:
        curves.update(flow[1])
    data = _payload(run_id, status, status_text, layout, _points(train, test) + _curves(regression), curves, states,
                    height=LIVE_HEIGHT, empty_caption="Press Play to train.", window=LIVE_WINDOW,
                    max_behind=LIVE_WINDOW, surface={"colors": SURFACE_RGB})
    data["diagram"], data["flow"] = diagram and diagram[0], flow and flow[0]
    return data


def playground_replay_figure(snaps: Sequence[PlaygroundSnapshot], extent, grid: int, train, test,
                             curve: Sequence[PlaygroundSnapshot] | None = None, regression: bool | None = None):
    """The recorded run as an animation; heatmap frames need redraw, so at most REPLAY_FRAMES of them.
    Each frame carries its own caption; Play continues from the frame shown. ``curve``: the states the loss
    and accuracy curves are drawn from (light ones, for every recorded step), where ``snaps``, thinned in a
    long run, would leave the curves sparse between frames; ``snaps`` by default. ``regression``: name the loss
    and the score as a regression's (squared error, variance explained); by default, when ``train`` carries
    targets (the ``(points, classes, targets)`` of a regression)."""
    import plotly.graph_objects as go

    if regression is None:
        regression = len(train) == 3
    good = [s for s in snaps if not s.diverged]
    points = good if curve is None else [s for s in curve if not s.diverged]
    layout = _layout(extent, max((s.step for s in good), default=1), regression)
    layout["yaxis2"]["range"] = [0, _loss_top(points)]
    layout["margin"] = {**layout["margin"], "t": REPLAY_TOP, "b": 200}
    fig = go.Figure(data=[_surface(extent, grid, regression), *_points(train, test), *_curves(regression)],
                    layout=layout)
    frames = []
    steps = [t.step for t in points]
    for s in thin(good, REPLAY_FRAMES):
        upto = thin(points[:bisect.bisect_right(steps, s.step)], REPLAY_CURVE)  # the curves so far, thinned
        st = np.array([t.step for t in upto], np.int32)  # arrays: quick to build, sent in binary
        train_loss, test_loss, test_acc = (np.array([getattr(t, k) for t in upto], np.float32)
                                           for k in ("train_loss", "test_loss", "test_accuracy"))
        title = {"title": {"text": replay_caption(s, regression)}}
        frames.append(go.Frame(name=str(s.step), traces=[0, 5, 6, 7], layout=title,
                               data=[go.Heatmap(z=_heat(s, regression)), go.Scatter(x=st, y=train_loss),
                                     go.Scatter(x=st, y=test_loss), go.Scatter(x=st, y=test_acc)]))
    fig.frames = frames
    if frames:  # start on the last frame; Play runs from the start, or on from wherever Pause left it
        fig.data[0].z = _heat(good[-1], regression)
        for i, key in ((5, "train_loss"), (6, "test_loss"), (7, "test_accuracy")):
            fig.data[i].update(x=steps, y=[getattr(t, key) for t in points])
    style(fig)
    fig.update_layout(
        height=REPLAY_HEIGHT,
        title={"text": replay_caption(good[-1], regression) if good else "", "x": 0.5, "xanchor": "center",
               "y": 1, "yanchor": "top", "yref": "container", "pad": {"t": TOOLBAR}},
        updatemenus=[play_pause(play_duration(len(frames)))], sliders=[slider([f.name for f in frames])])
    return fig


def _animate(duration: int) -> dict:
    return {"frame": {"duration": duration, "redraw": True}, "mode": "immediate", "transition": {"duration": 0}}


def play_pause(duration: int = 120) -> dict:
    """Play continues from the frame shown (from the start when that is the last); Pause stops there.
    Heatmap frames need ``redraw``. Pause interrupts Plotly's animation, which rejects a promise nobody
    can catch from a figure: the page installs ``studio.animation.quiet_interrupted_animations``."""
    play = {**_animate(duration), "fromcurrent": True}
    return {"type": "buttons", "direction": "left", "x": 0, "y": -0.17, "xanchor": "left", "yanchor": "top",
            "pad": {"t": 0, "r": 10}, "showactive": False,
            "buttons": [{"label": "▶ Play", "method": "animate", "args": [None, play]},
                        {"label": "❚❚ Pause", "method": "animate", "args": [[None], _animate(0)]}]}


def slider(names: list[str]) -> dict:
    """The width under the buttons, so neither covers the other on a phone; inset a little, so the labels at
    its ends stay inside the plot's width (else they push the margins in, and the plots shrink)."""
    return {"active": max(len(names) - 1, 0), "x": 0.06, "len": 0.88, "y": -0.24, "yanchor": "top",
            "pad": {"t": 10, "b": 0}, "currentvalue": {"prefix": "step ", "font": {"size": FONT_SIZE}},
            "font": {"size": FONT_SIZE},
            "steps": [{"label": n, "method": "animate", "args": [[n], _animate(0)]} for n in names]}
