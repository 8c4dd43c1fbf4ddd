"""Figures for a classroom: any finished run's replay from its config and snapshots (also a loaded run
file), and the "ghosts" of earlier runs drawn faintly beside the current one, each labelled by the settings
in which it differs; and a replay as one HTML file that plays with no network (``standalone_html``)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..logistic import LogisticSnapshot, logistic_data
from ..playground import Playground
from . import (
    _nice_ceiling,
    _play_pause,
    _slider,
    boundary_line,
    data_ranges,
    decades,
    logistic_replay_figure,
    play_duration,
    thin,
    thin_even,
)
from .playground import drawn, playground_replay_figure
from .theme import base_layout, recolor, style, without_template

CURVE_POINTS = 150  # points of the loss curve in one replay frame
GHOST_COLORS = ("#555555", "#8c6d31", "#a0a0a0")  # dark grey, brown, light grey: none near a run's colours
GHOST_DASH = "dashdot"  # lesson 3's accuracy line is dotted: a ghost must not read as it
PIN_COLOR = "#000000"
SHORT = {"learning_rate": "lr", "n_per_class": "points", "max_iterations": "max iterations",
         "record_every": "every", "stop_accuracy": "stop at", "test_fraction": "test", "batch_size": "batch",
         "data_seed": "data seed", "init_seed": "seed", "hidden": "layers", "D_in": "D_in", "N": "N", "H": "H"}
UNLABELLED = {"device", "start", "first_iteration"}  # where it ran, or from which state, is not a setting


def difference_label(config, reference, limit: int = 3) -> str:
    """The settings in which ``config`` differs from ``reference``: "lr 0.5", "no zero_grad"."""
    parts = []
    for f in dataclasses.fields(config):
        a, b = getattr(config, f.name), getattr(reference, f.name, None)
        if a == b or f.name in UNLABELLED:
            continue
        if f.name == "points":  # the class's own: how many, not each
            parts.append(f"{len(a)} own points")
        elif isinstance(a, bool):
            parts.append(f.name if a else f"no {f.name}")
        elif isinstance(a, float):
            parts.append(f"{SHORT.get(f.name, f.name)} {a:g}")
        elif isinstance(a, tuple):
            joined = "-".join(map(str, a)) if f.name == "hidden" else "+".join(map(str, a))  # "layers 4-2"
            parts.append(f"{SHORT.get(f.name, f.name)} {joined}")
        elif f.name in ("activation", "optimizer", "dataset", "dtype"):
            parts.append(str(a))
        else:
            parts.append(f"{SHORT.get(f.name, f.name)} {a}")
    if not parts:
        return "same settings"
    return ", ".join(parts[:limit]) + (", …" if len(parts) > limit else "")


@dataclass(frozen=True)
class RunFigures:
    """How one lesson's finished runs are drawn for a class: its replay, its loss curve, and where the ghosts of
    earlier runs go. A lesson's registry entry holds one (``studio/lessons.py``); nothing here knows a lesson."""

    curve: Callable[[Any], tuple[int, float]]  # (step, loss) of one recorded state
    replay: Callable[[Any, Sequence], Any]  # (config, states) -> the replay figure, the data drawn again
    axes: tuple[str, str] = ("x", "y")  # the replay's loss plot
    positive: bool = False  # a log loss axis: only losses > 0 can be drawn
    reach: float | None = None  # how far past the run's own losses a ghost widens the loss axis, or not at all
    log_axis: bool = False  # the reach counts decades (a log axis), else a factor (a linear one)
    boundary: Callable[[Any], tuple[float, float, float]] | None = None  # a state's decision boundary (w0, w1, b)
    boundary_range: Callable[[Any], list[float]] | None = None  # config -> the x range a ghost's boundary spans
    # A run is decided by its settings alone (nothing changes it mid-run): an earlier run with the same settings
    # would only draw the same curve again, so it is no ghost.
    decided_by_settings: bool = False


def loss_curve(figures: RunFigures, snaps: Sequence) -> tuple[list, list]:
    """(steps, losses) of a run, finite values only (and positive ones, for a log axis)."""
    pts = [figures.curve(s) for s in snaps]
    pts = [(x, y) for x, y in pts if math.isfinite(y) and (y > 0 or not figures.positive)]
    return [p[0] for p in pts], [p[1] for p in pts]


