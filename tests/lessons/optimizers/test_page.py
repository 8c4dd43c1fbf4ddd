"""Lesson 7's page through AppTest: a moved setting redraws every path at once, the sentences beside the chart are
the run's story, a blow-up is said and breaks nothing, Train streams the same run, the presenter view, the check
against torch.optim and the code that ran."""

from __future__ import annotations

import inspect
import json

import pytest

from autodiff_core import optimizers
from autodiff_core.figures.landscape import PATHS
from autodiff_core.landscape import LandscapeConfig, surface_of, train_landscape, whole_run
from autodiff_core.landscape_story import story
from autodiff_core.optimizers import NAMES
from autodiff_core.surfaces import SURFACES, Surface
from tests.studio.test_app import figure, payload, train_at_full_speed

LESSON = "optimizers"


@pytest.fixture
def page(app):
    return app.switch_page("pages/optimizers.py").run()


def paths(at) -> list[tuple[list, list]]:
    data = figure(at, f"{LESSON}_replay")["data"]
    return [(data[PATHS + i]["x"], data[PATHS + i]["y"]) for i in range(len(NAMES))]


def said(at) -> str:
    """What the page says under "What happened"."""
    [text] = [m.value for m in at.markdown if m.value.startswith("- ")]
    return text


def test_moving_the_learning_rate_redraws_every_path_at_once(page):
    assert not page.exception
    before = paths(page)
    assert all(len(x) == 101 for x, _ in before)  # the whole run is on screen before any Train
    page.number_input(key="op_lr").set_value(0.3).run()
    after = paths(page)
    assert all(a != b for a, b in zip(before, after, strict=True))  # all five, in one rerun
    assert "Your learning rate 0.3 is below it" in said(page)
    page.number_input(key="op_momentum").set_value(0.5).run()
    moved = paths(page)
    assert [a != b for a, b in zip(after, moved, strict=True)] == [False, True, True, False, False]  # β: two use it


def test_the_sentences_beside_the_chart_are_the_story_of_the_run_drawn(page):
    run = page.session_state[f"{LESSON}_run"]
    assert run.config == LandscapeConfig() and run.view()[0] == list(whole_run(run.config))
    assert said(page) == "\n".join(f"- {f.text}" for f in story(run.config, run.view()[0]))
    assert paths(page)[1][0] == [s.w0[1] for s in run.view()[0]]  # Momentum's path is the run's


def test_a_huge_rate_blows_paths_up_says_so_and_breaks_nothing(page):
    page.number_input(key="op_lr").set_value(100.0).run()
    assert not page.exception and not page.error
    text = said(page)
    assert "**SGD** blew up" in text and "no longer a finite number" in text
    json.dumps(figure(page, f"{LESSON}_replay"), allow_nan=False)  # nothing the browser's JSON.parse refuses
    page.number_input(key="op_lr").set_value(0.1).run()  # and back
    assert "blew up" not in said(page)


@pytest.fixture
def cliff(monkeypatch):
    """The bowl replaced by a loss no float holds, from the start: every path blows up at step 0."""
    def cliff(conditioning, dtype, device, seed):
        return Surface("Narrow bowl", lambda w0, w1: (w0 * 0 + 1e39) * (w1 * 0 + 1e39), (-1.0, 1.0), (0.0, 0.0),
                       (-2.0, 2.0), (-2.0, 2.0), quadratic=True)

    for cached in (surface_of, whole_run):
        cached.cache_clear()
    monkeypatch.setitem(SURFACES, "Narrow bowl", cliff)
    yield
    for cached in (surface_of, whole_run):
        cached.cache_clear()


def test_when_every_path_blows_up_the_page_warns_and_stands(cliff, page):
    assert not page.exception
    [warning] = page.warning
    assert warning.value.startswith("Every path blew up by step 0") and "make it smaller" in warning.value
    assert said(page).endswith("**Adam**'s loss was not a finite number even at the start, so it has no path.")
    train_at_full_speed(page, LESSON)
    assert not page.exception and page.session_state[f"{LESSON}_run"].status == "diverged"


