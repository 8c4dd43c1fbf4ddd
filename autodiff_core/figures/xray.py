"""Figure builders for the Autograd X-ray lesson: Jacobians, and the side-by-side comparisons."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..compare import ReluStep, SGDStep
from ..gradcheck import GradcheckReport
from ..logistic import LogisticSnapshot
from . import boundary_line, data_ranges
from .theme import CLASS_COLORS, style


def _subplots(cols: int, titles: Sequence[str], **kw):
    from plotly.subplots import make_subplots

    return make_subplots(rows=1, cols=cols, subplot_titles=list(titles), **kw)


def legend_below(fig, height: int) -> dict:
    """Layout for a legend at the very bottom of the figure, under the axis titles, one entry a line (never
    clipped, however narrow the chart), with the bottom margin grown to hold it: legend and axis titles
    never overlap."""
    entries = sum(1 for t in fig.data if t.showlegend is not False and t.name)
    bottom = 80 + 26 * entries
    return {"height": height + bottom, "margin": {"l": 70, "r": 20, "t": 60, "b": bottom},
            "legend": {"orientation": "v", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0,
                       "font": {"size": 16}}}


def _finish(fig, height: int = 340, *, x_titles: Sequence[str] = (), y_titles: Sequence[str] = ()):
    """The house look, a title on every axis, and the legend under the axis titles. ``height``: the plots'."""
    for col, text in enumerate(x_titles, 1):
        fig.update_xaxes(title_text=text, row=1, col=col)
    for col, text in enumerate(y_titles, 1):
        if text:
            fig.update_yaxes(title_text=text, row=1, col=col)
    return style(fig, **legend_below(fig, height))


PANEL_TOP = 76  # px above a panel's plot: the toolbar's band (about 30 px) and the title under it
_PANEL_AXIS_DROP = ("domain", "anchor", "matches", "showticklabels")


def panels(fig, height: int = 340) -> list:
    """Split a one-row subplot figure into one figure per panel, each in the house look with its own title,
    axes and legend. A page draws them in columns, which stack on a phone: three panels side by side in
    390 px put axis titles on the neighbouring plot."""
    import plotly.graph_objects as go

    layout = fig.layout
    titles = [a.text for a in layout.annotations or ()]
    out = []
    for i in range(1, len(titles) + 1):
        suffix = "" if i == 1 else str(i)
        panel = go.Figure()
        for trace in fig.data:
            if (trace.xaxis or "x") == f"x{suffix}":
                panel.add_trace(trace.update(xaxis="x", yaxis="y"))
        for name in ("xaxis", "yaxis"):
            axis = layout[f"{name}{suffix}"].to_plotly_json()
            panel.layout[name] = {k: v for k, v in axis.items() if k not in _PANEL_AXIS_DROP}
        for shape in layout.shapes or ():  # a line drawn on this panel (a kink, say) comes with it
            if (shape.xref or "x").split()[0] == f"x{suffix}":
                panel.add_shape(shape.to_plotly_json() | {"xref": "x", "yref": _own(shape.yref, suffix)})
        # just above the plot, under the band where Plotly's toolbar appears on hover (it covered the title)
        panel.layout.title = {"text": titles[i - 1], "x": 0.5, "xanchor": "center", "font": {"size": 18},
                              "y": 1, "yref": "paper", "yanchor": "bottom", "pad": {"b": 10}}
        out.append(panel)
    legends = [legend_below(panel, height) for panel in out]
    tallest = max(legends, key=lambda legend: legend["height"])  # one height for the row: the plots line up
    for panel in out:
        style(panel, **{**tallest, "margin": {**tallest["margin"], "t": PANEL_TOP}})
    return out


def _own(ref: str | None, suffix: str) -> str:
    """A shape's reference to a panel's y axis ("y2", "y2 domain") as the panel's own ("y", "y domain")."""
    return (ref or "y").replace(f"y{suffix}", "y", 1) if suffix else (ref or "y")


def jacobian_figure(report: GradcheckReport):
    """Analytical and numerical Jacobians as heatmaps side by side; mismatching entries marked with ✕."""
    import plotly.graph_objects as go

    n = len(report.input)
    labels = [f"x[{j}]={v:.3g}" for j, v in enumerate(report.input)]
    outs = [f"out[{i}]" for i in range(n)]
    lim = float(max(np.abs(report.analytical).max(), np.abs(report.numerical).max(), 1e-12))
    entries = [[f"d {o} / d {x}" for x in labels] for o in outs]  # for hover (%{x} would read the tick's lines)
    fig = _subplots(2, ["analytical", "numerical"], shared_yaxes=True)
    for col, mat in ((1, report.analytical), (2, report.numerical)):  # a scale on each: the panels match
        fig.add_trace(go.Heatmap(z=mat, x=labels, y=outs, zmin=-lim, zmax=lim, colorscale="RdBu", reversescale=True,
                                 colorbar={"thickness": 16}, showscale=True, text=entries,
                                 hovertemplate="%{text}: %{z:.6g}<extra></extra>"), 1, col)
    bad_i, bad_j = np.nonzero(report.mismatch)
    if len(bad_i):
        for col in (1, 2):  # a legend on each, as a scale: on a phone each panel stands alone
            fig.add_trace(go.Scatter(x=[labels[j] for j in bad_j], y=[outs[i] for i in bad_i], mode="markers",
                                     marker={"symbol": "x", "size": 14, "color": "black"}, name="mismatch",
                                     text=[entries[i][j] for i, j in zip(bad_i, bad_j, strict=True)],
                                     hovertemplate="mismatch in %{text}<extra></extra>"), 1, col)
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(**input_ticks(labels))
    return _finish(fig, 320 + 12 * n, x_titles=["input x[j]", "input x[j]"], y_titles=["output i", ""])