def ghost_traces(figures: RunFigures, ghosts: Sequence[dict], boundary_range: list[float] | None = None) -> list[dict]:
    """Faint traces for earlier runs, named in the legend by their label (a label at the curve's end could
    fall outside the axes the current run sets). Each ghost: {"label", "x", "y", "pinned", "boundary"},
    the boundary (w0, w1, b) or None. Loss curves go on the lesson's loss axes; a lesson with a decision
    boundary also gets each final boundary on the points."""
    traces = []
    for i, g in enumerate(ghosts):
        color = PIN_COLOR if g.get("pinned") else GHOST_COLORS[i % len(GHOST_COLORS)]
        name = ("pinned: " if g.get("pinned") else "") + g["label"]
        traces.append({"type": "scatter", "mode": "lines", "name": name, "x": list(g["x"]), "y": list(g["y"]),
                       "xaxis": figures.axes[0], "yaxis": figures.axes[1], "opacity": 0.6, "hoverinfo": "name+x+y",
                       "line": {"color": color, "width": 2.5, "dash": "dash" if g.get("pinned") else GHOST_DASH},
                       "legendgroup": name, "showlegend": True})
        if figures.boundary is not None and g.get("boundary") and boundary_range is not None:
            w0, w1, b = g["boundary"]
            line = boundary_line(LogisticSnapshot(0, 0.0, 0.0, w0, w1, b), boundary_range)
            traces.append({"type": "scatter", "mode": "lines", "name": name, **line, "opacity": 0.55,
                           "line": {"color": color, "width": 2, "dash": "dash" if g.get("pinned") else GHOST_DASH},
                           "legendgroup": name, "showlegend": False, "hoverinfo": "name"})
    return traces


def ghost_record(figures: RunFigures, label: str, snaps: Sequence) -> dict:
    """What a ghost keeps of a finished run: its loss curve and (where the lesson has one) its final boundary."""
    x, y = loss_curve(figures, snaps)
    ghost = {"label": label, "x": x, "y": y, "pinned": False, "boundary": None}
    if figures.boundary is not None:
        good = [s for s in snaps if not s.diverged]
        if good:
            ghost["boundary"] = figures.boundary(good[-1])
    return ghost


def two_layer_replay_figure(snaps: Sequence, steps: int):
    """Lesson 2's finished run as an animation: the loss curve grows, frame by frame."""
    import plotly.graph_objects as go

    x, y = loss_curve(TWO_LAYER, snaps)
    layout = base_layout(margin={"l": 80, "r": 20, "t": 60, "b": 150}, height=560, showlegend=False,
                         xaxis={"title": {"text": "step"}, "range": [0, max(x[-1] if x else steps - 1, 1)]},
                         yaxis={"title": {"text": "loss (sum of squares)"}, "type": "log",
                                "exponentformat": "power", "range": decades(y)})
    frames = []
    for i in thin_even(range(len(x)), lambda i: x[i]):  # steps on round strides: even slider labels
        upto = thin(range(i + 1), CURVE_POINTS)  # the curve so far, thinned: 400 frames stay small
        title = {"title": {"text": f"Step {x[i]:,}   loss {y[i]:.4g}"}}
        frames.append(go.Frame(name=str(x[i]), traces=[0], layout=title,
                               data=[go.Scatter(x=np.array([x[j] for j in upto], np.int32),
                                                y=np.array([y[j] for j in upto], np.float64))]))
    fig = go.Figure(data=[go.Scatter(x=x, y=y, mode="lines", name="loss", line={"color": "#0072B2", "width": 3})],
                    layout=without_template(layout), frames=frames)
    if x:
        fig.update_layout(title={"text": f"Step {x[-1]:,}   loss {y[-1]:.4g}"})
    slider = _slider([f.name for f in frames], x=0, length=1, y=-0.23, redraw=True)  # titles need a redraw
    slider["currentvalue"]["prefix"] = "step "
    fig.update_layout(updatemenus=[_play_pause(redraw=True, x=0, y=-0.16, duration=play_duration(len(frames)))],
                      sliders=[slider])
    return style(fig)


def replay_figure(figures: RunFigures, config, snaps: Sequence):
    """Any finished (or loaded) run's replay, rebuilt from its config: the data are drawn again from the
    config's seeds; nothing is trained."""
    return figures.replay(config, snaps)


def _logistic_replay(config, snaps: Sequence):
    x, y = (t.numpy() for t in logistic_data(config))
    return logistic_replay_figure(snaps, x, y, config.max_iterations)


