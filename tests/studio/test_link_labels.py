"""A warning about a link names the setting by the label a teacher sees beside its widget ("Learning rate"),
then the parameter to mend in the link (``lr_lr``). Each widget is drawn from its setting's declaration
(``studio/lessons.py``): the label, bounds and help a page shows are the declared ones."""

from __future__ import annotations

import pytest

from studio.lessons import LEGACY, SETTINGS, lessons
from studio.links import Setting, read_params
from tests.conftest import open_tab

WIDGETS = ("number_input", "selectbox", "slider", "select_slider", "toggle", "checkbox", "text_input", "radio")


def test_a_bad_value_is_named_by_its_label_then_its_parameter():
    [note] = read_params(SETTINGS["logistic"], {"lr_lr": ["fast"]})[1]
    assert note.startswith("Learning rate: lr_lr `fast` in the link is not a number")
    [note] = read_params(SETTINGS["logistic"], {"lr_n": ["10", "30"]})[1]
    assert note == "The link gives Points per class (lr_n) 2 times; the last one counts."
    [note] = read_params(SETTINGS["playground"], {"pg_hidden": ["4,x"]})[1]
    assert note.startswith("Hidden layers (neurons in each): pg_hidden `4,x`")


def test_every_linked_setting_has_a_label():
    unlabelled = [s.key for settings in SETTINGS.values() for s in settings if not s.label]
    unlabelled += [s.key for legacy in LEGACY.values() for old in legacy for s in old.settings if not s.label]
    assert not unlabelled
    [note] = read_params([], {"pg_width": ["x"]}, legacy=LEGACY["playground"])[1]  # an older link's parameter
    assert note.startswith("Neurons per layer: pg_width `x`")
    [note] = read_params([Setting("not_labelled", int, 1, 0, 9)], {"not_labelled": ["x"]})[1]
    assert note.startswith("not_labelled `x` in the link is not a whole number")  # no label: the key names it


@pytest.mark.parametrize("lesson", [x.key for x in lessons()])
def test_each_widget_is_the_declared_one(app, lesson):
    """Label, bounds and help as declared, for every setting the page draws as one widget."""
    at = app.switch_page(f"pages/{lesson}.py").run()
    declared = {s.key: s for s in SETTINGS[lesson]}
    drawn = {w.key: w for kind in WIDGETS for w in at.get(kind) if w.key in declared}
    for tab in [t.label for t in at.tabs] if lesson == "xray" else []:  # lesson 4 draws only its open tab
        drawn |= {w.key: w for kind in WIDGETS for w in open_tab(at, tab).get(kind) if w.key in declared}
    # the data seed (Regenerate) and the layer widths have no widget; lesson 5's own points are drawn on the plane,
    # and its Classes slider shows for the sets that take it (tests/lessons/playground/test_classes.py)
    assert len(drawn) >= len(declared) - 2 - len(declared.keys() & {"pg_points", "pg_classes"})
    for key, w in drawn.items():
        s = declared[key]
        assert w.label == s.label, key
        assert (w.help or "") == s.help, key
        if s.lo is not None and s.choices is None and s.kind is not tuple:
            assert (w.min, w.max) == (s.lo, s.hi), key


def test_the_page_warns_with_the_label(new_app):
    at = new_app()
    at.query_params["lr_lr"] = "fast"
    at.switch_page("pages/logistic.py").run()
    assert any(w.value.startswith("Learning rate: lr_lr `fast`") for w in at.warning) and not at.exception
