"""Exports and loaded runs are the screen: an export holds the run the page shows, up to the state it shows; its HTML
has a heading with the lesson and its settings (escaped: they are data); a reloaded file draws what the page drew, and
its caption says what ran in the widgets' words, and where the widgets above show other values now."""

from __future__ import annotations

import json
import time

import pytest
from streamlit.delta_generator import DeltaGenerator

from autodiff_core.figures.classroom import standalone_html
from studio import lessons  # noqa: F401  (registers the lessons' run files)
from tests.conftest import wait_for_run


@pytest.fixture
def downloads(monkeypatch):
    """What each download button of the last script run would deliver: label -> (data, file name)."""
    made = {}
    original = DeltaGenerator.download_button

    def button(self, label, data, file_name=None, *args, **kwargs):
        made[label] = (data() if callable(data) else data, file_name)
        return original(self, label, data, file_name, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", button)
    return made


def test_lesson_5_exports_what_its_chart_shows_steps_after_a_pause_included(app, downloads):
    at = app.switch_page("pages/playground.py").run()
    for _ in range(3):
        at.button(key="pg_step").click().run()
    at.select_slider(key="pg_speed").set_value("200").run()
    at.button(key="pg_play").click().run()
    time.sleep(0.5)
    at.button(key="pg_pause").click().run()
    wait_for_run(at, "playground", timeout=10)
    for _ in range(2):  # Step goes on from where Pause left the model: the chart shows these too
        at.button(key="pg_step").click().run()
    shown = [s.step for s in at.session_state["pg_session"].history]
    record = json.loads(downloads["JSON"][0])
    assert [s["step"] for s in record["snapshots"]] == shown  # was the run alone, without the two Steps
    assert shown[-1] == at.session_state["pg_session"].model.steps_done
    rows = downloads["CSV"][0].splitlines()
    assert len(rows) == 1 + len(shown) and rows[-1].split(",")[0] == str(shown[-1])
    html = downloads["HTML"][0]
    assert "<h1" in html and "5 · Classification playground</h1>" in html
    assert "Learning rate 0.03" in html and "Optimizer Adam" in html


def test_a_loaded_run_says_what_ran_in_the_widgets_words_and_draws_as_the_page(app, downloads):
    at = app.switch_page("pages/logistic.py").run()
    at.number_input(key="lr_iters").set_value(60).run()
    at.select_slider(key="logistic_speed").set_value("max").run()
    at.button(key="logistic_train").click().run()
    wait_for_run(at, "logistic")
    data = downloads["JSON"][0].encode()
    page = chart(at, "logistic_replay")
    at.file_uploader(key="logistic_load").set_value(("run.json", data, "application/json")).run()
    [caption] = [c.value for c in at.caption if c.value.startswith("Loaded run")]
    assert "Its settings: Points per class 100, Cluster mean (±) 1\\.7, Bias (shift of both) 1, " in caption
    assert "Learning rate 0\\.01, Momentum 0\\.9, Max iterations 60," in caption and "on cpu in float32." in caption
    assert "Forget `optimizer.zero_grad()` (the tutorial's bug) off" in caption  # the label's code, as its widget
    assert "Speed" not in caption  # the pace changes no number of the run
    assert "not the run's" not in caption  # the widgets above are the run's
    loaded = chart(at, "logistic_loaded_replay")
    assert loaded["data"] == page["data"] and loaded["frames"] == page["frames"]  # as the page drew it
    assert loaded["layout"]["title"] == page["layout"]["title"]

    at.number_input(key="lr_lr").set_value(0.05).run()
    [caption] = [c.value for c in at.caption if c.value.startswith("Loaded run")]
    assert "The settings above are not the run's: Learning rate 0\\.05 (the run's 0\\.01)." in caption


def test_an_html_export_heading_is_text_not_markup():
    import plotly.graph_objects as go

    page = standalone_html(go.Figure(), "t", heading=("3 · Logistic <regression>", "Learning rate <b>0.01</b> & more"))
    assert "<h1" in page and "3 · Logistic &lt;regression&gt;</h1>" in page
    assert "Learning rate &lt;b&gt;0.01&lt;/b&gt; &amp; more" in page and "<b>0.01" not in page


def test_a_file_s_settings_reach_the_caption_only_as_values_of_the_lesson_s_settings(app):
    from autodiff_core import LogisticConfig, train_logistic
    from autodiff_core.runs_io import run_record, to_json

    config = LogisticConfig(max_iterations=30)
    record = run_record("logistic", config, list(train_logistic(config)),
                        settings={"lr_lr": "[link](http://x)", "lr_momentum": "0.5", "<b>": "1", "lr_n": "**7**"})
    at = app.switch_page("pages/logistic.py").run()
    at.file_uploader(key="logistic_load").set_value(("run.json", to_json(record).encode(), "application/json")).run()
    [caption] = [c.value for c in at.caption if c.value.startswith("Loaded run")]
    assert "Its settings: Momentum 0\\.5, on cpu in float32." in caption  # what is not a setting's value is dropped
    assert "link" not in caption and "<b>" not in caption and "**" not in caption
    assert "Momentum 0\\.9 (the run's 0\\.5)" in caption and not at.exception


def chart(at, key: str) -> dict:
    [found] = [c for c in at.get("plotly_chart") if c.proto.id.endswith(key)]
    return json.loads(found.proto.spec)


@pytest.mark.parametrize("settings", [["lr_lr"], {"lr_lr": 0.01}, {"lr_lr": "x" * 201},
                                      {f"k{i}": "1" for i in range(65)}])
def test_a_run_file_s_settings_that_are_not_short_texts_are_refused_in_one_sentence(settings):
    from autodiff_core import LogisticConfig, train_logistic
    from autodiff_core.runs_io import from_json, run_record, to_json

    config = LogisticConfig(max_iterations=20)
    record = {**run_record("logistic", config, list(train_logistic(config))), "settings": settings}
    with pytest.raises(ValueError, match=r'^This run file\'s "settings" are .*; they must be an object of at most 64 '):
        from_json(to_json(record))