def _playground_replay(config, snaps: Sequence):
    pg = Playground(config)  # data and the initial model only
    train = drawn(pg.points_train, pg.y_train, config.regression)  # as the page draws them: by target
    test = drawn(pg.points_test, pg.y_test, config.regression)
    return playground_replay_figure(snaps, pg.extent, config.grid, train, test, regression=config.regression,
                                    classes=config.classes)


def boundary_range(config) -> list[float]:
    x, _ = logistic_data(config)
    lo, hi = data_ranges(x.numpy())[0]
    return [lo - 10 * (hi - lo), hi + 10 * (hi - lo)]  # well past the points: it crosses the whole plot


TWO_LAYER = RunFigures(curve=lambda s: (s.step, s.loss), positive=True, reach=3.0, log_axis=True,
                       replay=lambda config, snaps: two_layer_replay_figure(snaps, config.steps))
LOGISTIC = RunFigures(curve=lambda s: (s.iteration, s.loss), replay=_logistic_replay, axes=("x2", "y2"), reach=20.0,
                      boundary=lambda s: (s.w0, s.w1, s.b), boundary_range=boundary_range)
PLAYGROUND = RunFigures(curve=lambda s: (s.step, s.train_loss), replay=_playground_replay, axes=("x2", "y2"))


GHOST_LEGEND = {"orientation": "h", "x": 0, "xanchor": "left", "y": 1.02, "yanchor": "bottom"}
GHOST_ROOM = 40  # px above the plot for one row of the legend (Plotly adds more when it wraps)


def show_ghost_legend(layout: dict) -> None:
    """A layout that hid its legend shows it once ghosts join it: above the plot, where no curve runs (inside
    the top right corner it covered a diverging run's last point)."""
    if layout.get("showlegend") is False:
        layout["showlegend"] = True
        layout["legend"] = {**layout.get("legend", {}), **GHOST_LEGEND}
        margin = layout.get("margin") or {}
        layout["margin"] = {**margin, "t": max(margin.get("t", 0), GHOST_ROOM)}


def fit_ghosts(figures: RunFigures, layout: dict, traces: Sequence[dict]) -> None:
    """Widen the loss axis (in place) so the ghosts' losses show beside the run's, up to ``figures.reach`` past
    them (decades on a log axis, a factor on a linear one): a ghost that trained further (or less far) than the
    run on screen left the chart at once. A ghost that went further still leaves the top."""
    xname, yname = figures.axes
    axis = "yaxis" + yname[1:]
    x0, x1 = (layout.get("xaxis" + xname[1:]) or {}).get("range") or [-math.inf, math.inf]
    ys = [v for t in traces if t.get("yaxis", "y") == yname
          for x, v in zip(t.get("x") or [], t.get("y") or [], strict=False)  # the part of a ghost on screen
          if x0 <= x <= x1 and isinstance(v, (int, float)) and math.isfinite(v) and v > 0]
    if figures.reach is None or not ys or "range" not in layout.get(axis, {}):
        return
    lo, hi = layout[axis]["range"]
    if figures.log_axis:
        lo = min(lo, math.floor(math.log10(min(ys))))
        hi = max(hi, min(math.ceil(math.log10(max(ys)) + 1e-9), hi + figures.reach))
    else:
        hi = max(hi, _nice_ceiling(min(max(ys), hi * figures.reach)))
    layout[axis] = {**layout[axis], "range": [lo, hi]}


def standalone_html(fig, title: str, heading: tuple[str, str] | None = None) -> str:
    """The figure as one HTML file with plotly.js inside it: it plays with no network at all. ``heading``: the
    lesson's title and its settings in words (plain text, escaped here: settings are data), above the figure."""
    import html

    import plotly.io as pio

    spec = recolor(fig.to_plotly_json())  # the app's palette, as the chart on screen
    body = pio.to_html(spec, include_plotlyjs=True, full_html=False, auto_play=False, div_id="replay",
                       config={"displaylogo": False, "responsive": True})
    top = "" if heading is None else (
        f"<header style=\"padding:.8rem 1rem 0\"><h1 style=\"font-size:1.4rem;margin:0 0 .3rem\">"
        f"{html.escape(heading[0])}</h1><p style=\"margin:0\">{html.escape(heading[1])}</p></header>")
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title></head>"
            f"<body style=\"margin:0;font-family:sans-serif\">{top}{body}</body></html>\n")
