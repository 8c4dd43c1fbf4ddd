"""The playground page through AppTest: Play, Pause, Step, Reset, messages."""

import json
import time

from autodiff_core.figures.playground import caption
from tests.conftest import wait_for_run


def payload(at):
    [el] = [e for e in at.get("bidi_component") if e.proto.id.endswith("playground_live")]
    return json.loads(el.proto.json)


def test_step_play_pause_reset(app):
    at = app.switch_page("pages/playground.py").run()
    assert not at.exception
    assert payload(at)["states"][-1]["step"] == 0
    at.button(key="pg_step").click().run()
    at.button(key="pg_step").click().run()
    data = payload(at)
    assert data["states"][-1]["step"] == 2 and data["surface"]["colors"][1] == [247, 247, 247]
    assert len(data["states"][-1]["surface"]) == 32 and len(data["states"][-1]["surface"][0]) == 32
    at.select_slider(key="pg_speed").set_value("200").run()
    at.button(key="pg_play").click().run()
    assert at.session_state["playground_run"].running
    time.sleep(0.5)
    at.button(key="pg_pause").click().run()
    run = wait_for_run(at, "playground", timeout=10)
    assert run.status == "stopped" and run.last.step > 2
    history = at.session_state["pg_session"].history
    assert [s.step for s in history][:3] == [0, 1, 2]  # the curve continues from the stepped states
    at.toggle(key="pg_replay_on").set_value(True).run()
    assert any("pg_replay" in c.proto.id for c in at.get("plotly_chart"))
    at.button(key="pg_reset").click().run()
    assert payload(at)["states"][-1]["step"] == 0 and not at.exception


def test_extremes_give_messages_not_tracebacks(app):
    at = app.switch_page("pages/playground.py").run()
    at.number_input(key="pg_width_1").set_value(1).run()
    at.slider(key="pg_noise").set_value(0.0).run()
    infos = " ".join(i.value for i in at.info)
    assert "1 neuron" in infos and "Noise 0" in infos
    at.number_input(key="pg_width_1").set_value(8).run()
    at.number_input(key="pg_lr").set_value(1e6).run()
    for _ in range(3):
        at.button(key="pg_step").click().run()
    assert any("learning rate" in w.value for w in at.warning)
    assert not at.exception


def test_changing_the_dataset_rebuilds_the_model(app):
    at = app.switch_page("pages/playground.py").run()
    at.button(key="pg_step").click().run()
    before = at.session_state["pg_session"].model
    at.selectbox(key="pg_dataset").select("Circles").run()
    assert at.session_state["pg_session"].model is not before
    assert payload(at)["states"][-1]["step"] == 0
    at.button(key="pg_regen").click().run()
    assert at.session_state["pg_data_seed"] == 1


def play_then_pause(at, seconds=0.5):
    at.select_slider(key="pg_speed").set_value("200").run()
    at.button(key="pg_play").click().run()
    time.sleep(seconds)
    at.button(key="pg_pause").click().run()
    return wait_for_run(at, "playground", timeout=10)


def test_step_after_pause_advances_one_step_at_a_time(app):
    at = app.switch_page("pages/playground.py").run()
    run = play_then_pause(at)
    paused = payload(at)["states"][-1]["step"]
    assert paused == at.session_state["pg_session"].model.steps_done > 0
    for i in range(1, 4):
        at.button(key="pg_step").click().run()
        data = payload(at)
        assert data["states"][-1]["step"] == paused + i
        assert data["states"][-1]["caption"].startswith(f"Step {paused + i:,} ")
        assert data["run"] != run.run_id and data["status"] == "idle"
    assert [s.step for s in at.session_state["pg_session"].history][-4:] == [paused, paused + 1, paused + 2, paused + 3]
    assert not at.exception


