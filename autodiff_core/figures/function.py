"""Lesson 1's figure: one Function's forward curve and one backward, beside the built-in's."""

from __future__ import annotations

from collections.abc import Sequence

from .theme import style
from .xray import input_ticks, legend_below, panels


def function_figure(function: str, curve_x: Sequence[float], curve_y: Sequence[float], x: Sequence[float],
                    output: Sequence[float], grad_input: Sequence[float], reference_grad: Sequence[float],
                    reference_name: str):
    """Left: the function and the student's points. Right: backward's grad_input beside the built-in's.

    ``function`` is the Function's class name (e.g. "MyReLU"): the legend says ``MyReLU.backward``."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.16,
                        subplot_titles=("forward", "backward"))
    fig.add_trace(go.Scatter(x=list(curve_x), y=list(curve_y), mode="lines", name=f"{reference_name}(x)",
                             line={"color": "#7f7f7f", "width": 2}), 1, 1)
    fig.add_trace(go.Scatter(x=list(x), y=list(output), mode="markers", name=f"{function}.forward at your x",
                             marker={"size": 12, "color": "#1f77b4"}), 1, 1)
    labels = [f"x[{i}]={v:g}" for i, v in enumerate(x)]
    for values, name, color in ((grad_input, f"{function}.backward", "#1f77b4"),
                                (reference_grad, f"{reference_name} backward", "#ff7f0e")):
        fig.add_trace(go.Bar(x=labels, y=list(values), name=name, marker_color=color, customdata=labels,
                             hovertemplate=f"{name} at %{{customdata}}: %{{y:.6g}}<extra></extra>"), 1, 2)
    fig.update_xaxes(**input_ticks(labels), row=1, col=2)  # every element labelled, none run together
    fig.update_xaxes(title_text="input x", row=1, col=1)
    fig.update_yaxes(title_text="f(x)", row=1, col=1)
    fig.update_xaxes(title_text="element", row=1, col=2)
    fig.update_yaxes(title_text="grad_input", row=1, col=2)
    return style(fig, barmode="group", **legend_below(fig, 360))


def function_panels(*args, **kwargs) -> list:
    """``function_figure`` as two charts, forward then backward, for a page to draw in two columns: side by
    side on a laptop, one under the other on a phone (in one figure, 390 px crammed them together)."""
    forward, backward = panels(function_figure(*args, **kwargs), height=360)
    backward.update_layout(barmode="group")
    return [forward, backward]
