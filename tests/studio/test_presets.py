"""Each lesson's presets, opened the way a teacher shares them (``?preset=<name>``), do what their names say.

The page builds its config from the widgets the link set; the outcome is read from what ran."""

from __future__ import annotations

import math

import pytest

from studio.lessons import PRESETS, SETTINGS, lessons
from studio.links import preset_values, slug
from tests.conftest import wait_for_run

PAGES = {x.key: x.page for x in lessons()}
WITH_PRESETS = [x.key for x in lessons() if x.presets]  # lesson 6 has none: its challenge is the whole setting


def open_preset(new_app, lesson: str, name: str, **params):
    at = new_app()
    at.query_params["preset"] = slug(name)
    for key, value in params.items():
        at.query_params[key] = value
    at.switch_page(PAGES[lesson])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    values = preset_values(SETTINGS[lesson], PRESETS[lesson][name])
    for key, value in values.items():
        if key.endswith("_speed"):
            continue
        assert at.session_state[key] == value, key
    assert at.session_state[f"{lesson}_preset"] == name  # the picker shows the preset the link chose
    return at


def train(at, lesson: str):
    at.select_slider(key=f"{lesson}_speed").set_value("max").run()
    at.button(key=f"{lesson}_train").click().run()
    return wait_for_run(at, lesson, timeout=120)


def texts(at) -> str:
    return " ".join(str(e.value) for kind in ("success", "error", "warning", "markdown", "info")
                    for e in getattr(at, kind))


@pytest.mark.parametrize("name, outcome", [
    ("The tutorial's MyReLU", "passed"), ("A point at the kink", "differs"), ("A broken backward", "failed"),
    ("Sigmoid done right", "passed")])
def test_lesson1_presets(new_app, name, outcome):
    at = open_preset(new_app, "custom_function", name)
    if outcome == "passed":
        assert any("gradcheck passed" in s.value for s in at.success)
    elif outcome == "failed":
        assert any("gradcheck failed" in e.value for e in at.error)
    else:  # MyReLU lets the gradient through at exactly 0; torch.relu does not, and both are subgradients
        said = texts(at)
        assert "Backward differs only at a kink" in said and "valid subgradient" in said
        assert "**Backward differs**" not in said, "the tutorial's correct MyReLU is not called wrong"


@pytest.mark.parametrize("name, passes", [
    ("gradcheck catches a broken backward", False), ("gradcheck passes MyReLU", True),
    ("A point at the kink", False), ("float32 fools gradcheck", False)])
def test_lesson4_presets(new_app, name, passes):
    at = open_preset(new_app, "xray", name)
    assert [t.label for t in at.tabs if t.children] == ["Gradcheck lab"]  # the link opens the tab it is about
    passed = any(s.value.startswith("gradcheck passed") for s in at.success)
    assert passed == passes, texts(at)


def test_a_lesson4_preset_picked_on_another_tab_opens_the_gradcheck_lab(new_app):
    at = new_app()
    at.switch_page("pages/xray.py").run()
    assert [t.label for t in at.tabs if t.children] == ["Graph"]  # only the open tab is drawn
    at.selectbox(key="xray_preset").select("gradcheck passes MyReLU").run()
    assert [t.label for t in at.tabs if t.children] == ["Gradcheck lab"] and not at.exception
    assert any(s.value.startswith("gradcheck passed") for s in at.success), texts(at)


def test_lesson2_presets(new_app):
    finals = {}
    for name in PRESETS["two_layer"]:
        run = train(open_preset(new_app, "two_layer", name), "two_layer")
        snaps = run.view()[0]
        finals[name] = (run.status, snaps[0].loss, snaps[-1].loss)
    status, first, last = finals["The tutorial as written"]
    assert status == "done" and last < first / 1e6  # the loss falls by more than a million times
    assert finals["Learning rate too big"][0] == "diverged"
    status, first, last = finals["Learning rate too small"]
    assert status == "done" and last > first / 100  # hardly moves in 500 steps
    assert math.isclose(finals["torch.relu instead of MyReLU"][2], last, rel_tol=0.5) or \
        finals["torch.relu instead of MyReLU"][2] < first / 1e6  # trains just as well


def test_lesson3_presets(new_app):
    ends = {}
    for name in PRESETS["logistic"]:
        run = train(open_preset(new_app, "logistic", name), "logistic")
        assert run.status == "done", name
        ends[name] = run.view()[0][-1]
    tutorial = ends["The tutorial as written"]
    size = lambda s: abs(s.w0) + abs(s.w1) + abs(s.b)  # noqa: E731
    assert tutorial.stopped and tutorial.accuracy > 0.99
    assert size(ends["Forget zero_grad"]) > 5 * size(tutorial)  # gradients pile up: the weights grow
    too_big = ends["Learning rate too big"]  # never a quicker success: it gets stuck and says why
    assert too_big.stuck and not too_big.stopped and size(too_big) > 20 * size(tutorial)
    assert "learning rate 1000 is too large" in too_big.message
    assert not ends["No momentum: slow"].stopped or ends["No momentum: slow"].iteration > tutorial.iteration
    overlap = ends["Overlapping clusters"]
    assert not overlap.stopped and overlap.accuracy < 0.8  # no line separates them


