"""Lesson 6's links: the challenge comes from the address bar like any lesson's setting (a bad one warns by its
label and leaves the URL), and a Function used in lessons 2 and 5 travels in their links as validated code."""

from __future__ import annotations


def open_with(new_app, page: str, **params):
    at = new_app()
    for key, value in params.items():
        at.query_params[key] = value
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_link_opens_the_challenge_it_names(new_app):
    at = open_with(new_app, "pages/write_function.py", wf_challenge="tanh")
    assert at.session_state["wf_challenge"] == "tanh" and not at.warning
    assert at.selectbox(key="wf_challenge").value == "tanh"


def test_a_bad_challenge_warns_by_its_label_and_the_url_is_rewritten(new_app):
    at = open_with(new_app, "pages/write_function.py", wf_challenge="Nope")
    warned = " ".join(w.value for w in at.warning)
    assert "Challenge: wf_challenge `Nope` in the link is not one of the choices" in warned
    assert at.session_state["wf_challenge"] == "relu"
    assert at.query_params["wf_challenge"] in ("relu", ["relu"])


def test_the_url_follows_the_challenge_picked(new_app):
    at = open_with(new_app, "pages/write_function.py")
    assert at.query_params["wf_challenge"] in ("relu", ["relu"])
    at.selectbox(key="wf_challenge").select("sigmoid").run()
    assert at.query_params["wf_challenge"] in ("sigmoid", ["sigmoid"])


# ---- A Function from lesson 6 in lesson 2's and 5's links ----

import base64  # noqa: E402
import zlib  # noqa: E402

from autodiff_core import functions as registry  # noqa: E402
from autodiff_core.grading.challenges import CHALLENGES  # noqa: E402
from studio.session_functions import pack  # noqa: E402

RELU = CHALLENGES["relu"].solution


def use_relu(new_app, source: str = RELU):
    """Lesson 6: check a ReLU in the plain text box, then Use it; returns the app and the Function's name."""
    at = open_with(new_app, "pages/write_function.py")
    at.toggle(key="wf_plain").set_value(True).run()
    at.text_area(key="wf_text_relu").input(source).run()
    at.button(key="wf_check").click().run()
    at.button(key="wf_use").click().run()
    assert not at.exception
    [name] = at.session_state["wf_activations"]
    return at, name


def lesson2_link(at, name: str) -> str:
    at.switch_page("pages/two_layer.py").run()
    at.selectbox(key="tl_activation").select(name).run()
    value = at.query_params["tl_activation"]
    return value[0] if isinstance(value, list) else value


def test_the_same_code_gets_the_same_name_in_every_browser(new_app):
    at, name = use_relu(new_app)
    at.button(key="wf_use").click().run()
    assert at.session_state["wf_activations"] == [name]  # a second Use: the same name, not a new one
    _, other = use_relu(new_app, "# another browser, with a comment\n" + RELU)
    assert other == name and name.startswith("yours: ReLU (")
    _, wrong = use_relu(new_app, RELU.replace("input < 0] = 0", "input <= 0] = 0"))
    assert wrong != name  # other code, another name


def consent(at, key: str = "tl_activation"):
    """Press the link's "Check and use it" (the person who opened the link asks for its code to be checked)."""
    at.button(key=f"{key}_consent").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_link_carries_the_function_to_a_fresh_browser_which_runs_it_only_after_consent(new_app):
    at, name = use_relu(new_app)
    link = lesson2_link(at, name)
    assert link.startswith(name + " ") and len(link) < 400
    fresh = open_with(new_app, "pages/two_layer.py", tl_activation=link)
    assert not fresh.warning, [w.value for w in fresh.warning]
    assert fresh.session_state["tl_activation"] == "ReLU"  # nothing of it is used, or run, before consent
    assert not fresh.session_state["wf_activations"] if "wf_activations" in fresh.session_state else True
    assert any("This link carries a Function someone wrote" in m.value for m in fresh.markdown)
    assert [c.value for c in fresh.code if "grad_input" in c.value]  # its code, shown as text
    assert fresh.query_params["tl_activation"] in (link, [link])  # a reload or a copy still carries it
    consent(fresh)
    assert fresh.session_state["tl_activation"] == name
    assert name in fresh.selectbox(key="tl_activation").options
    assert fresh.session_state["wf_activations"] == [name]
    assert not any("This link carries" in m.value for m in fresh.markdown)
    lesson5 = consent(open_with(new_app, "pages/playground.py", pg_activation=link), "pg_activation")
    assert not lesson5.warning and lesson5.session_state["pg_activation"] == name


def test_a_function_from_a_link_trains_like_myrelu_in_the_sandbox(new_app):
    at, name = use_relu(new_app)
    link = lesson2_link(at, name)
    fresh = consent(open_with(new_app, "pages/two_layer.py", tl_activation=link))
    assert fresh.session_state["tl_activation"] == name
    from autodiff_core import TwoLayerConfig, train_two_layer
    from autodiff_core.grading.remote import StudentActivation

    act = fresh.session_state["wf_functions"][name]
    assert isinstance(act, StudentActivation)  # computed in a worker: the server holds only the source
    registry.bind_student_activations({name: act})  # this test's thread stands in for the run's
    try:
        losses = lambda a: [s.loss for s in train_two_layer(TwoLayerConfig(activation=a, steps=40))]  # noqa: E731
        assert losses(name) == losses("ReLU")
    finally:
        registry.bind_student_activations(None)
        act.close()