def test_a_data_change_mid_run_clears_what_belonged_to_the_old_data(app):
    at = app.switch_page("pages/playground.py").run()
    at.select_slider(key="pg_speed").set_value("200").run()
    at.button(key="pg_play").click().run()
    time.sleep(0.5)
    old = at.session_state["playground_run"]
    at.selectbox(key="pg_dataset").select("Spirals").run()
    data = payload(at)
    assert [s["step"] for s in data["states"]] == [0] and data["status"] == "idle" and data["status_text"] == ""
    assert data["run"] != old.run_id and data["curves"]["4"]["x"] == [0]
    pg = at.session_state["pg_session"].model
    assert data["states"][0]["caption"] == caption(pg.snapshot())  # the new data's untrained model
    assert data["base"][0]["x"] == pg.x_train[pg.y_train == 0, 0].tolist()  # the spiral points
    replays = [c for c in at.get("plotly_chart") if "pg_replay" in str(getattr(c, "key", ""))]
    assert not replays and not at.warning  # no replay and no message of the old run
    assert not old.running and "playground_run" not in at.session_state
    # Regenerate mid-run does the same
    at.button(key="pg_play").click().run()
    time.sleep(0.5)
    old = at.session_state["playground_run"]
    at.button(key="pg_regen").click().run()
    assert not old.running and "playground_run" not in at.session_state
    assert [s["step"] for s in payload(at)["states"]] == [0] and not at.exception


def test_a_broken_backward_is_named_as_the_cause_not_the_learning_rate(app):
    at = app.switch_page("pages/playground.py").run()
    at.selectbox(key="pg_activation").select("BROKEN ReLU: chain rule forgotten").run()
    for _ in range(3):
        at.button(key="pg_step").click().run()
    text = " ".join(w.value for w in at.warning)
    assert "backward of BROKEN ReLU: chain rule forgotten is wrong" in text and "gradcheck fails" in text
    assert "try" not in text
    at.selectbox(key="pg_activation").select("ReLU").run()
    assert not at.warning and not at.exception


def test_a_paused_long_run_keeps_its_whole_history_in_the_curves(app):
    """The runner keeps only ~4 MB of whole snapshots (each holds a surface), so a run of thousands of steps
    keeps few of them; the curves drawn after Pause must still cover the whole run as densely as the live
    chart did (a step every ``stride`` recorded), not leap from step 0 to the last few thousand."""
    at = app.switch_page("pages/playground.py").run()
    at.select_slider(key="pg_speed").set_value("max").run()
    at.button(key="pg_play").click().run()
    run = at.session_state["playground_run"]
    deadline = time.monotonic() + 120
    while run.running and (run.last is None or run.last.step < 3200) and time.monotonic() < deadline:
        time.sleep(0.2)
    at.button(key="pg_pause").click().run()
    run = wait_for_run(at, "playground", timeout=10)
    paused = at.session_state["pg_session"].model.steps_done
    assert paused >= 3200 and len(run.view()[0]) < 200  # the whole snapshots were thinned
    stride = 8  # every_step_then_sparser records every 8th step from step 2,800 to 6,000
    for key in ("4", "6"):  # train loss, test accuracy
        steps = payload(at)["curves"][key]["x"]
        assert steps[0] == 0 and steps[-1] == paused
        assert max(b - a for a, b in zip(steps, steps[1:], strict=False)) <= 2 * stride
    data = payload(at)
    assert data["layout"]["xaxis2"]["range"][1] < 1.1 * paused  # the step axis ends at the data
    [flow] = [c for c in at.get("plotly_chart") if "pg_gradflow" in c.proto.id]
    flow_steps = json.loads(flow.proto.spec)["data"][0]["x"]
    assert flow_steps[0] <= 10 and flow_steps[-1] == paused  # gradient flow from the start of the run too
    assert not at.exception


def test_pause_at_full_speed_says_where_it_paused(app):
    """At max speed the model runs past the last recorded state; Pause still names the step on screen."""
    at = app.switch_page("pages/playground.py").run()
    at.select_slider(key="pg_speed").set_value("max").run()
    at.button(key="pg_play").click().run()
    time.sleep(1.0)
    at.button(key="pg_pause").click().run()
    wait_for_run(at, "playground", timeout=10)
    pg = at.session_state["pg_session"].model
    assert at.session_state["pg_session"].history[-1].step == pg.steps_done
    assert payload(at)["status_text"] == f"Paused at step {pg.steps_done:,}."
    at.button(key="pg_step").click().run()  # Step moves on: the line about the pause goes
    assert payload(at)["status_text"] == ""
