"""TF Playground's network diagram in Plotly: each neuron a small heatmap of its output over the plane,
links coloured by the sign of their weight and as thick as its size (hover for the value), each bias a small
square at its neuron's corner. Pure: a ``diagram.NetworkState`` in, a figure out (or, for the live chart, the
same picture as compact data that studio/live_chart.js paints on a canvas)."""

from __future__ import annotations

import base64
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ..diagram import NetworkState
from .theme import CLASS_COLORS, FONT, base_layout, style, without_template

TILE, GAP_X, GAP_Y = 1.0, 2.2, 1.35  # a neuron's size, and the distance between columns and between rows
SCALE = [[0, CLASS_COLORS[0]], [0.5, "#f7f7f7"], [1, CLASS_COLORS[1]]]  # -1 red, 0 white, +1 blue
WIDTH_BINS = (0.25, 0.5, 1.0, 2.0, np.inf)  # |w| up to each bound: line widths 1..5
NAME_ROOM, NAME_SIZE = 1.3, 14  # left of the input tiles, their names ("sin X1"): room in tiles, font in px


def _centres(state: NetworkState) -> list[np.ndarray]:
    """(neurons, 2) centre of every tile, per column; each column centred vertically."""
    out = []
    for c, maps in enumerate(state.maps):
        n = len(maps)
        ys = (np.arange(n)[::-1] - (n - 1) / 2) * GAP_Y
        out.append(np.stack([np.full(n, c * GAP_X), ys], 1))
    return out


def _tiles(state: NetworkState, centres) -> list[go.Heatmap]:
    traces = []
    for c, maps in enumerate(state.maps):
        last = c == len(state.maps) - 1
        for i, z in enumerate(maps):
            cx, cy = centres[c][i]
            g = z.shape[0]
            label = state.names[i] if c == 0 else output_name(i, len(maps)) if last else f"layer {c}, neuron {i + 1}"
            extra = "" if c == 0 else f"<br>bias {state.biases[c - 1][i]:+.3f}"
            traces.append(go.Heatmap(
                z=np.clip(z, -1, 1), x=np.linspace(cx - TILE / 2, cx + TILE / 2, g),
                y=np.linspace(cy - TILE / 2, cy + TILE / 2, g), zmin=-1, zmax=1, colorscale=SCALE,
                showscale=False, hovertemplate=f"{label}{extra}<br>output %{{z:.2f}}<extra></extra>"))
    return traces


def _links(state: NetworkState, centres) -> list[go.Scatter]:
    """Links grouped by sign and thickness (a trace each), and one invisible trace of hover points, each
    naming its link as ``customdata`` [column, to, from] (what a click on it selects)."""
    groups: dict[tuple[int, int], tuple[list, list]] = {}
    hx, hy, text, links = [], [], [], []
    for c, w in enumerate(state.weights):
        for j, i in np.ndindex(*w.shape):  # from neuron i of column c to neuron j of column c + 1
            (ax, ay), (bx, by) = centres[c][i] + [TILE / 2, 0], centres[c + 1][j] - [TILE / 2, 0]
            key = (int(w[j, i] > 0), int(np.searchsorted(WIDTH_BINS, abs(w[j, i]))))
            xs, ys = groups.setdefault(key, ([], []))
            xs += [ax, bx, None]
            ys += [ay, by, None]
            hx.append(ax + 0.7 * (bx - ax))
            hy.append(ay + 0.7 * (by - ay))
            text.append(f"weight {w[j, i]:+.3f}")
            links.append([c, j, i])
    traces = [go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                         line={"color": CLASS_COLORS[sign], "width": 1 + width}, opacity=0.75)
              for (sign, width), (xs, ys) in sorted(groups.items())]
    traces.append(go.Scatter(x=hx, y=hy, mode="markers", marker={"size": 9, "opacity": 0}, text=text,
                             customdata=links, selected={"marker": {"opacity": 1, "color": "#000000"}},
                             hovertemplate="%{text}<extra></extra>", showlegend=False))
    return traces


