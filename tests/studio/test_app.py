"""The app through Streamlit's AppTest: every page renders, runs finish, figures hold what they should."""

import json
import time

import pytest

import autodiff_core
import autodiff_core.devices
import studio.sidebar
from autodiff_core import DeviceInfo
from studio.lessons import lessons
from tests.conftest import feed_get, wait_for_run

PAGES = ["pages/home.py", *(x.page for x in lessons())]


def train_at_full_speed(at, lesson):
    """Speed 'max', press Train, rerun until the run has ended; returns the run."""
    at.select_slider(key=f"{lesson}_speed").set_value("max").run()
    at.button(key=f"{lesson}_train").click().run()
    return wait_for_run(at, lesson)


def payload(at, key):
    [el] = [e for e in at.get("bidi_component") if e.proto.id.endswith(key)]
    return json.loads(el.proto.json)


def figure(at, key):
    [el] = [e for e in at.get("plotly_chart") if e.proto.id.endswith(key) or key in e.proto.id]
    return json.loads(el.proto.spec)


CPU = DeviceInfo("cpu", "CPU", "cpu")
MACHINES = {  # device lists the sidebar may meet; "here" is this machine's own
    "here": None,
    "cpu-only": [CPU],
    "nvidia-gpu": [CPU, DeviceInfo("cuda:0", "GPU 0: NVIDIA H200", "cuda")],
    "two-gpus": [CPU, *(DeviceInfo(f"cuda:{i}", f"GPU {i}: NVIDIA A100", "cuda") for i in range(2))],
    "apple": [CPU, DeviceInfo("mps", "Apple GPU (MPS)", "mps")],
}


@pytest.fixture(params=list(MACHINES))
def devices(request, monkeypatch) -> list[DeviceInfo]:
    """The device list, as this machine has it or as another machine would (torch's answer replaced)."""
    listed = MACHINES[request.param]
    if listed is not None:
        for module in (autodiff_core, autodiff_core.devices, studio.sidebar):
            monkeypatch.setattr(module, "available_devices", lambda: list(listed))
    return autodiff_core.devices.available_devices()


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_without_exception(new_app, devices, page):
    app = new_app()
    app.run()
    app.switch_page(page).run()
    assert not app.exception, [e.value for e in app.exception]
    errors = [e.value for e in app.error]
    if page == "pages/xray.py":  # lesson 4 opens on a broken Function: its failing gradcheck is the lesson
        errors = [e for e in errors if not e.startswith("gradcheck failed")]
    assert not errors, errors
    selector = app.sidebar.selectbox(key="device")
    assert selector.value == "cpu" and selector.options == [d.label for d in devices]
    assert any("No GPU" in c.value for c in app.sidebar.caption) == (len(devices) == 1)


@pytest.mark.parametrize("machine", ["nvidia-gpu", "two-gpus", "apple"])
def test_a_link_picks_the_gpu_where_there_is_one(new_app, monkeypatch, machine):
    listed = MACHINES[machine]
    for module in (autodiff_core, autodiff_core.devices, studio.sidebar):
        monkeypatch.setattr(module, "available_devices", lambda: list(listed))
    at = new_app()
    at.query_params["device"] = "mps" if machine == "apple" else "cuda"
    at.run()
    assert at.sidebar.selectbox(key="device").value == listed[1].id  # "cuda" means the first GPU
    assert not at.sidebar.warning and not at.exception


def test_custom_function_shows_each_step_and_the_verdict(app):
    app.switch_page("pages/custom_function.py").run()
    assert "gradcheck passed" in app.success[0].value
    table = app.dataframe[0].value
    assert list(table["step"])[:3] == ["1 · input x", "2 · forward returns", "3 · ctx.saved_tensors[0]"]
    assert list(table["x[0]"])[:2] == [-2.0, 0.0]  # MyReLU(-2) = 0
    fig = figure(app, "cf_figure_1")  # forward in cf_figure_0, backward beside it
    relu_bars, ref_bars = fig["data"][0], fig["data"][1]
    assert relu_bars["y"] == ref_bars["y"] and relu_bars["name"] == "MyReLU.backward"
    assert "class MyReLU" in app.get("code")[0].proto.code_text


