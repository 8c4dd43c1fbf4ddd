"""Lesson 2 says the right thing when a run diverges, and the status line counts steps as the chart does."""

from types import SimpleNamespace

import pytest

from autodiff_core import TwoLayerConfig, train_two_layer
from autodiff_core.figures import two_layer_live_payload
from autodiff_core.two_layer import suggest_learning_rate
from studio.live_view import status_text
from tests.studio.test_app import payload, train_at_full_speed


@pytest.mark.parametrize("config", [
    TwoLayerConfig(learning_rate=10.0),
    TwoLayerConfig(learning_rate=1e-4),
    TwoLayerConfig(learning_rate=1e-5),
    TwoLayerConfig(N=16, D_in=50, H=20, learning_rate=1e-3, steps=300),
    TwoLayerConfig(N=200, D_in=30, H=300, D_out=3, learning_rate=1.0, steps=300),
])
def test_the_suggested_learning_rate_trains(config):
    """The rate a diverged run suggests really trains the same net: no divergence, the loss falls."""
    snaps = list(train_two_layer(config))
    assert snaps[-1].diverged
    suggested = float(snaps[-1].message.split("try ")[1].rstrip("."))
    assert suggested < config.learning_rate
    retry = list(train_two_layer(TwoLayerConfig(**{**config.__dict__, "learning_rate": suggested})))
    assert not any(s.diverged for s in retry)
    assert retry[-1].loss < retry[0].loss / 10


def test_the_suggestion_is_rounded_and_below_the_rate_that_failed():
    first = [1.0, 300.0, 30.0, 2e6, 5e6]  # loss, |w1|, |w2|, |grad w1|, |grad w2|
    assert suggest_learning_rate(first, 1e-4) == 5e-7  # 0.1 * 30 / 5e6 = 6e-7, rounded down to 5e-7
    assert suggest_learning_rate(first, 2e-6) == 2e-7  # never more than a tenth of the rate that failed


def test_a_diverged_message_prints_numbers_readably():
    message = list(train_two_layer(TwoLayerConfig(learning_rate=1e-4)))[-1].message
    assert "1.7e+25" in message and "1.6996" not in message


def run_like(status, step, message=""):
    return SimpleNamespace(last=SimpleNamespace(step=step), step_of=lambda s: s.step, finished=2.0, started=0.0,
                           began=0.0, running=status == "running", status=status, message=message)


@pytest.mark.parametrize("status, step, message, total, expected", [
    ("done", 499, "", 500, "Finished: all 500 steps (steps 0 to 499) in 2.0 s."),
    ("done", 380, "", 1000, "Finished at step 380 in 2.0 s."),
    ("stopped", 220, "Stopped.", 1000, "Stopped at step 220."),
    ("stopped", 220, "The page was away for more than 60 s; what the run recorded until then is kept.", 1000,
     "Stopped at step 220. The page was away for more than 60 s; what the run recorded until then is kept."),
    ("diverged", 2, "…", 500, "Diverged at step 2."),
])
def test_status_line_wording(status, step, message, total, expected):
    assert status_text(run_like(status, step, message), "step", total) == expected


def test_an_open_ended_run_has_no_total():
    text = status_text(run_like("running", 60), "step", None)
    assert text.startswith("Training… ") and " of " not in text


def test_while_running_the_status_leaves_the_step_to_the_chart_heading():
    """The chart paints its states in order, a few behind the run: a step in the status line disagreed with
    the heading right under it ("step 302 of 500" above "Step 298 of 500")."""
    text = status_text(run_like("running", 302), "step", 500)
    assert "302" not in text and text.startswith("Training 500 steps… ")


def test_the_heading_counts_steps_from_0_and_marks_the_last():
    snaps = list(train_two_layer(TwoLayerConfig(steps=5)))
    data = two_layer_live_payload(snaps, run_id="r", status="done", status_text="", steps=5)
    assert [s["caption"] for s in data["states"]][-2:] == ["Step 3 of 0–4", "Step 4 of 0–4 (the last)"]
    assert data["layout"]["xaxis"]["dtick"] == 1  # a short run: whole steps, no 0.5


def test_a_run_that_overflows_at_once_still_says_diverged_in_the_heading():
    """lr 1e6: the loss is inf at step 1, so there is no point to draw, but the heading names the step."""
    snaps = list(train_two_layer(TwoLayerConfig(learning_rate=1e6)))
    assert snaps[-1].diverged and snaps[-1].step == 1
    data = two_layer_live_payload(snaps, run_id="r", status="diverged", status_text="", steps=500)
    assert data["states"][-1]["caption"] == "Step 1 of 0–499: diverged"
    assert data["layout"]["xaxis"]["range"] == [0, 1] and data["layout"]["xaxis"]["dtick"] == 1


def test_divergence_on_screen_agrees_with_itself_and_goes_stale_when_inputs_change(app):
    app.switch_page("pages/two_layer.py").run()
    app.number_input(key="tl_lr").set_value(1e-4).run()
    run = train_at_full_speed(app, "two_layer")
    assert run.status == "diverged"
    data = payload(app, "two_layer_live")
    last = data["states"][-1]
    assert data["status_text"] == "Diverged at step 2."
    assert last["caption"] == "Step 2 of 0–499: diverged"  # the chart shows the step the status names
    assert data["curves"]["0"]["x"] == [0, 1, 2] and data["curves"]["0"]["y"][-1] == run.last.loss
    assert data["layout"]["xaxis"]["range"] == [0, 2]  # fits the run, not 500 steps
    [warning] = app.warning
    assert "diverged at step 2" in warning.value and "try 5e-07" in warning.value
    app.number_input(key="tl_lr").set_value(5e-7).run()
    assert not app.warning  # no longer a warning about the settings on screen
    assert "last run, which used other settings" in app.info[0].value
    assert payload(app, "two_layer_live")["states"][-1]["caption"] == "Step 2 of 0–499: diverged"  # still there


def test_a_huge_learning_rate_is_taken_and_diverges_visibly(app):
    """1e6 is a value a teacher types to show divergence: the box takes it and the run says what happened."""
    app.switch_page("pages/two_layer.py").run()
    app.number_input(key="tl_lr").set_value(1e6).run()
    assert app.session_state["tl_lr"] == 1e6 and not app.error
    run = train_at_full_speed(app, "two_layer")
    assert run.config.learning_rate == 1e6 and run.status == "diverged"
    assert "diverged at step" in app.warning[0].value
