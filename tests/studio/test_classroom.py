"""Classroom mode without a browser: URL parsing, presets as data, run files, ghost labels, the palette."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

from autodiff_core import LogisticConfig, TwoLayerConfig, train_logistic, train_two_layer
from autodiff_core.data import PLAYGROUND_DATASETS, is_regression
from autodiff_core.figures.classroom import (
    LOGISTIC,
    PLAYGROUND,
    difference_label,
    ghost_record,
    ghost_traces,
    replay_figure,
    standalone_html,
)
from autodiff_core.figures.theme import CLASS_COLORS, OKABE_ITO, present_layout, recolor
from autodiff_core.landscape import LandscapeConfig, train_landscape
from autodiff_core.playground import Playground, PlaygroundConfig
from autodiff_core.runs_io import from_json, run_record, to_csv, to_json
from studio import lessons
from studio.lessons import PRESETS, SETTINGS
from studio.links import ECHO, Setting, preset_values, read_params, slug

LR, N = (lessons.lesson("logistic").setting(key) for key in ("lr_lr", "lr_n"))  # as lesson 3 declares them


@pytest.mark.parametrize("text", ["²", "٣", "1e400", "nan", "inf", "0x10", "1_000", " 5", "5 ", "", "+-1", "9" * 70])
def test_a_setting_refuses_what_is_not_an_ascii_number(text):
    assert LR.parse(text)[0] is None
    assert N.parse(text)[0] is None


def test_numbers_parse_and_round_trip():
    assert LR.parse("0.5") == (0.5, "")
    assert LR.parse("1e-3") == (0.001, "")
    assert N.parse("30") == (30, "")
    assert N.parse("0")[0] is None and "outside" in N.parse("0")[1]
    for lesson, settings in SETTINGS.items():
        for s in settings:
            for preset in PRESETS[lesson].values():
                value = preset_values(settings, preset)[s.key]
                assert s.parse(s.format(value)) == (value, ""), (lesson, s.key, value)


def test_a_bad_parameter_falls_back_with_a_warning_that_names_it_and_shows_text_as_code():
    evil = "[click](http://evil.example)" + "x" * 100
    found, notes = read_params([LR, N], {"lr_lr": [evil], "lr_n": ["30"]})
    assert found == {"lr_n": 30}
    [note] = notes
    assert note.startswith("Learning rate: lr_lr `") and "](" in note  # the text is inside a code span, not a link
    shown = note.split("`")[1]
    assert len(shown) <= ECHO + 1 and shown.endswith("…")


def test_repeated_keys_the_last_counts_and_a_note_says_so():
    found, notes = read_params([N], {"lr_n": ["10", "30"]})
    assert found == {"lr_n": 30} and "2 times" in notes[0]


def test_a_huge_value_is_refused_unparsed():
    found, notes = read_params([N, Setting("cf_input", str, "")], {"lr_n": ["1" * 100_000],
                                                                  "cf_input": ["2," * 50_000]})
    assert found == {} and len(notes) == 2 and all("too long" in n for n in notes)


def test_a_preset_by_slug_then_explicit_settings_override_it():
    settings, presets = SETTINGS["logistic"], PRESETS["logistic"]
    found, notes = read_params(settings, {"preset": [slug("Forget zero_grad")], "lr_lr": ["0.5"]}, presets)
    assert not notes and found["lr_forget"] is True and found["lr_lr"] == 0.5 and found["lr_n"] == 100
    _, notes = read_params(settings, {"preset": ["nope"]}, presets)
    assert "preset" in notes[0]


def test_every_lesson_has_three_to_five_presets_over_its_own_settings():
    for lesson, presets in PRESETS.items():
        keys = {s.key for s in SETTINGS[lesson]}
        if lesson == "write_function":  # lesson 6's one setting is its challenge: the challenges are its menu
            assert presets == {}
            continue
        # The playground also holds one preset for each thing lesson 5 shows (TF's recipes, dead ReLUs,
        # vanishing gradients, a linear network) plus three of many classes (blobs, pie, spiral arms), and
        # lesson 8 one for each of its six parts: a menu a selectbox still shows whole, at most ten and seven.
        longest = {"playground": 10, "function_api": 7}.get(lesson, 5)
        assert 3 <= len(presets) <= longest, lesson
        for name, preset in presets.items():
            assert set(preset) <= keys, (lesson, name)
            for key, value in preset.items():
                setting = next(s for s in SETTINGS[lesson] if s.key == key)
                assert setting.parse(setting.format(value)) == (value, "")


RUN_FILE_LESSONS = [x.key for x in lessons.lessons() if x.config is not None]  # the lessons that save runs


def _same(a, b) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):  # lesson 7's five paths, NaN where one blew up
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("lesson", RUN_FILE_LESSONS)
def test_a_run_file_loads_back_into_the_same_config_and_snapshots(lesson):
    if lesson == "logistic":
        config = LogisticConfig(learning_rate=0.5, n_per_class=30, momentum=0.0, zero_grad=False)
        snaps = list(train_logistic(config))
    elif lesson == "two_layer":
        config = TwoLayerConfig(learning_rate=1e-4, steps=20)  # diverges: NaN/inf in the states
        snaps = list(train_two_layer(config))
    elif lesson == "optimizers":
        config = LandscapeConfig(learning_rate=50.0, steps=20)  # three of the five paths blow up: NaN in the states
        snaps = list(train_landscape(config))
    else:
        config = PlaygroundConfig(hidden=(4,), n_per_class=20)
        snaps = list(Playground(config).run(30, record_every=10))
    text = to_json(run_record(lesson, config, snaps))
    record = json.loads(text)  # strict JSON: no NaN tokens
    assert set(record["versions"]) >= {"torch", "numpy", "app"}
    loaded, config2, snaps2, _ = from_json(text)
    assert loaded == lesson and config2 == config and len(snaps2) == len(snaps)
    for a, b in zip(snaps, snaps2, strict=True):
        for field in a.__dataclass_fields__:
            x, y = getattr(a, field), getattr(b, field)
            assert _same(x, y) or (isinstance(x, float) and not math.isfinite(x) and math.isnan(y)), field
    rows = list(csv.reader(io.StringIO(to_csv(record))))
    assert len(rows) == len(snaps) + 1 and "surface" not in rows[0]


@pytest.mark.parametrize("text", [b"not json", b"{}", b'{"format": "autograd-studio-run/1", "lesson": "x"}',
                                  b'{"format": "autograd-studio-run/1", "lesson": "logistic", "config": {"seed": -1},'
                                  b' "snapshots": []}'])
def test_a_bad_run_file_gives_a_message(text):
    with pytest.raises(ValueError):
        from_json(text)


def test_the_standalone_replay_carries_plotly_and_its_frames():
    config = LogisticConfig(record_every=1, max_iterations=150)
    html = standalone_html(replay_figure(LOGISTIC, config, list(train_logistic(config))), "run")
    assert "cdn.plot.ly" not in html.split("<body")[1][:500] and "Plotly.newPlot" in html
    assert html.count('"name":"') > 100 and ("▶ Play" in html or "\\u25b6 Play" in html)  # JSON may escape it
    figure = html.split("Plotly.newPlot")[-1]  # plotly.js itself lists D3's colours
    assert CLASS_COLORS[0] in figure and "#d62728" not in figure  # the palette the app draws with


def test_ghost_labels_name_the_settings_that_differ():
    base = LogisticConfig()
    assert difference_label(LogisticConfig(learning_rate=0.5), base) == "lr 0.5"
    assert difference_label(LogisticConfig(zero_grad=False), base) == "no zero_grad"
    assert difference_label(base, base) == "same settings"
    from autodiff_core.playground import PlaygroundConfig  # a network's shape and its features read as such

    shaped = PlaygroundConfig(hidden=(4, 2), features=("X1", "X2", "sin X1"))
    assert difference_label(shaped, PlaygroundConfig(), limit=5) == "features X1+X2+sin X1, layers 4-2"
    ghost = ghost_record(LOGISTIC, "lr 0.5", list(train_logistic(LogisticConfig(learning_rate=0.5))))
    traces = ghost_traces(LOGISTIC, [ghost], [-3.0, 5.0])
    assert [t["yaxis"] for t in traces[:1]] == ["y2"] and len(traces) == 2  # loss curve and final boundary
    assert traces[0]["name"] == "lr 0.5" and traces[0]["showlegend"]


def test_the_palette_is_okabe_ito_and_the_presenter_scale_reaches_every_axis():
    assert CLASS_COLORS == (OKABE_ITO["vermillion"], OKABE_ITO["blue"])
    assert recolor({"marker": {"color": "#d62728"}, "c": [[214, 39, 40]]}) == {
        "marker": {"color": OKABE_ITO["vermillion"]}, "c": [[213, 94, 0]]}
    layout = present_layout({"xaxis": {"title": {"text": "step"}}, "yaxis3": {}, "annotations": [{"text": "a"}]})
    assert layout["font"]["size"] >= 18 and layout["xaxis"]["tickfont"]["size"] >= 18
    assert layout["xaxis"]["title"]["font"]["size"] >= 22 and layout["yaxis3"]["title"]["font"]["size"] >= 22
    assert layout["annotations"][0]["font"]["size"] >= 22


def test_the_presenter_view_puts_stacked_subplots_side_by_side():
    stacked = {"height": 1000, "margin": {"t": 210, "b": 200}, "xaxis": {}, "yaxis": {"domain": [0.42, 1]},
               "xaxis2": {}, "yaxis2": {"domain": [0, 0.27]}, "updatemenus": [{"y": -0.16}]}
    layout = present_layout(stacked)
    assert layout["xaxis"]["domain"][1] < layout["xaxis2"]["domain"][0] and layout["yaxis"]["domain"] == [0, 1]
    assert layout["height"] <= 720 and layout["updatemenus"][0]["y"] < -0.16
    side = {"xaxis": {"domain": [0, 0.5]}, "yaxis": {}, "xaxis2": {"domain": [0.62, 1]}, "yaxis2": {}}
    assert present_layout(side)["xaxis"]["domain"] == [0, 0.5]


@pytest.mark.parametrize("lesson", RUN_FILE_LESSONS)
def test_a_loaded_run_file_replays_without_training(lesson, monkeypatch):
    if lesson == "logistic":
        config = LogisticConfig(record_every=1, max_iterations=120)
        snaps = list(train_logistic(config))
    elif lesson == "two_layer":
        config = TwoLayerConfig(steps=50)
        snaps = list(train_two_layer(config))
    elif lesson == "optimizers":
        config = LandscapeConfig(steps=50)
        snaps = list(train_landscape(config))
    else:
        config = PlaygroundConfig(hidden=(4,), n_per_class=20)
        snaps = list(Playground(config).run(40, record_every=1))
    _, config2, snaps2, _ = from_json(to_json(run_record(lesson, config, snaps)))

    def no_training(*args, **kwargs):
        raise AssertionError("a replay must not train")

    import autodiff_core.playground as pg

    monkeypatch.setattr(pg.Playground, "step", no_training)
    fig = replay_figure(lessons.lesson(lesson).run_figures, config2, snaps2)
    titles = [f.layout.title.text for f in fig.frames]
    assert len(fig.frames) > 10 and len(set(titles)) == len(titles)  # the numbers follow the slider


def test_an_open_ended_run_records_every_step_first_then_sparser():
    from autodiff_core.recording import every_step_then_sparser

    pg = Playground(PlaygroundConfig(hidden=(4,), n_per_class=20))
    snaps = list(every_step_then_sparser(pg.run, total=1000, cap=100))
    steps = [s.step for s in snaps]
    assert steps[:101] == list(range(101))  # every step of the first 100
    assert steps[101:103] == [102, 104] and steps[-1] == 1000 and len(set(steps)) == len(steps)
    assert len(snaps) < 400  # not one per step

    reference = Playground(PlaygroundConfig(hidden=(4,), n_per_class=20))
    *_, last = reference.run(1000, record_every=1000)
    assert last.train_loss == snaps[-1].train_loss  # recording does not change the training


def test_a_loaded_regression_run_replays_with_a_regressions_words():
    """A playground run file of a regression replays with squared error and variance explained, as the page
    draws it: never 'accuracy' beside a regression."""
    from autodiff_core.playground import Playground, PlaygroundConfig

    config = PlaygroundConfig(dataset=next(d for d in PLAYGROUND_DATASETS if is_regression(d)))
    snaps = list(Playground(config).run(20, 5))
    text = json.dumps(replay_figure(PLAYGROUND, config, snaps).to_plotly_json(), ensure_ascii=False)
    assert "variance explained" in text and "accuracy" not in text
