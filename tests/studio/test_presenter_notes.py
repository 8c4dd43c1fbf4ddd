"""The presenter view starts with the sidebar collapsed, so the link's notes about device, dtype and seed
(drawn in the sidebar otherwise) show in the page: in a lesson under its title with the lesson's own notes,
one Dismiss for all; on a page without settings of its own, at the top."""

from __future__ import annotations

from tests.studio.test_url_fuzz import open_app, q


def test_presenter_view_shows_the_seed_warning_beside_the_lessons_own(new_app):
    at = open_app(new_app, "logistic", q(present="1", seed="abc", lr_lr="abc"))
    texts = [w.value for w in at.main.warning]
    assert len(texts) == 2 and texts[0].startswith("seed `abc` in the link"), texts
    assert texts[1].startswith("Learning rate:"), texts
    assert not at.sidebar.warning and not at.exception
    at.run()  # still there after a rerun
    assert len(at.main.warning) == 2
    at.button(key="logistic_links_dismiss").click().run()
    assert not at.main.warning and not at.sidebar.warning and not at.exception


def test_presenter_view_on_a_page_without_settings_shows_them_at_the_top(new_app):
    at = open_app(new_app, "home", q(present="1", seed="abc"))
    [text] = [w.value for w in at.main.warning]
    assert text.startswith("seed `abc` in the link") and not at.sidebar.warning
    at.button(key="url_notes_dismiss").click().run()
    assert not at.main.warning and not at.exception


def test_without_the_presenter_view_they_stay_in_the_sidebar(new_app):
    at = open_app(new_app, "logistic", q(seed="abc", lr_lr="abc"))
    assert [w.value[:4] for w in at.sidebar.warning] == ["seed"]
    assert [w.value[:8] for w in at.main.warning] == ["Learning"]


def test_lesson_5s_notes_on_the_settings_are_the_teachers_to_say_in_the_presenter_view(new_app):
    """A layer of 1 neuron, noise 0: the page says what they mean; the presenter view leaves the room to the chart."""
    link = q(pg_noise="0", pg_hidden="1")
    notes = [i.value for i in open_app(new_app, "playground", link).main.info]
    assert any(n.startswith("Noise 0") for n in notes) and any(n.startswith("A layer of 1 neuron") for n in notes)
    at = open_app(new_app, "playground", link + "&" + q(present="1"))
    assert not at.main.info and not at.exception
