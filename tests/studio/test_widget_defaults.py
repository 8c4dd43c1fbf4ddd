"""Every widget is drawn with the session's value as its default, on every run of every page.

Streamlit tells the browser a value set through ``st.session_state`` once, as a one-shot instruction the browser's
widget clears when it reads it. A widget the browser draws again without its own state shows the widget's default:
on a slow first page run, lesson 2's D_in and H showed 1 (their minimum, Streamlit's default) although the run had
sent 1000 and 100, and the next Train trained a net of D_in 1. ``studio.state.drawn_at`` gives each widget its value
as its default, so the browser has nothing else to fall back to.
"""

from __future__ import annotations

import math

import pytest

from studio.state import drawn_at
from tests.studio.test_pages_clean import PAGES, elements

KINDS = ("NumberInput", "Slider", "SelectSlider", "Selectbox", "Radio", "Toggle", "Checkbox", "TextInput")


def drawn_defaults(at) -> dict[str, tuple]:
    """For each keyed widget of the page: (what its drawn default is, what the session's value is), in the
    widget's own terms (a choice's index; a number; a flag; a text)."""
    found = {}
    for node in elements(at._tree):
        kind, key = type(node).__name__, getattr(node, "key", None)
        if kind not in KINDS or key is None or key not in at.session_state:
            continue
        proto, value = node.proto, at.session_state[key]
        if kind in ("Selectbox", "Radio"):
            found[key] = (proto.default if proto.HasField("default") else None, node.index)
        elif kind in ("SelectSlider", "Slider"):
            drawn = list(proto.default)
            if kind == "SelectSlider":
                found[key] = (drawn, [list(proto.options).index(node.format_func(value))])
            else:
                found[key] = (drawn, list(value) if isinstance(value, tuple) else [float(value)])
        elif kind == "NumberInput":
            found[key] = (proto.default if proto.HasField("default") else None, float(value))
        else:
            found[key] = (proto.default, value)
    return found


@pytest.mark.parametrize("page", PAGES)
def test_every_widget_is_drawn_at_its_value_on_every_run(new_app, page):
    """On the page's first run (where Streamlit also sends the values) and on a later one (where it does not)."""
    at = new_app()
    at.run()
    at.switch_page(page).run()
    for run in ("first", "later"):
        assert not at.exception, [e.value for e in at.exception]
        shown = drawn_defaults(at)
        assert shown, f"no widget on {page}"
        wrong = {key: pair for key, pair in shown.items() if pair[0] != pair[1]
                 and not (isinstance(pair[0], float) and math.isclose(pair[0], pair[1], rel_tol=1e-12))}
        assert wrong == {}, f"{page}, {run} run: (drawn default, value) {wrong}"
        at.run()


def test_lesson_2_from_a_link_draws_its_sizes_at_their_values_on_a_later_run(new_app):
    """The case seen in a browser: D_in and H, from a link with only some of the settings, at 1000 and 100."""
    at = new_app()
    at.query_params.update({"tl_steps": "60", "two_layer_speed": "max"})
    at.run()
    at.switch_page("pages/two_layer.py").run()
    at.run()
    shown = drawn_defaults(at)
    assert shown["tl_D_in"] == (1000.0, 1000.0) and shown["tl_H"] == (100.0, 100.0)
    assert shown["tl_steps"] == (60.0, 60.0)


def test_the_code_box_and_the_click_picker_are_drawn_at_their_values(new_app):
    """Lesson 6's plain text box (a student's code: redrawn empty, it would be lost) and lesson 5's "A click on the
    plane adds" picker, on a run after the one that drew them first."""
    from autodiff_core.data import OWN

    at = new_app()
    at.run()
    at.switch_page("pages/write_function.py").run()
    at.toggle(key="wf_plain").set_value(True).run()
    at.run()
    [box] = [n for n in elements(at._tree) if type(n).__name__ == "TextArea"]
    assert box.proto.default == at.session_state[box.key] and "class MyReLU" in box.proto.default
    at = new_app()
    at.query_params["pg_dataset"] = OWN
    at.run()
    at.switch_page("pages/playground.py").run()
    at.session_state["pg_draw"] = 1  # class 1, as a click on the picker sets it
    at.run()
    at.run()
    [picker] = [n for n in elements(at._tree) if getattr(n, "key", None) == "pg_draw"]
    assert list(picker.proto.default) == [1] and not at.exception


@pytest.fixture
def session(monkeypatch):
    import streamlit as st

    state = {}
    monkeypatch.setattr(st, "session_state", state)
    return state


def test_drawn_at_gives_each_kind_its_argument(session):
    session.update(n=3, x=0.5, pick="b", on=True, text="hi", speed="max")
    assert drawn_at("number_input", "n", lo=1, hi=10) == {"value": 3}
    assert drawn_at("number_input", "x", lo=0.0, hi=1.0) == {"value": 0.5}
    assert drawn_at("selectbox", "pick", options=["a", "b"]) == {"index": 1}
    assert drawn_at("radio", "pick", options=("a", "b")) == {"index": 1}
    assert drawn_at("select_slider", "speed", options=["1", "max"]) == {"value": "max"}
    assert drawn_at("toggle", "on") == {"value": True}
    assert drawn_at("text_input", "text") == {"value": "hi"}
    assert drawn_at("text_area", "text") == {"value": "hi"}  # a student's code in the plain text box
    assert drawn_at("segmented_control", "pick", options=["a", "b"]) == {"default": "b"}


def test_drawn_at_leaves_streamlits_default_where_the_value_does_not_fit(session):
    """A value the widget would refuse (Streamlit raises on a default out of range) is not passed."""
    session.update(n=30, f=2.5, pick="z", nan=float("nan"), flag=True, whole=4.0)
    assert drawn_at("number_input", "missing", lo=1, hi=10) == {}
    assert drawn_at("number_input", "n", lo=1, hi=10) == {}
    assert drawn_at("number_input", "f", lo=1, hi=10) == {}  # not a whole number for an int widget
    assert drawn_at("number_input", "whole", lo=1, hi=10) == {"value": 4}  # int, as the bounds are
    assert drawn_at("number_input", "nan", lo=0.0, hi=1.0) == {}
    assert drawn_at("number_input", "flag", lo=0, hi=1) == {}
    assert drawn_at("selectbox", "pick", options=["a"]) == {}
    assert drawn_at("segmented_control", "pick", options=["a"]) == {}
    with pytest.raises(ValueError):
        drawn_at("file_uploader", "n")