def _biases(state: NetworkState, centres) -> go.Scatter:
    xs, ys, colors, text, which = [], [], [], [], []
    for c, b in enumerate(state.biases):
        for i, v in enumerate(b):
            cx, cy = centres[c + 1][i]
            xs.append(cx - TILE / 2)
            ys.append(cy - TILE / 2)
            colors.append(CLASS_COLORS[int(v > 0)])
            text.append(f"bias {v:+.3f}")
            which.append([c, i, -1])  # [column, neuron, -1]: the bias, for a click
    return go.Scatter(x=xs, y=ys, mode="markers", text=text, hovertemplate="%{text}<extra></extra>",
                      marker={"symbol": "square", "size": 9, "color": colors, "line": {"color": "white", "width": 1}},
                      customdata=which, unselected={"marker": {"opacity": 1}}, showlegend=False)


def network_figure(state: NetworkState) -> go.Figure:
    centres = _centres(state)
    rows, right = max(len(m) for m in state.maps), (len(state.maps) - 1) * GAP_X + TILE
    headers = ["inputs", *(f"layer {c}" for c in range(1, len(state.maps) - 1)), "output"]
    fig = go.Figure(data=[*_links(state, centres), *_tiles(state, centres), _biases(state, centres)],
                    layout=without_template(base_layout(
                        height=int(146 + 62 * rows), margin={"l": 10, "r": 10, "t": 66, "b": 10},
                        xaxis={"visible": False, "range": [-TILE / 2 - NAME_ROOM, right]},
                        yaxis={"visible": False, "scaleanchor": "x", "range": [-(rows / 2) * GAP_Y,
                                                                               (rows / 2) * GAP_Y + 0.3]},
                        plot_bgcolor="white")))  # the column titles sit under the toolbar's row
    for c, text in enumerate(headers):
        fig.add_annotation(x=c * GAP_X, y=1, yref="paper", text=text, showarrow=False, yanchor="bottom")  # above
    style(fig)
    for name, (cx, cy) in zip(state.names, centres[0], strict=True):  # each input named at its tile's left
        fig.add_annotation(x=cx - TILE / 2 - 0.08, y=cy, text=name, showarrow=False, xanchor="right",
                           font={"size": NAME_SIZE})
    return fig


# ---- the live diagram: the same picture, painted on a canvas by studio/live_chart.js ----

def _rgb(color: str) -> list[int]:
    return [int(color[i:i + 2], 16) for i in (1, 3, 5)]


def output_name(i: int, outputs: int) -> str:
    """An output neuron's name: "output", or with one a class, its class ("class 2")."""
    return "output" if outputs == 1 else f"class {i}"


def network_live_spec(names: Sequence[str], hidden: Sequence[int], grid: int, *, title: str, note: str,
                      outputs: int = 1) -> dict:
    """What stays the same while a run goes: the columns (input features ``names``, ``hidden`` widths, the
    ``outputs``), their headers and the colours (red -1, white 0, blue +1), as ``network_figure`` draws them.
    ``title`` and ``note`` are shown as plain text."""
    sizes = [len(names), *hidden, outputs]
    labels = [list(names), *([f"layer {c}, neuron {i + 1}" for i in range(n)] for c, n in
                             enumerate(hidden, start=1)), [output_name(i, outputs) for i in range(outputs)]]
    return {"columns": sizes, "labels": labels, "grid": grid,
            "headers": ["inputs", *(f"layer {c}" for c in range(1, len(sizes) - 1)), "output"],
            "name_room": NAME_ROOM, "name_size": NAME_SIZE,
            "colors": [_rgb(c) for _, c in SCALE], "width_bins": [b for b in WIDTH_BINS if np.isfinite(b)],
            "title": title, "note": note, "font": {"size": FONT["size"], "family": FONT["family"]}}


def network_live_state(state: NetworkState) -> dict:
    """One state of the diagram, compact: every neuron's map as bytes (-1..1 to 0..255, column by column, each
    map row by row from the bottom), the weights (each matrix (out, in), row by row) and biases as float32."""
    maps = np.concatenate([m.reshape(-1) for m in state.maps])
    levels = np.round((np.clip(np.nan_to_num(maps), -1, 1) + 1) * 127.5).astype(np.uint8)
    weights = np.concatenate([w.reshape(-1) for w in state.weights]).astype("<f4")
    biases = np.concatenate([b.reshape(-1) for b in state.biases]).astype("<f4")
    return {"step": state.step, "maps": base64.b64encode(levels.tobytes()).decode("ascii"),
            "weights": base64.b64encode(np.nan_to_num(weights).tobytes()).decode("ascii"),
            "biases": base64.b64encode(np.nan_to_num(biases).tobytes()).decode("ascii")}