def test_custom_function_catches_a_broken_backward_and_bad_input(app):
    app.switch_page("pages/custom_function.py").run()
    app.selectbox(key="cf_function").select("BROKEN ReLU: comparison flipped").run()
    assert "gradcheck failed" in app.error[0].value and "The bug:" in app.error[0].value
    app.text_input(key="cf_input").input("1, two, 3").run()
    assert "'two' in the input is not a number" in app.error[0].value
    app.text_input(key="cf_input").input("0, 1").run()
    assert "grad_output needs one number per input element" in app.error[0].value
    assert not app.exception


def test_a_point_on_the_kink_is_explained(app):
    app.switch_page("pages/custom_function.py").run()
    app.text_input(key="cf_input").input("0, 1, -1").run()
    app.text_input(key="cf_grad_output").input("1, 1, 1").run()
    assert "kink" in app.error[0].value


def test_two_layer_short_run_streams_the_loss(app):
    app.switch_page("pages/two_layer.py").run()
    app.number_input(key="tl_steps").set_value(40).run()
    run = train_at_full_speed(app, "two_layer")
    assert run.status == "done" and run.count == 40
    data = payload(app, "two_layer_live")
    assert data["curves"]["0"]["x"] == list(range(40))
    assert data["layout"]["yaxis"]["type"] == "log"
    assert data["states"][-1]["caption"] == "Step 39 of 0–39 (the last)"
    assert data["status_text"].startswith("Finished: all 40 steps")
    assert not app.exception


def test_two_layer_divergence_warns_and_keeps_the_last_good_state(app):
    app.switch_page("pages/two_layer.py").run()
    app.number_input(key="tl_lr").set_value(1e-3).run()
    run = train_at_full_speed(app, "two_layer")
    assert run.status == "diverged"
    assert "diverged at step 2" in app.warning[0].value and "learning rate" in app.warning[0].value
    data = payload(app, "two_layer_live")
    assert data["curves"]["0"]["x"] == [0, 1]  # the infinite loss is not drawn; the last good state stays
    assert data["states"][-1]["step"] == 2  # the heading names the step the status names
    assert data["states"][-1]["caption"] == "Step 2 of 0–499: diverged"


def test_two_layer_oversized_config_is_refused_with_a_message(app):
    app.switch_page("pages/two_layer.py").run()
    app.number_input(key="tl_D_in").set_value(20_000).run()
    app.number_input(key="tl_H").set_value(5_000).run()
    app.number_input(key="tl_N").set_value(10_000).run()
    assert "the limit is" in app.error[0].value
    assert app.button(key="two_layer_train").disabled


def test_logistic_run_becomes_an_animation_with_the_tutorial_caption(app):
    app.switch_page("pages/logistic.py").run()
    run = train_at_full_speed(app, "logistic")
    assert run.status == "done" and run.last.iteration == 380
    fig = figure(app, "logistic_replay")
    assert len(fig["frames"]) == 381 and fig["frames"][-1]["name"] == "380"  # every iteration
    assert fig["layout"]["title"]["text"] == ("Iteration: 380<br>accuracy: 99.50%   Loss=0.0493<br>"
                                              "w0: -1.41   w1: -1.48   b: 1.93")
    assert [b["label"] for b in fig["layout"]["updatemenus"][0]["buttons"]] == ["▶ Play", "❚❚ Pause"]
    assert len(fig["layout"]["sliders"][0]["steps"]) == 381
    assert fig["layout"]["xaxis"]["range"] == fig["layout"]["xaxis"]["range"]  # fixed, not autorange
    boundary = fig["frames"][0]["data"][0]
    assert len(boundary["x"]) == 2