def input_ticks(labels: list[str]) -> dict:
    """The same tick labels on both panels, never run together: a few inputs as two short lines (element,
    then value) kept level; more of them on one line each, turned upright."""
    if len(labels) <= 6:
        return {"tickmode": "array", "tickvals": labels, "tickangle": 0,
                "ticktext": [label.replace("=", "<br>") for label in labels]}
    return {"tickmode": "array", "tickvals": labels, "ticktext": labels, "tickangle": -90}


def zero_grad_figure(with_zero: list[LogisticSnapshot], without: list[LogisticSnapshot], x: np.ndarray,
                     y: np.ndarray):
    """Final boundaries, losses, and weight sizes of the two runs."""
    import plotly.graph_objects as go

    fig = _subplots(3, ["boundaries", "loss", "|w0|+|w1|+|b|"])
    for c in (0, 1):
        fig.add_trace(go.Scatter(x=x[y == c, 0], y=x[y == c, 1], mode="markers", name=f"class {c}",
                                 marker={"color": CLASS_COLORS[c], "size": 6, "opacity": 0.6}), 1, 1)
    xr, yr = data_ranges(x)
    for runs, name, color in ((with_zero, "with zero_grad()", "#2ca02c"), (without, "without", "#9467bd")):
        fig.add_trace(go.Scatter(**boundary_line(runs[-1], xr), mode="lines", name=name,
                                 line={"color": color, "width": 3}), 1, 1)
        fig.add_trace(go.Scatter(x=[s.iteration for s in runs], y=[s.loss for s in runs], mode="lines",
                                 line={"color": color, "width": 3}, showlegend=False), 1, 2)
        fig.add_trace(go.Scatter(x=[s.iteration for s in runs], y=[abs(s.w0) + abs(s.w1) + abs(s.b) for s in runs],
                                 mode="lines", line={"color": color, "width": 3}, showlegend=False), 1, 3)
    fig.update_xaxes(range=xr, row=1, col=1)
    fig.update_yaxes(range=yr, row=1, col=1)
    return _finish(fig, 340, x_titles=["x₀", "iteration", "iteration"], y_titles=["x₁", "BCE loss", ""])


def sgd_figure(steps: list[SGDStep]):
    """Weights of the hand-updated and the optimizer-updated model, and the momentum buffer."""
    import plotly.graph_objects as go

    fig = _subplots(2, ["weights", "momentum buffer"])
    it = [s.iteration for s in steps]
    for k, (name, color) in enumerate((("w0", "#1f77b4"), ("w1", "#ff7f0e"), ("b", "#2ca02c"))):
        fig.add_trace(go.Scatter(x=it, y=[s.manual[k] for s in steps], mode="lines", name=f"{name} by hand",
                                 line={"color": color, "width": 3}), 1, 1)
        fig.add_trace(go.Scatter(x=it[::5], y=[s.optim[k] for s in steps][::5], mode="markers",
                                 name=f"{name} optim.SGD", marker={"color": color, "size": 7}), 1, 1)
        fig.add_trace(go.Scatter(x=it, y=[s.manual_buffer[k] for s in steps], mode="lines",
                                 name=f"{name} buffer", line={"color": color, "width": 3, "dash": "dot"}),
                      1, 2)
    return _finish(fig, 340, x_titles=["iteration", "iteration"], y_titles=["weight value", "buffer value"])


def relu_compare_figure(steps: list[ReluStep]):
    """Loss of the MyReLU and torch.relu runs overlaid, and the largest gradient difference per step."""
    import plotly.graph_objects as go

    fig = _subplots(2, ["loss (log)", "|grad difference|"])
    t = [s.step for s in steps]
    fig.add_trace(go.Scatter(x=t, y=[s.loss_custom for s in steps], name="MyReLU", mode="lines",
                             line={"width": 4, "color": "#1f77b4"}), 1, 1)
    fig.add_trace(go.Scatter(x=t, y=[s.loss_builtin for s in steps], name="torch.relu", mode="lines",
                             line={"width": 2, "dash": "dash", "color": "#ff7f0e"}), 1, 1)
    fig.add_trace(go.Scatter(x=t, y=[s.max_grad_diff for s in steps], name="grad difference", mode="lines",
                             line={"color": "#d62728"}), 1, 2)
    zeros = [s for s in steps if s.exact_zeros]
    if zeros:
        fig.add_trace(go.Scatter(x=[s.step for s in zeros], y=[s.max_grad_diff for s in zeros], mode="markers",
                                 name="a pre-activation exactly 0", marker={"size": 12, "symbol": "star"}), 1, 2)
    fig.update_yaxes(type="log", row=1, col=1)
    return _finish(fig, 340, x_titles=["step", "step"], y_titles=["loss", "largest per step"])
