"""The class board's scatter: one setting of each run a student sent against its final score.

Pure: numbers and labels in, a figure out. A point's ``customdata`` is the caller's id of its run, so a click on
it names that run; its hover shows the run's values and who sent it (a nickname, or "hidden")."""

from __future__ import annotations

import html
import math

import plotly.graph_objects as go

from .theme import OKABE_ITO, style

DECADE = 10.0  # values that span more than this factor, all positive, go on a log axis


def log_axis(values: list[float]) -> bool:
    """Whether ``values`` read best on a log axis: all positive, spanning more than a decade."""
    finite = [v for v in values if v is not None and math.isfinite(v)]
    return bool(finite) and min(finite) > 0 and max(finite) > DECADE * min(finite)


def board_scatter(xs: list[float], ys: list[float], names: list[str], ids: list, *, x_title: str,
                  y_title: str) -> go.Figure:
    """One marker per run at (its setting, its score); ``names``: who sent each (plain text in the hover)."""
    fig = go.Figure(go.Scatter(
        x=xs, y=ys, mode="markers", customdata=ids, text=[html.escape(n) for n in names],  # text, not tags
        marker={"size": 14, "color": OKABE_ITO["blue"], "line": {"width": 1, "color": "white"}, "opacity": 0.85},
        hovertemplate=f"%{{text}}<br>{_safe(x_title)} %{{x:.4g}}<br>{_safe(y_title)} %{{y:.4g}}<extra></extra>"))
    fig.update_xaxes(title_text=x_title, **_axis(xs))
    fig.update_yaxes(title_text=y_title, **_axis(ys))
    return style(fig, height=420, margin={"l": 70, "r": 20, "t": 30, "b": 60}, showlegend=False,
                 clickmode="event+select", dragmode=False)


def _axis(values: list[float]) -> dict:
    """Log for positive values over a decade; else linear, from 0 when none is negative (a learning rate, a
    loss: one point alone would otherwise sit in a range of negative values)."""
    if log_axis(values):
        return {"type": "log"}
    return {"type": "linear", "rangemode": "nonnegative" if all(v >= 0 for v in values) else "normal"}


def _safe(title: str) -> str:
    """An axis name in a hover template, where % and braces are syntax (our labels, never student text)."""
    return title.replace("%", "%%").replace("{", "(").replace("}", ")")
