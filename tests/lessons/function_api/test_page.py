"""Lesson 8 through AppTest: each part runs its Function beside PyTorch's op, shows the code that ran (its real
source) and the errors autograd raises as plain text; needs_input_grad is timed and says what it measured; the
editor's code is judged in the sandbox; bad numbers get a sentence."""

from __future__ import annotations

import inspect
import json

import pytest

from autodiff_core import api_demos, function_api
from autodiff_core.functions import MySigmoid, MyTanh
from autodiff_core.grading.api_challenges import API_CHALLENGES
from studio.links import slug
from tests.studio.test_url_fuzz import open_app, q

SHOWN = {  # part -> (classes whose source is shown, words of each error autograd raised)
    "double_backward": ((function_api.MySinh, function_api.MySinhSavedExp, function_api.MySinhOnce),
                        ("trying to differentiate twice a function that was marked with @once_differentiable",)),
    "forward_mode": ((function_api.MySigmoidJvp, MySigmoid),
                     ("You must implement the jvp function", "it must override the setup_context staticmethod")),
    "in_place": ((function_api.MyReLUInPlace, function_api.MyReLUInPlaceUnmarked),
                 ("is a view and is being modified inplace",)),
    "non_differentiable": ((function_api.MySort,), ()),
    "needs_input_grad": ((function_api.MyMatMul, function_api.MyMatMulEveryGrad), ()),
    "torch_func": ((function_api.MyTanhModern, MyTanh),
                   ("it must override the setup_context staticmethod", "set generate_vmap_rule=True")),
}


def texts(at) -> str:
    return " ".join(str(e.value) for kind in ("success", "error", "warning", "markdown", "info", "caption")
                    for e in getattr(at, kind))


def chart(at, key: str) -> dict | None:
    found = [c for c in at.get("plotly_chart") if c.proto.id.endswith(key)]
    return json.loads(found[0].proto.spec) if found else None


@pytest.mark.parametrize("part", list(SHOWN))
def test_each_part_shows_its_run_its_real_code_and_autograds_errors_as_text(new_app, part):
    at = open_app(new_app, "function_api", q(fa_part=part))
    assert not at.exception, [e.value for e in at.exception]
    assert at.header[0].value == api_demos.PARTS[part]
    classes, errors = SHOWN[part]
    shown = [c.value.strip() for c in at.code]
    for cls in classes:
        assert inspect.getsource(cls).strip() in shown, cls.__name__
    plain = [c.value for c in at.code if c.language == "text"]  # autograd's words, in a box of their own
    assert len(plain) == len(errors) and all(words in text for words, text in zip(errors, plain, strict=True))
    assert "Traceback" not in texts(at) + " ".join(shown)
    assert not at.error, [e.value for e in at.error]  # every Function here passes its checks


def test_double_backward_draws_the_derivatives_and_the_hessian_vector_products(new_app):
    at = open_app(new_app, "function_api", q(fa_part="double_backward", fa_x="-1, 0.5", fa_v="2, -1"))
    hvp = chart(at, "fa_hvp")
    bars = {t["name"]: t["y"] for t in hvp["data"]}
    assert bars["MySinh"] == pytest.approx(bars["torch.sinh"]) and bars["MySinhSavedExp"] != pytest.approx(
        bars["torch.sinh"])
    assert "its H·v is wrong" in texts(at) and "gradgradcheck fails" in texts(at)
    names = [t["name"] for t in chart(at, "fa_curves")["data"]]
    assert names[:3] == ["sinh(x)", "MySinh: backward", "torch.sinh: backward"]


def test_a_preset_opens_its_part_with_its_numbers(new_app):
    at = open_app(new_app, "function_api", q(preset=slug("Forward mode: one column of the Jacobian")))
    assert at.session_state["fa_part"] == "forward_mode" and not at.exception
    tangents = {t["name"]: t["y"] for t in chart(at, "fa_jvp")["data"]}
    ours = tangents["torch.autograd.forward_ad"]
    assert ours[0] != 0 and ours[1:] == [0, 0, 0, 0]  # J·e₀: the first column of a diagonal Jacobian
    assert ours == pytest.approx(tangents["torch.sigmoid (func.jvp)"])


