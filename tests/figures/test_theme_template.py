"""The house template is given to each figure without a deep copy of plotly's template, and the figure is the same."""

import copy
import json

import plotly.graph_objects as go
import plotly.io as pio

from autodiff_core.figures.gradflow import gradient_flow_figure
from autodiff_core.figures.theme import base_layout, style


def as_json(fig) -> str:
    return json.dumps(fig.to_plotly_json(), sort_keys=True, default=str)


def test_style_gives_the_same_figure_as_naming_the_template():
    def traces():
        return [go.Scatter(x=[1, 2], y=[3, 4], name="loss"), go.Heatmap(z=[[1, 2], [3, 4]])]

    named = go.Figure(traces()).update_layout(**base_layout(height=300))
    named.update_annotations(font_size=18)
    ours = style(go.Figure(traces()), height=300)
    assert as_json(ours) == as_json(named)
    assert ours.layout.template.layout.paper_bgcolor == "white"


def test_styling_a_figure_deep_copies_no_template(monkeypatch):
    copied = []
    deepcopy = copy.deepcopy

    def counting(obj, memo=None):
        if isinstance(obj, go.layout.Template):
            copied.append(obj)
        return deepcopy(obj, memo)

    monkeypatch.setattr(copy, "deepcopy", counting)
    style(go.Figure(go.Scatter(x=[1], y=[1])))
    gradient_flow_figure([])
    assert copied == []


def test_a_styled_figure_never_changes_plotlys_registered_template():
    before = as_json(pio.templates["plotly_white"])
    fig = style(go.Figure())
    fig.layout.template.layout.font.size = 99
    assert as_json(pio.templates["plotly_white"]) == before
    assert style(go.Figure()).layout.template.layout.font.size is None
