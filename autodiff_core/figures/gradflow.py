"""Gradient flow beside the loss: each layer's gradient norm over the steps on a log scale, and the share
of each hidden layer's units that are dead. Pure: playground snapshots in, a Plotly figure out."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import plotly.graph_objects as go

from ..classes import discrete
from ..playground import PlaygroundSnapshot
from . import thin
from .theme import FONT_SIZE, OKABE_ITO, base_layout, style, without_template

# First layer to last: from light to dark along one hue would be hard to tell apart; distinct colours instead.
LAYER_COLORS = [OKABE_ITO[c] for c in ("vermillion", "orange", "bluish green", "sky blue", "blue",
                                        "reddish purple", "grey")]  # no yellow: faint on white
POINTS = 400  # at most this many steps drawn per line
LIVE_POINTS = 250  # 250 to 500 steps sent per line while a run goes


def layer_names(layers: int) -> list[str]:
    """'layer 1' ... and 'output' for the last weight matrix."""
    return [f"layer {i + 1}" for i in range(layers - 1)] + ["output"]


MODEBAR_ROOM = 44  # px right of the plots: the vertical mode bar sits there, not on the newest steps


def _flow_layout() -> dict:
    """Stacked for a phone; the presenter view (``theme.landscape``) puts the two plots side by side. Each
    axis names the axis it hangs on: side by side, an unanchored ``yaxis2`` would hang on ``x``, on top of
    the gradient norms' axis."""
    return base_layout(
        height=520, margin={"l": 70, "r": MODEBAR_ROOM, "t": 10, "b": 55},
        xaxis={"anchor": "y", "matches": "x2", "showticklabels": False},
        yaxis={"anchor": "x", "domain": [0.42, 1], "type": "log", "title": {"text": "|dLoss/dW|"},
               "exponentformat": "power"},
        xaxis2={"anchor": "y2", "title": {"text": "step"}},
        yaxis2={"anchor": "x2", "domain": [0, 0.3], "range": [0, 1.02], "tickformat": ".0%",
                "title": {"text": "dead units"}},
        legend={"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom", "font": {"size": FONT_SIZE}},
        modebar={"orientation": "v"},  # clear of the legend's row
    )


def _flow_traces(layers: int) -> list[tuple[str, dict]]:
    """(what the trace draws, its style) for each line: 'norm i' per layer, 'dead i' per hidden layer."""
    traces = []
    for i, name in enumerate(layer_names(layers)):
        color = LAYER_COLORS[i % len(LAYER_COLORS)]
        traces.append((f"norm {i}", {"type": "scatter", "mode": "lines", "name": name, "legendgroup": name,
                                     "line": {"color": color, "width": 3},
                                     "hovertemplate": f"{name}: %{{y:.2e}}<extra></extra>"}))
        if i < layers - 1:
            traces.append((f"dead {i}", {"type": "scatter", "mode": "lines", "name": name, "legendgroup": name,
                                         "showlegend": False, "xaxis": "x2", "yaxis": "y2",
                                         "line": {"color": color, "width": 3},
                                         "hovertemplate": f"{name}: %{{y:.0%}} dead<extra></extra>"}))
    return traces


def _flow_values(snaps: Sequence[PlaygroundSnapshot], what: str) -> list[float]:
    kind, i = what.split()
    i = int(i)
    return [s.grad_norms[i] for s in snaps] if kind == "norm" else [s.dead[i] for s in snaps]


def _drawn(snaps: Sequence[PlaygroundSnapshot]) -> list[PlaygroundSnapshot]:
    return [s for s in snaps if s.grad_norms and not s.diverged and s.step > 0]


def zero_since(snaps: Sequence[PlaygroundSnapshot]) -> dict[int, int]:
    """For each layer whose gradient norm is exactly 0 at every step from some step to the last: that step."""
    since: dict[int, int] = {}
    still: set[int] | None = None  # the layers at 0 at every step from here to the last
    for s in reversed(snaps):
        still = {i for i, g in enumerate(s.grad_norms) if g == 0} & (still if still is not None else {*range(99)})
        if not still:
            break
        since.update(dict.fromkeys(still, s.step))
    return since