def test_lesson5_presets(new_app):
    from autodiff_core.playground import Playground

    steps = {"Spirals from sin features": 5000, "Vanishing gradients: sigmoid, 6 layers": 200}
    final = {}
    for name in PRESETS["playground"]:
        at = open_preset(new_app, "playground", name)
        pg = Playground(at.session_state["pg_session"].model.config)  # the config the page built from the link
        n = steps.get(name, 1000)
        *_, last = pg.run(n, record_every=n)
        final[name] = last
    assert final["XOR, as set up"].test_accuracy > 0.9
    dead = final["Dead ReLUs"]
    assert max(dead.dead) >= 0.5 and dead.test_accuracy < 0.7  # most units of a layer died: no better than chance
    assert final["Spirals need depth"].test_accuracy > 0.9
    assert final["Spirals from sin features"].test_accuracy > 0.9  # two small layers suffice, given sin x
    first, *_, last_layer = final["Vanishing gradients: sigmoid, 6 layers"].grad_norms
    assert first < last_layer / 1000  # the first layer's gradient is a thousand times smaller than the last's



@pytest.mark.parametrize("lesson", WITH_PRESETS)
def test_every_setting_is_in_the_address_bar_and_a_link_sets_every_widget(new_app, lesson):
    """Both ways: the page writes each setting to the URL; a URL with the last preset's values sets them all."""
    settings = SETTINGS[lesson]
    at = new_app()
    at.switch_page(PAGES[lesson])
    at.run()
    for s in settings:
        assert at.query_params[s.key] == [s.format(s.default)] or at.query_params[s.key] == s.format(s.default)
    name = list(PRESETS[lesson])[-1]
    wanted = preset_values(settings, PRESETS[lesson][name])
    at = new_app()
    for s in settings:
        at.query_params[s.key] = s.format(wanted[s.key])
    at.switch_page(PAGES[lesson])
    at.run()
    assert not at.exception and not at.warning
    assert {s.key: at.session_state[s.key] for s in settings} == wanted
    assert at.session_state[f"{lesson}_preset"] == name


@pytest.mark.parametrize("lesson", list(PAGES))
def test_hostile_values_for_a_lessons_settings_fall_back_with_a_warning(new_app, lesson):
    settings = SETTINGS[lesson]
    at = new_app()
    evil = "[click](http://evil.example/x) " + "²" * 60
    for s in settings:
        at.query_params[s.key] = evil
    at.switch_page(PAGES[lesson])
    at.run()
    assert not at.exception
    warned = " ".join(w.value for w in at.warning)
    for s in settings:
        assert f"{s.key} `" in warned and at.session_state[s.key] == s.default
    assert "](http" not in warned.replace("`[click](http://evil.example/x) ", "")  # only inside code spans


@pytest.mark.parametrize("lesson", list(PAGES))
@pytest.mark.parametrize("end", ["lo", "hi"])
def test_a_link_at_the_ends_of_every_range_fits_the_widgets(new_app, lesson, end):
    """The settings' bounds are the widgets' bounds: a link at either end sets the widget, and no widget
    refuses a value the link's parser accepted."""
    at = new_app()
    bounded = [s for s in SETTINGS[lesson] if getattr(s, end) is not None]
    value = lambda s: (int(getattr(s, end)),) * s.items if s.kind is tuple else s.kind(getattr(s, end))  # noqa: E731
    for s in bounded:
        at.query_params[s.key] = s.format(value(s))
    at.switch_page(PAGES[lesson])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    for s in bounded:
        assert at.session_state[s.key] == value(s), s.key


def test_lesson3_records_every_iteration_and_its_replay_has_a_frame_for_each(new_app):
    """Draw every 20 decides what the live chart paints; the replay has every iteration (up to 400 frames),
    each with its own caption, so the numbers follow the slider."""
    import json

    at = open_preset(new_app, "logistic", "The tutorial as written")
    run = train(at, "logistic")
    snaps = run.view()[0]
    assert [s.iteration for s in snaps] == list(range(snaps[-1].iteration + 1))
    [chart] = [e for e in at.get("plotly_chart") if "logistic_replay" in e.proto.id]
    frames = json.loads(chart.proto.spec)["frames"]
    assert len(frames) == len(snaps) <= 400
    titles = [f["layout"]["title"]["text"] for f in frames]
    assert len(set(titles)) == len(titles) and titles[7].startswith("Iteration: 7<br>")


def test_moving_the_speed_keeps_the_preset_name(new_app):
    """Speed paces how a run is shown, not what it computes: the picker still names the preset."""
    at = open_preset(new_app, "logistic", "Forget zero_grad")
    at.select_slider(key="logistic_speed").set_value("max").run()
    assert at.session_state["logistic_preset"] == "Forget zero_grad"
    at.number_input(key="lr_lr").set_value(0.02).run()
    assert at.session_state["logistic_preset"] is None  # a setting that changes the run does leave it


def test_lesson5_class_presets_train_mysoftmax_on_many_classes(new_app):
    """Each many-class preset opens its classes, a MySoftmax output a class, and learns them."""
    from autodiff_core.playground import Playground

    for name, classes, target in (("Five blobs: MySoftmax", 5, 0.9), ("Six pie slices", 6, 0.8),
                                  ("Three spiral arms", 3, 0.9)):
        at = open_preset(new_app, "playground", name)
        config = at.session_state["pg_session"].model.config
        assert config.classes == classes and config.outputs == classes, name
        *_, last = Playground(config).run(1000, record_every=1000)
        assert last.test_accuracy > target, (name, last.test_accuracy)
