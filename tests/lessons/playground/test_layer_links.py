"""Lesson 5's per-layer widths in the link: ``pg_hidden=4,2`` (TF Playground's networkShape), checked, with a
warning for a bad value, and links made before it (``pg_layers``, ``pg_width``) still opening as they did."""

import pytest

from studio.lessons import LEGACY, PRESETS, SETTINGS
from studio.links import read_params

PG = SETTINGS["playground"]
[HIDDEN] = [s for s in PG if s.key == "pg_hidden"]


def read(**params):
    return read_params(PG, {k: v if isinstance(v, list) else [v] for k, v in params.items()}, PRESETS["playground"],
                       LEGACY["playground"])


@pytest.mark.parametrize("text, value", [("4,2", (4, 2)), ("8", (8,)), ("1,64,3,3,3,3", (1, 64, 3, 3, 3, 3)),
                                         ("16, 8", (16, 8)), ("+5,05", (5, 5))])
def test_widths_parse_and_format_back(text, value):
    assert HIDDEN.parse(text) == (value, "")
    assert HIDDEN.parse(HIDDEN.format(value)) == (value, "") and HIDDEN.format((4, 2)) == "4,2"


@pytest.mark.parametrize("text, why", [
    ("0,3", "outside 1 to 64"), ("65", "outside 1 to 64"), ("1,2,3,4,5,6,7", "1 to 6 whole numbers"),
    ("", "1 to 6 whole numbers"), ("8,,8", "1 to 6 whole numbers"), ("²,3", "1 to 6 whole numbers"),
    ("٣", "1 to 6 whole numbers"), ("1e1", "1 to 6 whole numbers"), ("8;8", "1 to 6 whole numbers"),
    ("-2", "outside 1 to 64"), ("9" * 13, "1 to 6 whole numbers"), ("8," * 40 + "8", "too long")])
def test_bad_widths_are_refused_with_the_reason(text, why):
    value, reason = HIDDEN.parse(text)
    assert value is None and why in reason


def test_a_bad_value_falls_back_with_a_warning_that_names_it():
    found, notes = read(pg_hidden="[x](http://evil.example/)", pg_lr="0.1")
    assert "pg_hidden" not in found and found["pg_lr"] == 0.1
    assert notes == ["Hidden layers (neurons in each): pg_hidden `[x](http://evil.example/)` in the link is not 1 "
                     "to 6 whole numbers separated by commas; it was ignored."]


@pytest.mark.parametrize("params, hidden", [
    (dict(pg_layers="3", pg_width="16"), (16, 16, 16)),
    (dict(pg_layers="4"), (8, 8, 8, 8)),  # the width as it was then by default
    (dict(pg_width="5"), (5, 5)),
    (dict(preset="spirals-need-depth", pg_layers="4"), (16, 16, 16, 16)),  # the preset's width
    (dict(pg_layers="3", pg_width="16", pg_hidden="4,2"), (4, 2)),  # the new parameter wins
])
def test_links_made_before_per_layer_widths_still_open(params, hidden):
    found, notes = read(**params)
    assert found["pg_hidden"] == hidden and notes == []


def test_a_bad_old_parameter_is_named_and_the_rest_of_it_applies():
    found, notes = read(pg_layers=["1", "3", "²"], pg_width="65")
    assert "pg_hidden" not in found
    assert notes == ["Hidden layers: pg_layers `²` in the link is not a whole number; it was ignored (the link gives "
                     "pg_layers 3 times; the last one counts).",
                     "Neurons per layer: pg_width `65` in the link is outside 1 to 64; it was ignored."]
    found, notes = read(pg_layers="7", pg_width="4")
    assert found["pg_hidden"] == (4, 4) and notes == [
        "Hidden layers: pg_layers `7` in the link is outside 1 to 6; it was ignored."]


def open_playground(new_app, **params):
    at = new_app()
    for key, value in params.items():
        at.query_params[key] = value
    at.switch_page("pages/playground.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_an_old_link_opens_its_network_and_the_address_bar_holds_the_new_parameter(new_app):
    at = open_playground(new_app, pg_layers="3", pg_width="16")
    assert at.session_state["pg_session"].model.config.hidden == (16, 16, 16)
    assert at.number_input(key="pg_layers").value == 3
    assert [at.number_input(key=f"pg_width_{i}").value for i in (1, 2, 3)] == [16, 16, 16]
    assert at.query_params["pg_hidden"] == "16,16,16"
    assert "pg_layers" not in at.query_params and "pg_width" not in at.query_params
    assert not at.warning


def test_each_layer_has_its_own_width_in_the_model_and_the_link(new_app):
    at = open_playground(new_app, pg_hidden="4,2")
    assert [n.key for n in at.number_input][:3] == ["pg_layers", "pg_width_1", "pg_width_2"]  # no third layer
    at.number_input(key="pg_width_2").set_value(5).run()
    assert at.session_state["pg_session"].model.config.hidden == (4, 5) and at.query_params["pg_hidden"] == "4,5"
    at.number_input(key="pg_layers").set_value(4).run()  # new layers start as wide as the last
    assert at.session_state["pg_session"].model.config.hidden == (4, 5, 5, 5)
    at.number_input(key="pg_width_4").set_value(1).run()
    at.number_input(key="pg_layers").set_value(3).run()
    assert at.session_state["pg_session"].model.config.hidden == (4, 5, 5)
    assert not at.exception


def test_a_preset_sets_every_layer_widget(new_app):
    at = open_playground(new_app, preset="circles-tf-s-4-2-tanh")
    assert at.session_state["pg_session"].model.config.hidden == (4, 2)
    assert [at.number_input(key=k).value for k in ("pg_layers", "pg_width_1", "pg_width_2")] == [2, 4, 2]
    at.selectbox(key="playground_preset").select("Spirals need depth").run()
    assert at.session_state["pg_session"].model.config.hidden == (16, 16, 16)
    assert [at.number_input(key=f"pg_width_{i}").value for i in (1, 2, 3)] == [16, 16, 16]
    assert at.session_state["playground_preset"] == "Spirals need depth"


def test_a_bad_link_warns_and_keeps_the_default_network(new_app):
    at = open_playground(new_app, pg_hidden="8,0,8")
    assert at.session_state["pg_session"].model.config.hidden == (8, 8)
    assert any("pg_hidden" in w.value and "outside 1 to 64" in w.value for w in at.warning)


def test_the_layer_presets_do_what_their_names_say(new_app):
    """TF's circles recipe, (4, 2) tanh, learns within the budget of tests/engine/test_playground_tf.py; a linear
    network of three layers draws one straight line, which cannot separate a ring."""
    from autodiff_core.playground import Playground, PlaygroundConfig
    from tests.engine.test_linear_activation import _plane_residual

    at = open_playground(new_app, preset="circles-tf-s-4-2-tanh")
    pg = Playground(at.session_state["pg_session"].model.config)
    assert next((s.step for s in pg.run(8_000, 250) if s.test_accuracy >= 0.95), None) is not None
    at = open_playground(new_app, preset="linear-activation-only-a-straight-line")
    config = at.session_state["pg_session"].model.config
    assert config.hidden == (8, 8, 8) and config.activation == "Linear"
    pg = Playground(PlaygroundConfig(**{**config.__dict__, "dtype": "float64"}))
    *_, last = pg.run(1000, 1000)
    assert _plane_residual(pg) < 1e-9 and last.test_accuracy < 0.8
