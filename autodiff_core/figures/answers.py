"""What a class predicted before a run, beside what the run did: a bar for each choice, or a histogram of the
numbers given with the run's own number marked. Pure: answers and the outcome in, a figure out."""

from __future__ import annotations

import html
import math
import textwrap
from collections.abc import Iterable, Sequence

import numpy as np
import plotly.graph_objects as go

from .board import log_axis
from .theme import OKABE_ITO, style

BINS = 10  # at most, for a number question
# Plotly's toolbar, upright in a right margin of its own: across the top, on a phone, it covers the title
TOOLBAR = {"modebar": {"orientation": "v"}}
TOOLBAR_MARGIN = 40
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
    return style(fig, height=340, margin={"l": 50, "r": TOOLBAR_MARGIN, "t": 40, "b": 40}, showlegend=False, **TOOLBAR,
                 title={"text": f"The class's answers ({sum(counts)})"},
                 xaxis={"tickvals": labels, "tickangle": 0,
                        "ticktext": [_came_true(_wrapped(c)) if i == happened else _wrapped(c)
                                     for i, c in enumerate(choices)],
                        "automargin": True},
                 yaxis={"title": "students", "range": [0, max(1, top) * 1.25], "dtick": max(1, math.ceil(top / 5))})


def number_bins(values: Sequence[float], actual: float | None = None, bins: int = BINS, log: bool = False
                ) -> tuple[list, list]:
    """(edges, counts) of the numbers given, over a range that also holds ``actual``, so its mark is on the axis.
    ``log``: bins of equal width on a log scale (the numbers all positive)."""
    values = [float(v) for v in values if math.isfinite(float(v))]
    ends = values + ([actual] if actual is not None and math.isfinite(actual) else [])
    if not ends:
        return [0.0, 1.0], [0]
    lo, hi = min(ends), max(ends)
    if hi == lo:  # one number, or all the same: a bar of some width around it
        half = max(abs(lo), 1.0) * 0.05
        lo, hi = lo - half, hi + half
    n = max(1, min(bins, len(set(values))))
    edges = n
    if log:
        edges = np.logspace(math.log10(lo), math.log10(hi), n + 1)
        edges[0], edges[-1] = lo, hi  # exactly: the smallest and the largest numbers fall in the bins
    counts, edges = np.histogram(values, bins=edges, range=None if log else (lo, hi))
    return edges.tolist(), counts.tolist()


def number_figure(values: Sequence[float], actual: float | None = None, unit: str = "final loss") -> go.Figure:
    """A histogram of the numbers the class gave; ``actual`` (what the run ended at, or None) as a green line. On a
    log axis when the numbers (and ``actual``) are all positive and span more than a decade: a guess of 0.001 and
    one of 10 are both readable."""
    shown = [float(v) for v in values if math.isfinite(float(v))]
    if actual is not None and math.isfinite(actual):
        shown.append(actual)
    log = log_axis(shown)
    edges, counts = number_bins(values, actual, log=log)
    centres = [(a + b) / 2 for a, b in zip(edges, edges[1:], strict=False)]  # on a log axis too: a bar spans
    widths = [b - a for a, b in zip(edges, edges[1:], strict=False)]  # centre +- half its width, in data units
    fig = go.Figure(go.Bar(x=centres, y=counts, width=widths, marker_color=ANSWERED, marker_line_width=1,
                           marker_line_color="#ffffff", name="answers", customdata=list(zip(edges, edges[1:],
                                                                                              strict=False)),
                           hovertemplate="%{customdata[0]:.4g} to %{customdata[1]:.4g}: %{y}<extra></extra>"))
    if actual is not None and math.isfinite(actual):
        fig.add_vline(x=actual, line_color=HAPPENED, line_width=4)  # a shape: in data units on a log axis too,
        fig.add_annotation(x=math.log10(actual) if log else actual,  # and an annotation there in log10 units
                           y=1, yref="paper", yanchor="bottom", showarrow=False,
                           text=f"the run: {actual:.4g}", font={"color": HAPPENED})
    top = max(counts, default=0)
    return style(fig, height=320, margin={"l": 50, "r": TOOLBAR_MARGIN, "t": 50, "b": 60}, showlegend=False, bargap=0,
                 **TOOLBAR,
                 title={"text": f"The class's answers ({sum(counts)})", "y": 0.98, "yanchor": "top"},
                 xaxis={"title": unit, **({"type": "log", "dtick": 1} if log else {"type": "linear"})},  # decades
                 yaxis={"title": "students", "range": [0, max(1, top) * 1.15], "dtick": max(1, math.ceil(top / 5))})
