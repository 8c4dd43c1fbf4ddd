"""Figure builders for lesson 6: the two Jacobians of a judged Function, and its curve and slope."""

from __future__ import annotations

import numpy as np

from ..grading.judge import CURVE_GRAD_OUTPUT, Verdict
from .theme import style

YOURS, REFERENCE, KINK = "#1f77b4", "#ff7f0e", "#7f7f7f"


def jacobians_figure(v: Verdict):
    """Analytical (your backward) and numerical (finite differences) Jacobians; mismatches marked ✕.

    Works for several inputs too: their columns sit side by side (a[0..7], then b[0..7]). A page draws it as two
    panels (``xray.panels``), side by side on a laptop and one under the other on a phone, where one figure printed
    the two titles on top of each other: each panel has its colour scale and its legend."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=["analytical (your backward)", "numerical (finite differences)"])
    lim = float(max(np.abs(v.analytical).max(), np.abs(v.numerical).max(), 1e-12))
    for col, mat in ((1, v.analytical), (2, v.numerical)):
        fig.add_trace(go.Heatmap(z=mat, x=list(v.input_labels), y=list(v.output_labels), zmin=-lim, zmax=lim,
                                 colorscale="RdBu", reversescale=True, colorbar={"thickness": 16},
                                 hovertemplate="d %{y} / d %{x}: %{z:.6g}<extra></extra>"), 1, col)
    rows, cols = np.nonzero(v.mismatch)
    for col in (1, 2) if len(rows) else ():
        fig.add_trace(go.Scatter(x=[v.input_labels[j] for j in cols], y=[v.output_labels[i] for i in rows],
                                 mode="markers", name="mismatch",
                                 marker={"symbol": "x", "size": 14, "color": "black"}), 1, col)
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(tickangle=-45)
    return style(fig, height=480, margin={"l": 70, "r": 20, "t": 90, "b": 110},
                 legend={"orientation": "h", "y": 1.2, "x": 0, "yanchor": "bottom"})


def curve_figure(v: Verdict, reference_name: str):
    """Left: your forward and the reference. Right: both backwards fed grad_output = 2 (twice the slope). A page
    draws it as two panels (``xray.panels``): in one figure a phone cut a title to "backward with grad_outpu"."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    c = v.curve
    titles = ["forward", f"backward with grad_output = {CURVE_GRAD_OUTPUT:g}"]
    fig = make_subplots(rows=1, cols=2, subplot_titles=titles)
    pairs = (("yours", "reference"), ("slope", "reference_slope"))
    for col, (mine, theirs) in enumerate(pairs, start=1):
        fig.add_trace(go.Scatter(x=c["x"], y=c[theirs], name=reference_name, mode="lines",
                                 line={"color": REFERENCE, "width": 6}), 1, col)
        fig.add_trace(go.Scatter(x=c["x"], y=c[mine], name="yours", mode="lines",
                                 line={"color": YOURS, "width": 3, "dash": "dash"}), 1, col)
    for k in v.kinks:
        for col in (1, 2):
            fig.add_vline(x=k.x, line={"color": KINK, "dash": "dot"}, row=1, col=col)
    fig.update_xaxes(title_text="input")
    # the legend from the figure's left edge, not the plot's: on a phone it then ends clear of the toolbar
    return style(fig, height=400, margin={"l": 50, "r": 20, "t": 90, "b": 50},
                 legend={"orientation": "h", "y": 1.2, "x": 0, "xref": "container", "yanchor": "bottom"})