def test_needs_input_grad_is_timed_with_what_was_measured(new_app):
    at = open_app(new_app, "function_api", q(fa_part="needs_input_grad"))
    assert chart(at, "fa_timing_chart") is None  # nothing is timed until someone asks
    at.button(key="fa_time").click().run()
    assert not at.exception
    [said] = [s.value for s in at.success]
    assert "×** the time of MyMatMulEveryGrad's" in said and "1 matrix product instead of 2" in said
    assert "Measured here: y = x @ W with x (256, 512) data, W (512, 512)" in texts(at)
    boxes = chart(at, "fa_timing_chart")["data"]
    assert [len(b["y"]) for b in boxes] == [15, 15]
    assert any(link.proto.page.endswith("write_function") for link in at.get("page_link"))


@pytest.mark.parametrize("x, v, words", [
    ("1, 2, x", "1, 2, 3", "is not a number"), ("1, 2", "1, 2, 3", "v needs one number per element of x"),
    ("1, 20", "1, 2", "between -10 and 10"), ("1, 1e400", "1, 2", "must be finite")])
def test_bad_numbers_get_a_sentence_and_no_run(new_app, x, v, words):
    at = open_app(new_app, "function_api", "")
    assert chart(at, "fa_curves") is not None
    at.text_input(key="fa_x").input(x).run()
    at.text_input(key="fa_v").input(v).run()
    assert not at.exception and words in at.error[0].value
    assert chart(at, "fa_curves") is None


def test_x_and_v_show_where_a_part_uses_them_and_are_kept_meanwhile(new_app):
    at = open_app(new_app, "function_api", q(fa_x="1, -2", fa_v="3, 4"))
    at.radio(key="fa_part").set_value("needs_input_grad").run()
    assert not [t for t in at.text_input if t.key in ("fa_x", "fa_v")]
    assert at.query_params["fa_x"] in ("1, -2", ["1, -2"])  # the link still holds them
    at.radio(key="fa_part").set_value("in_place").run()
    assert [t.key for t in at.text_input if t.key.startswith("fa_")] == ["fa_x"]
    at.radio(key="fa_part").set_value("forward_mode").run()
    assert (at.text_input(key="fa_x").value, at.text_input(key="fa_v").value) == ("1, -2", "3, 4")
    assert not at.exception and not at.error


def test_the_editor_checks_the_students_function_in_the_sandbox(new_app):
    at = open_app(new_app, "function_api", q(fa_part="in_place"))
    at.toggle(key="fa_plain").set_value(True).run()
    assert at.text_area(key="fa_text_in_place").value == API_CHALLENGES["in_place"].skeleton
    at.button(key="fa_check").click().run()
    assert not at.exception
    assert at.error[0].value == "3 of 5 checks failed."
    said = texts(at)
    assert "✕ **ctx\\.mark\\_dirty\\(input\\)**" in said and "This behavior is forbidden" in said
    at.button(key="fa_solution").click().run()  # start from the lesson's own Function
    assert at.text_area(key="fa_text_in_place").value == inspect.getsource(function_api.MyReLUInPlace)
    at.button(key="fa_check").click().run()
    assert [s.value for s in at.success] == ["All 5 checks passed, against torch.relu."]


def test_student_code_and_its_errors_are_text_never_markup(new_app):
    at = open_app(new_app, "function_api", q(fa_part="torch_func"))
    at.toggle(key="fa_plain").set_value(True).run()
    source = API_CHALLENGES["torch_func"].solution.replace("generate_vmap_rule = True", "generate_vmap_rule = False")
    at.text_area(key="fa_text_torch_func").input(source).run()
    at.button(key="fa_check").click().run()
    shown = [m.value for m in at.markdown if m.value.startswith("✕")]
    assert shown and all("set generate\\_vmap\\_rule\\=True" in m for m in shown)  # escaped: shown as typed
    assert any("Add generate_vmap_rule = True" in w.value.replace("\\", "") for w in at.warning)
