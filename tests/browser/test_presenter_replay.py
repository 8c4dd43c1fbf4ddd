"""Lesson 3's finished replay in the presenter view fits a 1280x720 projector: caption, plots, Play and
slider all above the fold (they were 140-270 px below it), and Play still plays."""

from __future__ import annotations

import pytest

from autodiff_core import LogisticConfig, train_logistic
from autodiff_core.figures import logistic_replay_figure
from autodiff_core.figures.theme import PRESENT_FONT
from autodiff_core.logistic import logistic_data
from studio.presenter import REPLAY_HEIGHT, present_spec
from testkit.browser import ARTIFACTS, open_page, wait_idle

PRESENTER = {"width": 1280, "height": 720}


def replay_spec() -> dict:
    config = LogisticConfig(max_iterations=60)
    x, y = (t.numpy() for t in logistic_data(config))
    return logistic_replay_figure(list(train_logistic(config)), x, y, config.max_iterations).to_plotly_json()


def test_the_presenter_replay_is_short_with_its_caption_on_one_line_and_play_beside_the_slider():
    spec = replay_spec()
    assert spec["layout"]["height"] > 720 and "<br>" in spec["layout"]["title"]["text"]  # the phone's layout
    layout = present_spec(spec, fit=True)["layout"]
    assert layout["height"] == REPLAY_HEIGHT < 720 - 250  # room for the title and controls above it
    assert all("<br>" not in f["layout"]["title"]["text"] for f in spec["frames"])
    assert "<br>" not in layout["title"]["text"] and layout["title"]["text"].startswith("Iteration: ")
    [play], [slider] = layout["updatemenus"], layout["sliders"]
    assert play["y"] == slider["y"] < 0 and slider["x"] >= 0.2 and not slider["currentvalue"]["visible"]
    assert slider["font"]["size"] == PRESENT_FONT  # still the presenter's scale


def test_only_a_replay_asked_to_fit_is_fitted():
    import plotly.graph_objects as go

    spec = go.Figure(go.Scatter(x=[0, 1], y=[1, 0]), layout={"height": 500}).to_plotly_json()
    assert present_spec(spec, fit=True)["layout"]["height"] == 500  # no replay
    assert present_spec(replay_spec())["layout"]["height"] == 720  # a replay further down a page


REPLAY_BOXES = """() => {
  const plot = [...document.querySelectorAll('.js-plotly-plot')].find(p => p.querySelector('.slider-container'));
  const bottom = sel => plot.querySelector(sel).getBoundingClientRect().bottom;
  return {plot: plot.getBoundingClientRect().bottom, play: bottom('.updatemenu-button'),
          slider: bottom('.slider-container'), title: plot.querySelector('.gtitle').textContent};
}"""


@pytest.mark.browser
def test_lesson3_replay_fits_the_presenter_view_at_720p(server, browser):
    context = browser.new_context(viewport=PRESENTER)
    page = open_page(context, f"{server}/logistic?present=1")
    page.get_by_role("slider", name="Speed (iterations per second)").press("End")
    wait_idle(page)
    page.get_by_role("button", name="Train").click()
    page.locator(".js-plotly-plot .slider-container").wait_for(timeout=60_000)
    wait_idle(page)
    page.wait_for_timeout(500)
    boxes = page.evaluate(REPLAY_BOXES)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "presenter-lesson3-replay-1280x720.png"))
    assert max(boxes["plot"], boxes["play"], boxes["slider"]) <= PRESENTER["height"], boxes
    finished = boxes["title"]
    page.locator(".updatemenu-button").first.click()  # Play, from the start
    page.wait_for_function("(t) => document.querySelector('.js-plotly-plot .gtitle').textContent !== t", arg=finished,
                           timeout=10_000)
    context.close()
