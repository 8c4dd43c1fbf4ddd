"""Lesson 6 through AppTest: verdicts in words, Jacobians with mismatches, solved challenges in the URL,
refusals with a line number, and a passing Function that trains in lessons 2 and 5."""

from __future__ import annotations

import json

from autodiff_core import TwoLayerConfig, train_two_layer
from autodiff_core import functions as registry
from autodiff_core.grading.challenges import CHALLENGES

RELU = CHALLENGES["relu"].solution
WRONG_RELU = RELU.replace("input < 0] = 0", "input > 0] = 0")


def open_lesson(at):
    at.switch_page("pages/write_function.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.toggle(key="wf_plain").set_value(True).run()
    return at


def submit(at, source: str, key: str = "relu"):
    at.text_area(key=f"wf_text_{key}").input(source).run()
    at.button(key="wf_check").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def chart(at, key: str) -> dict | None:
    found = [c for c in at.get("plotly_chart") if c.proto.id.endswith(key)]
    return json.loads(found[0].proto.spec) if found else None


def test_the_lesson_opens_with_the_skeleton(app):
    at = open_lesson(app)
    assert at.title[0].value == "6 · Write your own Function"
    assert at.text_area(key="wf_text_relu").value == CHALLENGES["relu"].skeleton
    at.button(key="wf_check").click().run()
    assert any("replace" in e.value and "your code" in e.value for e in at.error)


def test_a_wrong_relu_then_a_right_one(app):
    at = submit(open_lesson(app), WRONG_RELU)
    errors = " ".join(e.value for e in at.error)
    assert "gradcheck failed" in errors and "comparison is flipped" in errors
    panels = [chart(at, "wf_jacobians_0"), chart(at, "wf_jacobians_1")]  # side by side, or stacked on a phone
    assert [p["layout"]["title"]["text"] for p in panels] == ["analytical (your backward)",
                                                               "numerical (finite differences)"]
    assert all(p["data"][0]["type"] == "heatmap" and any(t.get("name") == "mismatch" for t in p["data"])
               for p in panels)
    [words] = [m.value for m in at.markdown if m.value.startswith("**Jacobians.**")]
    assert "the *analytical* one" in words and "left" not in words  # on a phone the panels are not side by side
    assert "solved" not in at.query_params

    at = submit(at, RELU)
    assert any("gradcheck passed" in s.value for s in at.success)
    assert not any(t.get("name") == "mismatch" for t in chart(at, "wf_jacobians_0")["data"])
    assert at.query_params["solved"] == ["relu"] or at.query_params["solved"] == "relu"
    assert any("Solved 1 of" in c.value for c in at.caption)


def test_refused_code_names_its_line_and_draws_nothing(app):
    at = submit(open_lesson(app), "import os\n" + RELU)
    assert any(e.value.startswith("Line 1") and "no imports" in e.value for e in at.error)
    assert not any("`" in e.value for e in at.error), "the reason is plain text: a backtick would show as one"
    assert chart(at, "wf_jacobians_0") is None


def test_an_error_while_running_shows_the_line_not_a_traceback(app):
    source = RELU.replace("grad_input = grad_output.clone()", "grad_input = grad_output.clone() + later\n"
                          "        later = 1")
    at = submit(open_lesson(app), source)
    texts = [e.value for e in at.error]
    assert any(t.startswith("Line 10") for t in texts) and not any("Traceback" in t for t in texts)


def test_kinks_are_shown_apart(app):
    at = open_lesson(app)
    at.selectbox(key="wf_challenge").select("abs").run()
    at = submit(at, CHALLENGES["abs"].solution, "abs")
    assert any("gradcheck passed" in s.value for s in at.success)
    table = at.dataframe[0].value
    assert list(table["x"]) == [0.0] and list(table["slope from the left"]) == [-1.0]
    assert chart(at, "wf_curve_0") is not None and chart(at, "wf_curve_1") is not None
    assert [s["x0"] for s in chart(at, "wf_curve_1")["layout"]["shapes"]] == [0.0]  # the kink, on each panel


def test_two_inputs_need_needs_input_grad(app):
    at = open_lesson(app)
    at.selectbox(key="wf_challenge").select("multiply").run()
    unguarded = CHALLENGES["multiply"].solution.replace("if ctx.needs_input_grad[1]:\n            grad_b",
                                                        "grad_b")
    at = submit(at, unguarded, "multiply")
    assert any("needs\\_input\\_grad" in w.value or "needs_input_grad" in w.value for w in at.warning)
    assert not at.success


def test_solved_challenges_come_from_the_link_as_data(new_app):
    at = new_app()
    at.query_params["solved"] = "tanh,**bold**,relu,<script>"
    at.run()
    at.switch_page("pages/write_function.py").run()
    assert not at.exception
    assert at.session_state["wf_solved"] == ["relu", "tanh"]
    assert any("Ignored 2 unknown" in w.value for w in at.warning)
    shown = " ".join(m.value for m in [*at.markdown, *at.caption, *at.warning])
    assert "**bold**" not in shown and "<script>" not in shown


def test_a_passing_function_trains_like_myrelu_in_lesson_2(app, monkeypatch):
    at = submit(open_lesson(app), RELU)
    at.button(key="wf_use").click().run()
    [name] = at.session_state["wf_activations"]
    assert any("pick it as the activation" in s.value for s in at.success)
    at.switch_page("pages/two_layer.py").run()
    assert name in at.selectbox(key="tl_activation").options

    act = at.session_state["wf_functions"][name]
    registry.bind_student_activations({name: act})  # this test's thread stands in for the session's

    def losses(activation):
        return [s.loss for s in train_two_layer(TwoLayerConfig(activation=activation, steps=60))]

    try:
        mine, tutorial = losses(name), losses("ReLU")
    finally:
        registry.bind_student_activations(None)
    assert mine == tutorial and mine[-1] < mine[0] / 2  # it learns, step for step like MyReLU
    act.close()


def test_a_passing_function_is_an_activation_in_the_playground(app):
    at = submit(open_lesson(app), RELU)
    at.button(key="wf_use").click().run()
    [name] = at.session_state["wf_activations"]
    at.switch_page("pages/playground.py").run()
    at.selectbox(key="pg_activation").select(name).run()
    assert not at.exception and at.session_state["pg_session"].model.config.activation == name
    for _ in range(3):
        at.button(key="pg_step").click().run()
    assert not at.exception and len(at.session_state["pg_session"].history) == 4


def test_another_session_does_not_see_my_function(app, new_app):
    at = submit(open_lesson(app), RELU)
    at.button(key="wf_use").click().run()
    [name] = at.session_state["wf_activations"]
    other = new_app()
    other.run()
    other.switch_page("pages/playground.py").run()
    assert name not in other.selectbox(key="pg_activation").options


def test_the_presenter_view_leaves_the_explanation_to_the_teacher(app):
    app.switch_page("pages/write_function.py")
    app.session_state["present"] = True
    app.run()
    assert not app.exception and not any(m.value.startswith("Fill in `forward`") for m in app.markdown)
    app.session_state["present"] = False
    app.run()
    assert any(m.value.startswith("Fill in `forward`") for m in app.markdown)


def test_code_typed_in_the_plain_box_survives_switching_to_the_editor_in_the_same_click(app):
    """Typed, then the toggle clicked at once: the text and the click come in one rerun, which draws no box."""
    open_lesson(app)
    app.toggle(key="wf_plain").set_value(True).run()
    [box] = app.text_area
    typed = box.value + "# mine\n"
    box.input(typed)
    app.toggle(key="wf_plain").set_value(False).run()
    assert not app.exception
    assert app.session_state["wf_sources"]["relu"] == typed
    app.toggle(key="wf_plain").set_value(True).run()
    assert app.text_area[0].value == typed
