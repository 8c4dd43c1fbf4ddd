"""The gradcheck lab's two heatmaps are laid out alike, and a panel's title sits clear of Plotly's toolbar."""

import torch

from autodiff_core import gradcheck_report
from autodiff_core.figures.xray import jacobian_figure, panels


def _panels(points):
    report = gradcheck_report("BROKEN ReLU: comparison flipped", torch.tensor(points, dtype=torch.float64))
    return [p.to_plotly_json() for p in panels(jacobian_figure(report))]


def test_both_heatmaps_have_the_same_scale_legend_and_ticks():
    analytical, numerical = _panels([-1.5, -0.4, 0.3, 1.2, 2.0])
    for panel in (analytical, numerical):
        assert [t.get("showscale") for t in panel["data"] if t["type"] == "heatmap"] == [True]
        assert [t.get("showlegend") is not False for t in panel["data"] if t["type"] == "scatter"] == [True]
    a, n = analytical["layout"], numerical["layout"]
    assert a["margin"] == n["margin"] and a["height"] == n["height"]
    assert a["xaxis"]["ticktext"] == n["xaxis"]["ticktext"] and a["xaxis"]["tickangle"] == n["xaxis"]["tickangle"] == 0
    assert a["xaxis"]["ticktext"][0] == "x[0]<br>-1.5"  # two short lines: they never run together


def test_many_inputs_are_turned_upright_on_both():
    analytical, numerical = _panels([0.1 * k + 0.05 for k in range(-6, 6)])
    assert analytical["layout"]["xaxis"]["tickangle"] == numerical["layout"]["xaxis"]["tickangle"] == -90


def test_hover_names_the_entry_on_one_line():
    analytical, _ = _panels([-1.5, 2.0])
    heatmap = next(t for t in analytical["data"] if t["type"] == "heatmap")
    assert heatmap["text"][0][1] == "d out[0] / d x[1]=2" and "%{x}" not in heatmap["hovertemplate"]


def test_panel_title_sits_under_the_toolbar_band():
    """Plotly's toolbar shows over the top ~30 px of a chart on hover: the title sits just above the plot,
    with the top margin leaving that band free, as on every row of panels."""
    for panel in _panels([-1.5, 2.0]):
        title, top = panel["layout"]["title"], panel["layout"]["margin"]["t"]
        assert (title["yref"], title["y"], title["yanchor"]) == ("paper", 1, "bottom")
        assert top - title["pad"]["b"] - 24 >= 34  # 24 px: an 18 px title's line
