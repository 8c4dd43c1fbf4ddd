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
