"""Lesson 1's verdicts, names and figure through AppTest: what the page says must be what the numbers show."""

import json

import pytest

from tests.studio.test_pages_clean import elements


def open_lesson(app, function: str, dtype: str = "float32"):
    app.sidebar.radio(key="dtype").set_value(dtype).run()
    app.switch_page("pages/custom_function.py").run()
    app.selectbox(key="cf_function").select(function).run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def verdict(app) -> str:
    return " ".join(m.value for m in app.markdown)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_correct_tanh_is_not_called_different_over_rounding(app, dtype):
    """MyTanh's backward is 1 - t*t, torch's differs from it by about 3e-8 in float32: the same numbers."""
    at = open_lesson(app, "Tanh", dtype)
    text = verdict(at)
    assert "Forward agrees" in text and "so does backward" in text and "differs" not in text
    assert f"`torch.allclose` in {dtype}" in text  # what was compared, and how


def test_a_broken_backward_is_never_praised(app):
    """'chain rule forgotten' returns torch.relu's numbers when grad_output is all ones: say which part
    agrees (forward) and that backward is still wrong, right under 'gradcheck failed'."""
    at = open_lesson(app, "BROKEN ReLU: chain rule forgotten")
    assert "gradcheck failed" in at.error[0].value
    text = verdict(at)
    assert "Forward agrees" in text and "but the backward is wrong" in text
    assert "exactly what" not in text and "so does backward" not in text


def test_a_backward_that_differs_says_forward_agrees_and_backward_does_not(app):
    at = open_lesson(app, "BROKEN ReLU: comparison flipped")
    text = verdict(at)
    assert "Forward agrees" in text and "Backward differs" in text


def test_gradcheck_passing_a_broken_backward_is_flagged(app):
    at = open_lesson(app, "BROKEN ReLU: mask from grad_output")
    at.text_input(key="cf_input").input("0.5, 1, 2").run()
    at.text_input(key="cf_grad_output").input("1, 1, 1").run()
    assert not at.success and "this backward is wrong" in at.warning[0].value and "one-hot" in at.warning[0].value


def test_no_function_name_is_glued_to_backward(app):
    """The step table and the legend name the class whose backward ran: ReLUNoChainRule.backward."""
    at = open_lesson(app, "BROKEN ReLU: chain rule forgotten")
    steps = list(at.dataframe[0].value["step"])
    assert "5 · ReLUNoChainRule.backward returns" in steps
    fig = json.loads(at.get("plotly_chart")[1].proto.spec)  # backward, beside forward
    texts = [str(node.proto) for node in elements(at._tree) if getattr(node, "proto", None) is not None]
    assert not [t for t in texts if "forgotten.backward" in t]
    assert "ReLUNoChainRule.backward" in [t["name"] for t in fig["data"]]


def test_lesson1_figure_titles_every_axis_in_the_house_font(app):
    at = open_lesson(app, "ReLU")
    for chart in at.get("plotly_chart")[:2]:  # forward and backward, one chart each
        layout = json.loads(chart.proto.spec)["layout"]
        axes = [k for k in layout if k.startswith(("xaxis", "yaxis"))]
        assert len(axes) == 2 and all(layout[k]["title"]["text"] for k in axes)
        assert layout["font"]["size"] == 16


def test_forward_and_backward_are_two_charts_with_every_element_labelled(app):
    """One figure with two plots crammed them together on a phone (grad_input's title on the forward curve,
    every other bar unlabelled): two charts in columns stack there, and each bar's element is labelled."""
    at = open_lesson(app, "ReLU")
    forward, backward = (json.loads(c.proto.spec) for c in at.get("plotly_chart")[:2])
    assert forward["layout"]["title"]["text"] == "forward" and backward["layout"]["title"]["text"] == "backward"
    assert {t["type"] for t in backward["data"]} == {"bar"} and backward["layout"].get("barmode") == "group"
    ticks = backward["layout"]["xaxis"]
    n = len(backward["data"][0]["y"])
    assert len(ticks["ticktext"]) == n and ticks["tickangle"] == 0 and ticks["ticktext"][0] == "x[0]<br>-2"


@pytest.mark.parametrize(("function", "said"), [
    ("ReLU", "at x = 0, `MyReLU` gives 1 and `torch.relu` 0"),
    ("LeakyReLU", "at x = 0, `MyLeakyReLU` gives 1 and `F.leaky_relu(x, 0.01)` 0.01"),  # said: torch.relu 0
])
def test_a_kink_is_named_by_the_numbers_of_the_table(app, function, said):
    at = open_lesson(app, function)
    at.text_input(key="cf_input").input("-1, 0, 1").run()
    at.text_input(key="cf_grad_output").input("1, 1, 1").run()
    text = verdict(at)
    assert f"Backward differs only at a kink (rows 5 and 6: {said})" in text and "valid subgradient" in text
    table = at.dataframe[0].value
    five, six = (table[table["step"].str.startswith(row)]["x[1]"].item() for row in ("5 ·", "6 ·"))
    assert f"gives {five:g} and " in text and f"` {six:g})" in text  # the table's numbers, at x[1] = 0
    assert "row 2 against" in text and "the curve of the forward chart" in text  # not a row the table lacks
