"""Lesson 3's page through AppTest: the replay figure, what a stuck run says, forgetting zero_grad(),
and the learning-rate input."""

from autodiff_core import LogisticConfig, train_logistic
from tests.studio.test_app import figure, train_at_full_speed


def test_every_replay_frame_carries_its_own_caption_and_play_continues(app):
    app.switch_page("pages/logistic.py").run()
    run = train_at_full_speed(app, "logistic")
    fig = figure(app, "logistic_replay")
    by_name = {str(s.iteration): s for s in run.view()[0]}
    for frame in fig["frames"]:
        s = by_name[frame["name"]]
        title = frame["layout"]["title"]["text"]
        assert title.startswith(f"Iteration: {s.iteration}<br>accuracy: {s.accuracy:.2%}   Loss={s.loss:.4f}<br>")
    assert fig["layout"]["title"]["text"] == fig["frames"][-1]["layout"]["title"]["text"]
    play, pause = fig["layout"]["updatemenus"][0]["buttons"]
    assert play["args"][1]["fromcurrent"] and play["args"][1]["frame"]["redraw"]  # redraw: the title follows
    assert pause["args"][0] == [None]
    assert all(step["args"][1]["frame"]["redraw"] for step in fig["layout"]["sliders"][0]["steps"])


def test_a_finished_run_fits_its_iteration_axis(app):
    app.switch_page("pages/logistic.py").run()
    run = train_at_full_speed(app, "logistic")
    assert run.last.iteration == 380 < run.config.max_iterations - 1
    assert figure(app, "logistic_replay")["layout"]["xaxis2"]["range"] == [0, 380]


def test_draw_every_does_not_change_where_the_run_stops(app):
    app.switch_page("pages/logistic.py").run()
    stops = []
    for every in (1, 20, 100):
        app.number_input(key="lr_every").set_value(every).run()
        stops.append(train_at_full_speed(app, "logistic").last.iteration)
    assert stops == [380, 380, 380]


def test_a_huge_learning_rate_says_it_is_stuck_and_what_to_try(app):
    app.switch_page("pages/logistic.py").run()
    app.number_input(key="lr_lr").set_value(1e6).run()
    run = train_at_full_speed(app, "logistic")
    assert run.last.stuck
    assert any(c.value == f"Stuck at iteration {run.last.iteration}." for c in app.caption)
    assert not any("Finished" in c.value for c in app.caption)
    [warning] = app.warning
    assert "learning rate 1e+06 is too large" in warning.value and "Try learning rate 0.2." in warning.value
    app.number_input(key="lr_lr").set_value(0.2).run()  # what it says to try trains
    run = train_at_full_speed(app, "logistic")
    assert run.last.stopped and not app.warning


def test_forgetting_zero_grad_is_explained_as_a_bug_with_the_weights_ratio(app):
    app.switch_page("pages/logistic.py").run()
    app.toggle(key="lr_forget").set_value(True).run()
    forgot = train_at_full_speed(app, "logistic").last
    right = list(train_logistic(LogisticConfig()))[-1]
    ratio = (abs(forgot.w0) + abs(forgot.w1)) / (abs(right.w0) + abs(right.w1))
    assert ratio > 10
    [info] = app.info
    assert info.value.startswith("Not an improvement") and f"end {ratio:.0f}× larger" in info.value
    assert f"sum of all {forgot.iteration + 1} gradients" in info.value and "overlapping clusters" in info.value


def test_the_overlapping_case_shows_the_harm(app):
    app.switch_page("pages/logistic.py").run()
    app.button(key="lr_hurts").click().run()
    assert app.number_input(key="lr_mean").value == 1.0 and app.toggle(key="lr_forget").value
    forgot = train_at_full_speed(app, "logistic").last
    right = list(train_logistic(LogisticConfig(mean=1.0)))[-1]
    assert forgot.loss > 10 * right.loss  # sure of its wrong answers
    [info] = app.info
    assert f"loss {forgot.loss:.3g} against {right.loss:.3g}" in info.value
    [warning] = app.warning
    assert "without optimizer.zero_grad() the gradients piled up" in warning.value


def test_the_learning_rate_can_go_down_from_its_default(app):
    app.switch_page("pages/logistic.py").run()
    box = app.number_input(key="lr_lr")
    assert box.value == 0.01
    assert box.value - box.step >= box.min  # else Streamlit disables the "−" button


def test_train_starts_the_run_in_its_callback_before_the_page_and_with_the_settings_as_they_are_now(app, monkeypatch):
    """Train's callback builds the run from the session's settings at that moment and starts it before the page's
    script runs again (a class's script runs queue for the GIL; the runs need not wait for them)."""
    import time

    import studio.presets

    app.switch_page("pages/logistic.py").run()
    pages_began: list[float] = []
    bind = studio.presets.bind_lesson
    monkeypatch.setattr(studio.presets, "bind_lesson",
                        lambda key: (pages_began.append(time.perf_counter()), bind(key))[1])
    app.number_input(key="lr_lr").set_value(0.05)
    app.button(key="logistic_train").click().run()  # the new rate and the click reach the server together
    run = app.session_state["logistic_run"]
    assert run.config.learning_rate == 0.05 and pages_began and run.started < pages_began[-1]
    run.stop()
