"""What a class predicted before a run, beside what the run did: a bar for each choice, or a histogram of the
numbers given with the run's own number marked. Pure: answers and the outcome in, a figure out."""

from __future__ import annotations

import html
import math
import textwrap
from collections.abc import Iterable, Sequence

import numpy as np
import plotly.graph_objects as go

from .theme import OKABE_ITO, style

BINS = 10  # at most, for a number question
ANSWERED, HAPPENED = OKABE_ITO["grey"], OKABE_ITO["bluish green"]


def _label(text: str) -> str:
    """A teacher's words as Plotly shows them: its tags (<b>, <a href>) escaped, so they stay text."""
    return html.escape(text, quote=False)


def _wrapped(text: str, width: int = 14) -> str:
    """A long choice on a few short lines under its bar (``textwrap``'s lines, each escaped, joined by <br>)."""
    return "<br>".join(_label(line) for line in textwrap.wrap(text, width)) or _label(text)


def _came_true(label: str) -> str:
    """The label of the choice that came true: bold and green under a tick, so it shows even when nobody picked
    it (the tick on a line of its own: a wider first line would run into the next label)."""
    return f"<span style='color:{HAPPENED}'><b>✓<br>{label}</b></span>"


def choice_counts(choices: Sequence[str], answers: Iterable) -> list[int]:
    """How many answers picked each choice, in the choices' order (an answer that is none of them is left out)."""
    answers = list(answers)
    return [sum(1 for a in answers if a == c) for c in choices]


def choice_figure(choices: Sequence[str], answers: Iterable, happened: int | None = None) -> go.Figure:
    """A bar per choice, its count on it; the choice that came true (its index, or None) in green."""
    counts = choice_counts(choices, answers)
    colors = [HAPPENED if i == happened else ANSWERED for i in range(len(choices))]
    labels = [_label(c) for c in choices]
    fig = go.Figure(go.Bar(x=labels, y=counts, marker_color=colors, text=counts, textposition="outside",
                           cliponaxis=False, hovertemplate="%{x}: %{y}<extra></extra>"))
    top = max(counts, default=0)
    return style(fig, height=340, margin={"l": 50, "r": 20, "t": 40, "b": 40}, showlegend=False,
                 title={"text": f"The class's answers ({sum(counts)})"},
                 xaxis={"tickvals": labels, "tickangle": 0,
                        "ticktext": [_came_true(_wrapped(c)) if i == happened else _wrapped(c)
                                     for i, c in enumerate(choices)],
                        "automargin": True},
                 yaxis={"title": "students", "range": [0, max(1, top) * 1.25], "dtick": max(1, math.ceil(top / 5))})


def number_bins(values: Sequence[float], actual: float | None = None, bins: int = BINS) -> tuple[list, list]:
    """(edges, counts) of the numbers given, over a range that also holds ``actual``, so its mark is on the axis."""
    values = [float(v) for v in values if math.isfinite(float(v))]
    ends = values + ([actual] if actual is not None and math.isfinite(actual) else [])
    if not ends:
        return [0.0, 1.0], [0]
    lo, hi = min(ends), max(ends)
    if hi == lo:  # one number, or all the same: a bar of some width around it
        half = max(abs(lo), 1.0) * 0.05
        lo, hi = lo - half, hi + half
    counts, edges = np.histogram(values, bins=max(1, min(bins, len(set(values)))), range=(lo, hi))
    return edges.tolist(), counts.tolist()


def number_figure(values: Sequence[float], actual: float | None = None, unit: str = "final loss") -> go.Figure:
    """A histogram of the numbers the class gave; ``actual`` (what the run ended at, or None) as a green line."""
    edges, counts = number_bins(values, actual)
    centres = [(a + b) / 2 for a, b in zip(edges, edges[1:], strict=False)]
    widths = [b - a for a, b in zip(edges, edges[1:], strict=False)]
    fig = go.Figure(go.Bar(x=centres, y=counts, width=widths, marker_color=ANSWERED, marker_line_width=1,
                           marker_line_color="#ffffff", name="answers", customdata=list(zip(edges, edges[1:],
                                                                                              strict=False)),
                           hovertemplate="%{customdata[0]:.4g} to %{customdata[1]:.4g}: %{y}<extra></extra>"))
    if actual is not None and math.isfinite(actual):
        fig.add_vline(x=actual, line_color=HAPPENED, line_width=4)
        fig.add_annotation(x=actual, y=1, yref="paper", yanchor="bottom", showarrow=False,
                           text=f"the run: {actual:.4g}", font={"color": HAPPENED})
    top = max(counts, default=0)
    return style(fig, height=320, margin={"l": 50, "r": 20, "t": 50, "b": 60}, showlegend=False, bargap=0,
                 title={"text": f"The class's answers ({sum(counts)})", "y": 0.98, "yanchor": "top"},
                 xaxis={"title": unit}, yaxis={"title": "students", "range": [0, max(1, top) * 1.15],
                                               "dtick": max(1, math.ceil(top / 5))})