def test_train_streams_the_same_run_live_then_shows_its_replay(page):
    page.select_slider(key=f"{LESSON}_speed").set_value("1").run()
    page.button(key=f"{LESSON}_train").click().run()
    live = payload(page, f"{LESSON}_live")
    assert live["feed"].startswith("/api/live/") and live["layout"]["images"]  # the landscape under the paths
    assert {f"p{PATHS + i}" for i in range(len(NAMES))} <= set(live["curves"])
    page.button(key=f"{LESSON}_stop").click().run()
    run = train_at_full_speed(page, LESSON)
    assert run.status == "done" and run.view()[0] == list(train_landscape(LandscapeConfig()))
    assert any(c.value.startswith("Finished: all 101 steps (steps 0 to 100)") for c in page.caption)
    assert len(paths(page)[0][0]) == 101


def test_earlier_settings_are_ghosts_and_the_same_settings_are_not(page):
    page.number_input(key="op_lr").set_value(0.2).run()
    names = [t["name"] for t in figure(page, f"{LESSON}_replay")["data"]]
    assert "lr 0.1" in names  # SGD's loss at the rate before, faintly, on the loss chart
    train_at_full_speed(page, LESSON)
    names = [t["name"] for t in figure(page, f"{LESSON}_replay")["data"]]
    assert "lr 0.1" in names and not any(n.startswith("same settings") for n in names)


def test_in_the_presenter_view_the_chart_fills_the_width_and_the_story_follows(app):
    app.switch_page("pages/optimizers.py")
    app.session_state["present"] = True
    app.run()
    layout = figure(app, f"{LESSON}_replay")["layout"]
    assert layout["xaxis"]["domain"][1] < layout["xaxis2"]["domain"][0] and layout["height"] <= 720
    assert layout["font"]["size"] >= 18
    assert any(c.value.startswith("All 101 steps") for c in app.caption)  # 18 px in the presenter view
    assert not beside_the_chart(app)  # the chart takes the projector's width; what happened follows under it


def beside_the_chart(at) -> bool:
    """Whether "What happened" sits in a column (beside the chart) rather than under it."""
    return any(m.value == "**What happened**" for column in at.columns for m in column.markdown)


def test_on_a_laptop_what_happened_sits_beside_the_chart(page):
    assert beside_the_chart(page)


def test_the_check_against_torch_optim_compares_every_step(page):
    page.button(key="op_compare").click().run()
    [table] = page.table
    rows = table.value
    assert list(rows["Optimizer"]) == list(NAMES) and set(rows["Same bits"]) == {"every step"}
    assert list(rows["torch.optim"])[2] == "torch.optim.SGD(lr, momentum, nesterov=True)"


def test_the_code_shown_is_the_source_that_ran(page):
    [code] = [c.value for c in page.code if "class Adam" in c.value]
    for part in (optimizers.SGD, optimizers.Nesterov, optimizers.RMSprop, optimizers.Adam, train_landscape):
        assert inspect.getsource(part).strip() in code


def test_a_sidebar_gpu_still_computes_on_the_cpu_and_says_why(new_app, monkeypatch):
    import autodiff_core
    import autodiff_core.devices
    import studio.sidebar
    from autodiff_core import DeviceInfo

    listed = [DeviceInfo("cpu", "CPU", "cpu"), DeviceInfo("cuda:0", "GPU 0: NVIDIA H200", "cuda")]
    for module in (autodiff_core, autodiff_core.devices, studio.sidebar):
        monkeypatch.setattr(module, "available_devices", lambda: list(listed))
    at = new_app()
    at.query_params["device"] = "cuda"
    at.run()
    at.switch_page("pages/optimizers.py").run()
    assert not at.exception and at.session_state[f"{LESSON}_run"].config.device == "cpu"
    assert any("computes on the CPU" in c.value for c in at.caption)
