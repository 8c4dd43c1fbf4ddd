"""Lesson 3 in the presenter view: what ended the run is readable, and the zero_grad() sentence says where the
button it names is (folded into "Settings and presets" there)."""

import pytest

from tests.studio.test_app import train_at_full_speed


@pytest.mark.parametrize("present", [False, True])
def test_the_zero_grad_sentence_says_where_its_button_is(app, present):
    app.switch_page("pages/logistic.py")
    app.session_state["present"] = present
    app.run()
    app.toggle(key="lr_forget").set_value(True).run()
    train_at_full_speed(app, "logistic")
    [info] = app.info
    assert "button above" not in info.value and "“Show where it hurts: overlapping clusters” button" in info.value
    assert ("“Settings and presets”" in info.value) == present


def test_in_the_presenter_view_the_finished_line_is_a_caption_the_presenter_css_enlarges(app):
    """A caption, as lesson 2's status line: the presenter view sets captions at 18 px, not greyed (measured in
    Chromium: tests/studio/test_presenter_text.py); plain text stayed at 16 px."""
    app.switch_page("pages/logistic.py")
    app.session_state["present"] = True
    app.run()
    train_at_full_speed(app, "logistic")
    assert any(c.value.startswith("Finished at iteration") for c in app.caption)
    assert not any("Finished" in m.value for m in app.markdown)
