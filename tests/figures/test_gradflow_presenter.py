"""Lesson 5's gradient-flow chart in the presenter view (its two plots side by side, each on its own axes) and
with the mode bar clear of the newest steps. Figure-level: the layouts Plotly is given."""

import pytest

from autodiff_core.figures.gradflow import gradient_flow_figure, gradient_flow_live
from autodiff_core.figures.theme import landscape, present_layout
from autodiff_core.playground import Playground, PlaygroundConfig


@pytest.fixture(scope="module")
def snaps():
    return list(Playground(PlaygroundConfig(hidden=(4, 3))).run(30, 1))


def side_by_side(layout: dict) -> None:
    x, y, x2, y2 = (layout[k] for k in ("xaxis", "yaxis", "xaxis2", "yaxis2"))
    assert x["domain"][1] < x2["domain"][0]  # two plots, left and right
    assert y.get("anchor", "x") == "x" and y2.get("anchor") == "x2"  # each y-axis at its own plot's left edge
    assert x.get("anchor", "y") == "y" and x2.get("anchor") == "y2"
    for axis in (x, x2):  # both plots have their step ticks and axis title
        assert axis.get("showticklabels", True) is True
        assert axis["title"]["text"] == "step"
    assert y["title"]["text"] == "|dLoss/dW|" and y2["title"]["text"] == "dead units"


def test_finished_chart_in_the_presenter_view_puts_each_plot_on_its_own_axes(snaps):
    spec = gradient_flow_figure(snaps).to_plotly_json()
    layout = present_layout(spec["layout"])
    side_by_side(layout)
    dead = [t for t in spec["data"] if t.get("yaxis") == "y2"]
    assert dead and all(t["xaxis"] == "x2" for t in dead)
    assert all(t.get("yaxis", "y") == "y" and t.get("xaxis", "x") == "x" for t in spec["data"] if t not in dead)


def test_live_chart_in_the_presenter_view_puts_each_plot_on_its_own_axes(snaps):
    spec, _ = gradient_flow_live(snaps, 3)
    side_by_side(present_layout(spec["layout"]))


def test_landscape_anchors_a_stacked_layout_that_named_no_anchors():
    layout = landscape({"xaxis": {"matches": "x2", "showticklabels": False}, "yaxis": {"domain": [0.5, 1]},
                        "xaxis2": {"title": {"text": "step"}}, "yaxis2": {"domain": [0, 0.4]}, "margin": {}})
    assert layout["yaxis"]["anchor"] == "x" and layout["yaxis2"]["anchor"] == "x2"
    assert layout["xaxis"]["showticklabels"] and layout["xaxis"]["title"]["text"] == "step"


@pytest.mark.parametrize("present", [False, True])
def test_the_mode_bar_has_room_right_of_the_newest_steps(snaps, present):
    """The vertical mode bar (about 30 px wide) is drawn over the figure's right edge: the plot ends before."""
    layouts = [gradient_flow_figure(snaps).to_plotly_json()["layout"], gradient_flow_live(snaps, 3)[0]["layout"]]
    for layout in layouts:
        assert layout["modebar"]["orientation"] == "v"
        if present:
            layout = present_layout(layout)
            room = layout["margin"]["r"] + (1 - layout["xaxis2"]["domain"][1]) * 1000  # a 1280 px page's plot
        else:
            room = layout["margin"]["r"]
        assert room >= 40