def test_a_link_whose_code_fails_check_is_never_adopted(new_app):
    wrong = RELU.replace("grad_input[input < 0] = 0", "grad_input[input > 0] = 0")  # flipped: gradcheck fails
    from studio.session_functions import name_of

    name = name_of(CHALLENGES["relu"], wrong)
    at = consent(open_with(new_app, "pages/two_layer.py", tl_activation=f"{name} {pack(wrong)}"))
    assert at.session_state["tl_activation"] == "ReLU" and not at.session_state.get("wf_activations")
    assert any("It was not used" in e.value for e in at.error)
    assert any("flipped" in t.value for t in at.text)  # why, as plain text
    at.button(key="tl_activation_ignore").click().run()
    assert not any("This link carries" in m.value for m in at.markdown)
    assert at.query_params["tl_activation"] in ("ReLU", ["ReLU"])  # ignored: the address bar lets it go


def test_a_name_without_its_code_says_where_it_was_written(new_app):
    at = open_with(new_app, "pages/two_layer.py", tl_activation="yours: ReLU (8c6793)")
    warned = " ".join(w.value for w in at.warning)
    assert "ReLU implementation: tl_activation `yours: ReLU (8c6793)` in the link is a Function written in " \
           "lesson 6 in another browser" in warned and "Use my Function in lessons 2 and 5" in warned
    assert "not one of the choices" not in warned and at.session_state["tl_activation"] == "ReLU"


def packed_raw(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


HOSTILE = {
    "an import": ("import os\n" + RELU, "refuses (line 1)"),
    "a dunder walk": (RELU.replace("return input.clamp(min=0)", "return input.__class__.__base__"), "refuses"),
    "a call of a builtin": (RELU.replace("return input.clamp(min=0)", "return open('/etc/passwd')"), "refuses"),
    "a loop": (RELU.replace("return input.clamp(min=0)", "while True:\n            pass"), "refuses"),
}


def test_hostile_code_in_a_link_is_refused_by_the_allow_list(new_app):
    for why, (source, words) in HOSTILE.items():
        link = f"yours: ReLU (0123abcd) {pack(source)}"
        at = open_with(new_app, "pages/two_layer.py", tl_activation=link)
        warned = " ".join(w.value for w in at.warning)
        assert f"carries code that lesson 6 {words}" in warned, why
        assert at.session_state["tl_activation"] == "ReLU" and not at.session_state.get("wf_activations"), why
        assert "passwd" not in warned and "__class__" not in warned  # the code is never echoed
        assert not at.session_state.get("wf_link_functions"), why  # nothing refused waits for consent either


def test_a_link_that_is_not_code_or_not_its_name_is_ignored(new_app):
    bomb = packed_raw(zlib.compress(b"#" * 5_000_000, 9))
    assert len(bomb) < 8000
    cases = {
        f"yours: ReLU (0123abcd) {pack(RELU)}": "is not the Function it names",  # the id was changed
        "yours: ReLU (0123abcd) not-base64-zlib": "cannot be read",
        f"yours: ReLU (0123abcd) {bomb}": "cannot be read",  # 5 MB of '#' in ~7 kB: stops at the size limit
        f"yours: ReLU (0123abcd) {packed_raw(b'x' * 900)}": "cannot be read",
        f"yours: ReLU (0123abcd) {'A' * 20_000}": "is too long",
        f"yours: **Bold** (0123abcd) {pack(RELU)}": "is not one of the choices",
        f"yours: a · b (two inputs) (0123abcd) {pack(CHALLENGES['multiply'].solution)}": "not one of the choices",
    }
    for link, words in cases.items():
        at = open_with(new_app, "pages/two_layer.py", tl_activation=link)
        warned = " ".join(w.value for w in at.warning)
        assert words in warned, (link[:60], warned)
        assert at.session_state["tl_activation"] == "ReLU"


# ---- The editor (defect: long lines ran off its right edge at 1280 px and on a phone) ----

def test_the_editor_wraps_long_lines_and_the_skeleton_fits_it(new_app):
    import json

    at = open_with(new_app, "pages/write_function.py")
    [editor] = [e for e in at.get("component_instance") if e.proto.component_name.endswith("streamlit_ace")]
    args = json.loads(editor.proto.json_args)
    assert args["wrapEnabled"] is True  # a line longer than the editor continues below it, indented
    assert max(len(line) for line in CHALLENGES["relu"].skeleton.splitlines()) <= 45  # ~480 px at 16 px
    assert any("stays grey until you change the code" in c.value for c in at.caption)


def test_a_new_version_replaces_the_old_one_in_lessons_2_and_5(new_app):
    at, first = use_relu(new_app)
    at.switch_page("pages/two_layer.py").run()
    at.selectbox(key="tl_activation").select(first).run()
    at.switch_page("pages/write_function.py").run()
    at.text_area(key="wf_text_relu").input(RELU.replace("input < 0] = 0", "input <= 0] = 0")).run()
    at.button(key="wf_check").click().run()
    [second] = at.session_state["wf_activations"]  # the old version is gone from the choices
    assert second != first and any(second in s.value.replace("\\", "") for s in at.success)
    at.switch_page("pages/two_layer.py").run()
    assert not at.exception and at.session_state["tl_activation"] == second
    assert first not in at.selectbox(key="tl_activation").options
