"""A warning about a link names the setting by the label a teacher sees beside its widget ("Learning rate"),
then the parameter to mend in the link (``lr_lr``); every linked setting has one, the one its page draws."""

from __future__ import annotations

import pytest

from studio.labels import LABELS, label
from studio.links import read_params
from studio.presets import LEGACY, SETTINGS

PAGES = {lesson: f"pages/{lesson}.py" for lesson in SETTINGS}
WIDGETS = ("number_input", "selectbox", "slider", "select_slider", "toggle", "checkbox", "text_input", "radio")


def test_a_bad_value_is_named_by_its_label_then_its_parameter():
    [note] = read_params(SETTINGS["logistic"], {"lr_lr": ["fast"]})[1]
    assert note.startswith("Learning rate: lr_lr `fast` in the link is not a number")
    [note] = read_params(SETTINGS["logistic"], {"lr_n": ["10", "30"]})[1]
    assert note == "The link gives Points per class (lr_n) 2 times; the last one counts."
    [note] = read_params(SETTINGS["playground"], {"pg_hidden": ["4,x"]})[1]
    assert note.startswith("Hidden layers (neurons in each): pg_hidden `4,x`")


def test_every_linked_setting_has_a_label():
    keys = {s.key for settings in SETTINGS.values() for s in settings}
    keys |= {s.key for legacy in LEGACY.values() for old in legacy for s in old.settings}
    assert keys <= set(LABELS), keys - set(LABELS)
    assert label("not_a_setting") == "not_a_setting"


@pytest.mark.parametrize("lesson", list(SETTINGS))
def test_each_label_is_the_one_the_page_draws(app, lesson):
    at = app.switch_page(PAGES[lesson]).run()
    drawn = {w.key: w.label for kind in WIDGETS for w in at.get(kind) if w.key in LABELS}
    wanted = {s.key: LABELS[s.key] for s in SETTINGS[lesson] if s.key in drawn}
    assert drawn and {k: drawn[k] for k in wanted} == wanted
    assert len(wanted) >= len(SETTINGS[lesson]) - 2  # at most the data seed and the layer widths lack one


def test_the_page_warns_with_the_label(new_app):
    at = new_app()
    at.query_params["lr_lr"] = "fast"
    at.switch_page("pages/logistic.py").run()
    assert any(w.value.startswith("Learning rate: lr_lr `fast`") for w in at.warning) and not at.exception