def test_forgetting_zero_grad_grows_the_weights_on_screen(app):
    app.switch_page("pages/logistic.py").run()
    app.toggle(key="lr_forget").set_value(True).run()
    forgot = train_at_full_speed(app, "logistic").last
    app.toggle(key="lr_forget").set_value(False).run()
    right = train_at_full_speed(app, "logistic").last
    assert abs(forgot.w0) > 5 * abs(right.w0)


def test_the_last_run_survives_a_trip_to_another_page(app):
    app.switch_page("pages/logistic.py").run()
    app.number_input(key="lr_momentum").set_value(0.5).run()
    run = train_at_full_speed(app, "logistic")
    app.switch_page("pages/home.py").run()
    app.switch_page("pages/logistic.py").run()
    assert app.number_input(key="lr_momentum").value == 0.5
    assert app.session_state["logistic_run"] is run
    assert figure(app, "logistic_replay")["frames"]


def test_stop_ends_a_slow_run(app):
    app.switch_page("pages/logistic.py").run()
    app.select_slider(key="logistic_speed").set_value("5").run()
    app.button(key="logistic_train").click().run()
    run = app.session_state["logistic_run"]
    assert run.running
    # While it goes, the chart reads it from the live feed: the same payload, built when asked.
    data = payload(app, "logistic_live")
    assert data["feed"] == f"/api/live/{run.token}"
    status, fed = feed_get(data["feed"])
    assert status == 200 and fed["run"] == run.run_id and fed["base"] == data["base"]  # the same points
    deadline = time.monotonic() + 30  # stop mid-run: once the worker has recorded a state (a busy machine is slow)
    while run.count == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert run.count > 0
    app.button(key="logistic_stop").click().run()
    assert wait_for_run(app, "logistic", timeout=5) is run and run.status == "stopped"
    assert any("Stopped at iteration" in c.value for c in app.caption)
    assert feed_get(data["feed"])[1]["status"] == "stopped"  # a chart still asking learns that it ended


def test_odd_url_parameters_get_messages_not_errors(new_app):
    at = new_app()
    at.query_params.update({"device": "cuda:9", "dtype": "float8", "seed": "-3'; drop"})
    at.run()
    texts = " ".join(w.value for w in at.sidebar.warning)
    assert "`cuda:9` in the link is not available" in texts and "Using the CPU" in texts
    assert "dtype `float8`" in texts and "seed" in texts
    assert at.sidebar.selectbox(key="device").value == "cpu" and not at.exception


def test_a_good_url_sets_the_sidebar_and_the_url_follows_the_sidebar(new_app):
    at = new_app()
    at.query_params.update({"dtype": "float64", "seed": "7"})
    at.run()
    assert at.sidebar.radio(key="dtype").value == "float64"
    assert at.sidebar.number_input(key="seed_value").value == 7
    assert not at.sidebar.toggle(key="seed_tutorial").value
    at.sidebar.radio(key="dtype").set_value("float32").run()
    assert at.query_params["dtype"] in (["float32"], "float32")


def test_a_queued_run_says_on_its_page_where_it_waits_and_why(new_app, monkeypatch):
    """Lesson 3 pressed while big runs hold the memory kept for them: the live chart's status line (what the page
    shows over the chart) is the queue's sentence, not 'Training…'."""
    from studio import budget

    limit = 4 * 2**30
    monkeypatch.setattr(budget.BUDGET, "_limits", {"cpu": limit})
    monkeypatch.setattr(budget.BUDGET, "_used", {"cpu": limit})  # full
    at = new_app()
    at.switch_page("pages/logistic.py").run()
    at.button(key="logistic_train").click().run()
    deadline = time.monotonic() + 10
    while (run := at.session_state["logistic_run"]).status != "queued" and time.monotonic() < deadline:
        time.sleep(0.05)
    at.run()
    text = payload(at, "logistic_live")["status_text"]
    assert text.startswith("Waiting: ") and "you are next" in text, text
    run.stop()
