"""Lesson 8's figures: a function with the derivatives its backward gives once and twice, values of several
Functions side by side at the student's inputs, and the timing of two backwards. Plain numbers in, figures out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .theme import OKABE_ITO, style
from .xray import input_ticks, legend_below

# one colour per meaning: ours solid, PyTorch's own dotted over it
COLORS = (OKABE_ITO["blue"], OKABE_ITO["orange"], OKABE_ITO["bluish green"], OKABE_ITO["reddish purple"])
HEIGHT = 340


def _title(text: str) -> dict:
    return {"text": text, "x": 0.5, "xanchor": "center", "font": {"size": 18}}


def derivatives_figure(grid: Sequence[float], curves: Mapping[str, Sequence[float]], x: Sequence[float], title: str):
    """``curves`` by name on ``grid``: the first solid grey, then pairs (ours, PyTorch's), ours solid and
    PyTorch's dotted on top, one colour a pair; the student's inputs marked on the x-axis."""
    import plotly.graph_objects as go

    fig = go.Figure()
    names = list(curves)
    fig.add_trace(go.Scatter(x=list(grid), y=list(curves[names[0]]), mode="lines", name=names[0],
                             line={"color": OKABE_ITO["grey"], "width": 2}))
    for i, name in enumerate(names[1:]):
        theirs = i % 2 == 1
        fig.add_trace(go.Scatter(x=list(grid), y=list(curves[name]), mode="lines", name=name,
                                 line={"color": COLORS[i // 2 % len(COLORS)], "width": 3 if theirs else 5,
                                       "dash": "dot" if theirs else "solid"}))
    fig.add_trace(go.Scatter(x=list(x), y=[0.0] * len(x), mode="markers", name="your inputs x",
                             marker={"color": OKABE_ITO["vermillion"], "size": 11, "symbol": "x"}))
    fig.update_xaxes(title_text="x")
    fig.update_yaxes(title_text="value")
    return style(fig, title=_title(title), **legend_below(fig, HEIGHT))


def bars_figure(x: Sequence[float], series: Mapping[str, Sequence[float]], title: str, y_title: str):
    """One group of bars per input element, one bar per Function in ``series``."""
    import plotly.graph_objects as go

    labels = [f"x[{i}]={v:.3g}" for i, v in enumerate(x)]
    fig = go.Figure()
    for i, (name, values) in enumerate(series.items()):
        fig.add_trace(go.Bar(x=labels, y=list(values), name=name, marker_color=COLORS[i % len(COLORS)],
                             customdata=labels, hovertemplate=f"{name} at %{{customdata}}: %{{y:.6g}}<extra></extra>"))
    fig.update_xaxes(title_text="element", **input_ticks(labels))
    fig.update_yaxes(title_text=y_title)
    return style(fig, title=_title(title), barmode="group", **legend_below(fig, HEIGHT))


def timing_figure(runs: Mapping[str, Sequence[float]], title: str):
    """Each backward's time in milliseconds, one dot per run and a box around them, one column per Function."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for i, (name, seconds) in enumerate(runs.items()):
        fig.add_trace(go.Box(y=[1000 * s for s in seconds], name=name, boxpoints="all", jitter=0.4,
                             marker={"color": COLORS[i % len(COLORS)], "size": 8}, line={"width": 2},
                             hovertemplate="%{y:.3f} ms<extra></extra>"))
    fig.update_yaxes(title_text="one backward (ms)", rangemode="tozero")
    return style(fig, title=_title(title), showlegend=False, height=HEIGHT + 80,
                 margin={"l": 70, "r": 20, "t": 60, "b": 60})