def unplottable(snaps: Sequence[PlaygroundSnapshot], layers: int) -> list[dict]:
    """A note where a log scale cannot draw the gradient norms (exactly 0 from some step to the last): the lines
    stop there, and without it the chart looks blank, as if it had failed. A layout annotation at the bottom right
    of the norms' plot, on short lines that fit a phone."""
    since = zero_since(snaps)
    if not since:
        return []
    names = layer_names(layers)
    who = "every gradient" if len(since) == layers else ", ".join(names[i] for i in sorted(since))
    return [{"text": f"{who} exactly 0<br>from step {min(since.values()):,} on, which<br>a log scale cannot draw",
             "showarrow": False, "xref": "x domain", "x": 1, "xanchor": "right", "yref": "y domain", "y": 0.04,
             "yanchor": "bottom", "align": "right", "font": {"size": FONT_SIZE}, "bgcolor": "rgba(255,255,255,0.85)"}]


def _zero_line(snaps: Sequence[PlaygroundSnapshot]) -> list[dict]:
    """A dotted line along the bottom of the norms' plot over the steps where they are all exactly 0."""
    since = zero_since(snaps)
    if not since:
        return []
    return [{"type": "line", "xref": "x", "x0": min(since.values()), "x1": snaps[-1].step, "yref": "y domain",
             "y0": 0.01, "y1": 0.01, "line": {"color": "#444444", "width": 3, "dash": "dot"}}]


def gradient_flow_figure(snaps: Sequence[PlaygroundSnapshot]) -> go.Figure:
    """Top: |dLoss/dW| per layer (log scale) with the training loss; bottom: dead units per hidden layer. Where
    the norms are exactly 0 to the end, which a log scale cannot draw, a note says so (``unplottable``)."""
    drawn = _drawn(snaps)
    good = thin(drawn, POINTS)
    layers = len(good[-1].grad_norms) if good else 0
    steps = [s.step for s in good]
    fig = go.Figure(layout=without_template(_flow_layout()))
    for what, trace in _flow_traces(layers):
        fig.add_scatter(x=steps, y=_flow_values(good, what), **{k: v for k, v in trace.items() if k != "type"})
    fig.update_layout(annotations=unplottable(drawn, layers), shapes=_zero_line(drawn))
    return style(fig)


def gradient_flow_live(snaps: Sequence[PlaygroundSnapshot], layers: int) -> tuple[dict, dict]:
    """The same chart for the live chart: ``({"layout", "traces"}, curves)``, curves keyed ``"f<trace>"`` in
    the live payload's form: the steps that are multiples of a power of 2 chosen so that ``LIVE_POINTS`` to twice
    as many remain (the payload is built several times a second; the browser draws ``POINTS`` of them).
    A value that is not a finite number travels as null (JSON has no NaN), which Plotly leaves out."""
    good = _drawn(snaps)
    stride = 1 << (len(good) // (2 * LIVE_POINTS)).bit_length()  # a power of 2: the same steps build after build
    good = [s for s in good[:-1] if s.step % stride == 0] + good[-1:]  # and always the newest
    steps = [s.step for s in good]
    spec = {"layout": {**_flow_layout(), "annotations": unplottable(good, layers)}, "traces": [], "points": POINTS}
    curves = {}
    for k, (what, trace) in enumerate(_flow_traces(layers)):
        spec["traces"].append(trace)
        ys = _flow_values(good, what)
        curves[f"f{k}"] = {"x": steps, "y": ys if all(map(math.isfinite, ys)) else
                           [v if math.isfinite(v) else None for v in ys]}
    return spec, curves


def vanishing_ratio(s: PlaygroundSnapshot) -> float:
    """How many times smaller the first layer's gradient is than the output layer's."""
    return s.grad_norms[-1] / s.grad_norms[0] if s.grad_norms and s.grad_norms[0] > 0 else float("inf")


def discretized(snaps: Sequence[PlaygroundSnapshot], newest: int, classes: int = 2) -> list[PlaygroundSnapshot]:
    """``snaps`` with the surfaces of the ``newest`` few made two-coloured (TF's "Discretize output"):
    each grid point gets the colour of the class the network picks (for regression, of its sign); with 3 to 6
    ``classes``, that class's full colour."""
    cut = max(0, len(snaps) - newest)
    sure = discrete if classes > 2 else (lambda v: float(v >= 0.5))
    flat = [dataclasses.replace(s, surface=tuple(tuple(sure(v) for v in row) for row in s.surface))
            for s in snaps[cut:]]
    return [*snaps[:cut], *flat]
