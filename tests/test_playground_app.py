"""The playground page through AppTest: Play, Pause, Step, Reset, messages."""

import json
import time

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
    history = at.session_state["pg_history"]
    assert [s.step for s in history][:3] == [0, 1, 2]  # the curve continues from the stepped states
    assert any("pg_replay" in c.proto.id for c in at.get("plotly_chart"))
    at.button(key="pg_reset").click().run()
    assert payload(at)["states"][-1]["step"] == 0 and not at.exception


def test_extremes_give_messages_not_tracebacks(app):
    at = app.switch_page("pages/playground.py").run()
    at.number_input(key="pg_width").set_value(1).run()
    at.slider(key="pg_noise").set_value(0.0).run()
    infos = " ".join(i.value for i in at.info)
    assert "1 neuron" in infos and "Noise 0" in infos
    at.number_input(key="pg_width").set_value(8).run()
    at.number_input(key="pg_lr").set_value(1e6).run()
    for _ in range(3):
        at.button(key="pg_step").click().run()
    assert any("learning rate" in w.value for w in at.warning)
    assert not at.exception


def test_changing_the_dataset_rebuilds_the_model(app):
    at = app.switch_page("pages/playground.py").run()
    at.button(key="pg_step").click().run()
    before = at.session_state["pg_model"]
    at.selectbox(key="pg_dataset").select("Circles").run()
    assert at.session_state["pg_model"] is not before
    assert payload(at)["states"][-1]["step"] == 0
    at.button(key="pg_regen").click().run()
    assert at.session_state["pg_data_seed"] == 1
