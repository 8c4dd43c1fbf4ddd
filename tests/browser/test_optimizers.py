"""Lesson 7 in headless Chromium at a projector's 1280x720 and a phone's 390x844: moving the learning rate redraws
every path, Train draws the paths live (the live chart's path curves), the run ends on its replay, and nothing on
the chart, beside it or under it overlaps."""

from __future__ import annotations

import re

import pytest

from autodiff_core.figures.landscape import PATHS
from autodiff_core.optimizers import NAMES
from testkit.browser import ARTIFACTS, set_number, set_speed, wait_idle
from tests.browser.test_logistic import GEOMETRY_JS, assert_nothing_overlaps, overlaps
from tests.browser.test_logistic import open_lesson as open_tab

pytestmark = pytest.mark.browser

SIZES = [(1280, 720), (390, 844)]
REPLAY = '[data-testid="stPlotlyChart"] .js-plotly-plot'
LIVE = ".studio-live .js-plotly-plot"
PATHS_JS = f"""(root) => {{
  const gd = document.querySelector(root);
  return gd && gd.data ? gd.data.slice({PATHS}, {PATHS + len(NAMES)}).map(t => [Array.from(t.x || []),
                                                                               Array.from(t.y || [])]) : null;
}}"""
STORY_JS = """() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top,
                                                                       bottom: r.bottom}; };
  const story = document.querySelector('.st-key-optimizers_story');
  const chart = document.querySelector('[data-testid="stPlotlyChart"]');
  return {story: box(story), chart: box(chart)};
}"""


def open_lesson(browser, server, size):
    page = open_tab(browser, server, size, "optimizers")
    page.get_by_text("▶ Play").first.wait_for(timeout=30_000)  # the whole run, drawn before any Train
    wait_idle(page)
    return page


def replay_paths(page) -> list:
    page.wait_for_function(f"() => document.querySelector('{REPLAY}')?.data")
    return page.evaluate(PATHS_JS, REPLAY)


def screenshot(page, name: str, selector: str) -> None:
    page.evaluate(f"() => document.querySelector('{selector}').scrollIntoView({{block: 'start'}})")
    page.mouse.wheel(0, -80)  # out from under Streamlit's header
    page.wait_for_timeout(300)
    page.screenshot(path=str(ARTIFACTS / name))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_moving_the_rate_redraws_every_path_and_train_draws_them_live(server, browser, size):
    page = open_lesson(browser, server, size)
    tag = f"{size[0]}x{size[1]}"
    before = replay_paths(page)
    assert [len(x) for x, _ in before] == [101] * len(NAMES)
    set_number(page, "Learning rate", 0.3)
    page.wait_for_function(f"""(before) => {{
      const now = ({PATHS_JS})('{REPLAY}');
      return now && now.every((p, i) => JSON.stringify(p) !== JSON.stringify(before[i]));
    }}""", arg=before, timeout=30_000)  # all five redrawn, by one rerun
    page.get_by_text("Your learning rate 0.3 is below it").wait_for()
    screenshot(page, f"lesson7-replay-{tag}.png", REPLAY)
    boxes = page.evaluate(GEOMETRY_JS, REPLAY)
    assert boxes["title"]["bottom"] - boxes["title"]["top"] > 60  # the four-line caption is drawn
    assert_nothing_overlaps(boxes)
    story = page.evaluate(STORY_JS)
    assert not overlaps(story["story"], story["chart"])  # beside it on a laptop, under it on a phone
    assert (story["story"]["left"] >= story["chart"]["right"]) == (size[0] > 640)

    set_speed(page, "20")
    page.get_by_role("button", name="Train").click()
    page.wait_for_function("() => Number(document.querySelector('.studio-live')?.dataset.painted) >= 30",
                           timeout=60_000)
    live = page.evaluate(PATHS_JS, LIVE)
    painted = int(page.locator(".studio-live").get_attribute("data-painted"))
    assert all(30 < len(x) <= painted + 1 for x, _ in live)  # each path drawn up to the state painted, no further
    screenshot(page, f"lesson7-live-{tag}.png", ".studio-live")
    assert_nothing_overlaps(page.evaluate(GEOMETRY_JS, LIVE))
    page.get_by_role("button", name="Stop").click()
    wait_idle(page)
    page.get_by_test_id("stCaptionContainer").get_by_text(re.compile(r"^Stopped at step")).wait_for(timeout=30_000)
    stopped = replay_paths(page)
    assert all(len(x) == len(stopped[0][0]) < 101 for x, _ in stopped)  # the stopped run stays on screen
    assert page.errors == []
    page.context.close()


def test_the_presenter_view_fits_the_replay_on_a_projector_and_what_happened_follows(server, browser):
    from tests.browser.test_presenter_replay import PRESENTER, REPLAY_BOXES

    context = browser.new_context(viewport=PRESENTER)
    page = context.new_page()
    page.goto(f"{server}/optimizers?present=1")
    wait_idle(page)
    page.locator(".js-plotly-plot .slider-container").wait_for(timeout=60_000)  # the whole run, no Train needed
    wait_idle(page)
    page.wait_for_timeout(500)
    boxes = page.evaluate(REPLAY_BOXES)
    page.screenshot(path=str(ARTIFACTS / "presenter-lesson7-1280x720.png"))
    assert max(boxes["plot"], boxes["play"], boxes["slider"]) <= PRESENTER["height"], boxes
    assert boxes["title"].startswith("Step 100 of 0–100") and "·" in boxes["title"]  # on one line, not four
    story = page.evaluate(STORY_JS)
    assert story["story"]["top"] >= story["chart"]["bottom"] - 1  # what happened, under the chart
    context.close()
