"""A lesson is declared once: a new lesson is its page, its engine module and one registry entry, and it then
appears in navigation and on the home page, its link and presets work, its runs save and load as run files,
and the budget reads its cost. Checked with a toy lesson registered from a fixture (``tests/studio/toy_lesson``)."""

from __future__ import annotations

import pytest

from autodiff_core import runs_io
from studio import budget, lessons
from tests.studio.toy_lesson import TOY, ToyConfig, ToySnapshot, train_toy


@pytest.fixture
def toy():
    lessons.register(TOY)
    yield TOY
    lessons.unregister(TOY.key)


def test_the_course_is_the_registry_in_order():
    keys = [x.key for x in lessons.lessons()]
    assert keys == ["custom_function", "two_layer", "logistic", "xray", "playground", "write_function", "optimizers",
                    "function_api"]
    assert [x.number for x in lessons.lessons()] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert set(runs_io.KINDS) == {x.key for x in lessons.lessons() if x.config is not None}


def test_a_preset_may_set_only_its_lessons_settings():
    with pytest.raises(ValueError, match="not its settings"):
        lessons.Lesson("bad", 9, "Bad", "", settings=TOY.settings, presets={"Wrong": {"lr_lr": 1.0}})


def test_a_registered_lesson_is_in_navigation_and_on_the_home_page(toy, app):
    assert any(s.value == "99 · Toy lesson" for s in app.subheader)
    assert [x.key for x in lessons.lessons()][-1] == "toy_lesson"
    at = app.switch_page(toy.page).run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["99 · Toy lesson"]
    assert at.number_input(key="toy_lr").label == "Toy learning rate"


def opened(new_app):
    """An AppTest that has run app.py once (its navigation then knows every registered page), not yet linked."""
    at = new_app()
    at.run()
    return at


def test_a_registered_lesson_s_link_and_presets_set_its_widgets(toy, new_app):
    at = opened(new_app)
    at.query_params["preset"] = "big-steps"
    at.query_params["toy_size"] = "30"
    at.switch_page(toy.page).run()
    assert not at.exception and not at.warning
    assert (at.session_state["toy_lr"], at.session_state["toy_size"]) == (0.9, 30)
    assert at.session_state["toy_lesson_preset"] is None  # a preset and a change: "Your own settings"
    assert (at.query_params["toy_lr"], at.query_params["toy_size"]) == ("0.9", "30")  # the address bar holds them
    at = opened(new_app)
    at.query_params["preset"] = "big-steps"
    at.switch_page(toy.page).run()
    assert at.session_state["toy_lesson_preset"] == "Big steps"
    at = opened(new_app)
    at.query_params["toy_lr"] = "7"  # out of its declared range: falls back, and the warning names its label
    at.switch_page(toy.page).run()
    assert at.session_state["toy_lr"] == 0.1
    assert any(w.value.startswith("Toy learning rate: toy_lr `7`") for w in at.warning)


def test_a_registered_lesson_s_runs_are_run_files(toy):
    config = ToyConfig(size=3, learning_rate=0.5)
    snaps = list(train_toy(config))
    text = runs_io.to_json(runs_io.run_record("toy_lesson", config, snaps))
    lesson, loaded, states, _ = runs_io.from_json(text)
    assert (lesson, loaded, states) == ("toy_lesson", config, snaps)
    assert all(isinstance(s, ToySnapshot) for s in states)
    lessons.unregister("toy_lesson")
    with pytest.raises(ValueError, match="lessons with run files"):
        runs_io.from_json(text)


def test_the_budget_reads_a_registered_lesson_s_cost(toy):
    small, big = budget.estimate(ToyConfig(size=1)), budget.estimate(ToyConfig(size=100))
    assert (small.memory, big.memory) == (4 * 1000, 4 * 100_000)
    assert small.step_seconds == 0.01 and big.hint == "Make it smaller."
    server = budget.Budget()
    assert server.refuse(big) == ""
    huge = budget.estimate(ToyConfig(size=10**9))
    assert "Make it smaller." in server.refuse(huge)
