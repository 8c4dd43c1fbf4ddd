"""Lesson 3 in headless Chromium: the replay's caption follows the slider and Play, Pause and Play raise
no page error, nothing overlaps at phone or projector width, and the learning rate steps down."""

from __future__ import annotations

import re

import pytest

from testkit.browser import ARTIFACTS, set_speed, wait_idle

pytestmark = pytest.mark.browser

SIZES = [(1280, 720), (390, 844)]
REPLAY = '[data-testid="stPlotlyChart"] .js-plotly-plot'
LIVE = ".studio-live .js-plotly-plot"

# Screen boxes of a logistic chart's parts: plot areas from Plotly's own axes, the rest from the SVG.
GEOMETRY_JS = """(root) => {
  const gd = document.querySelector(root);
  const svg = gd.querySelector('.main-svg').getBoundingClientRect();
  const fl = gd._fullLayout;
  const area = (xa, ya) => ({left: svg.left + xa._offset, right: svg.left + xa._offset + xa._length,
                             top: svg.top + ya._offset, bottom: svg.top + ya._offset + ya._length});
  const box = (sel) => { const el = gd.querySelector(sel); if (!el) return null;
    const r = el.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  return {chart: {left: svg.left, right: svg.right, top: svg.top, bottom: svg.bottom},
    scatter: area(fl.xaxis, fl.yaxis), loss: area(fl.xaxis2, fl.yaxis2), title: box('.g-gtitle'),
    legend: box('.legend'), x_title: box('.g-xtitle'), y_title: box('.g-ytitle'), iteration_title: box('.g-x2title'),
    loss_title: box('.g-y2title'), accuracy_title: box('.g-y3title'), buttons: box('.updatemenu-container'),
    slider: box('.slider-container'), modebar: box('.modebar')};
}"""


def open_lesson(browser, server, size, lesson: str = "logistic"):
    """A fresh tab at ``size`` on lesson 3 (or ``lesson``), with every uncaught page error collected in
    ``page.errors``."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e) or repr(e)))
    page.goto(f"{server}/{lesson}")
    wait_idle(page)
    page.get_by_role("button", name="Train").wait_for(timeout=30_000)  # after require_app's rerun
    wait_idle(page)
    return page


def train_to_replay(page) -> None:
    set_speed(page, "max")
    page.get_by_role("button", name="Train").click()
    # The caption over the finished run's replay (an earlier run's replay may still be on screen until then)
    page.get_by_test_id("stCaptionContainer").get_by_text(re.compile(r"^Finished")).wait_for(timeout=60_000)
    page.get_by_text("▶ Play").first.wait_for(timeout=30_000)  # the replay's Plotly loads after the rerun
    wait_idle(page)


def title(page) -> str:
    return page.evaluate(f"() => document.querySelector('{REPLAY} .g-gtitle')?.textContent || ''")


def shown_iteration(page) -> int:
    return int(re.match(r"Iteration: (\d+)", title(page)).group(1))


def wait_iteration_change(page, than: int) -> int:
    page.wait_for_function(f"""() => {{
      const m = (document.querySelector('{REPLAY} .g-gtitle')?.textContent || '').match(/Iteration: (\\d+)/);
      return m && Number(m[1]) !== {than};
    }}""", timeout=10_000)
    return shown_iteration(page)


def slide_to(page, index: int) -> None:
    """Click the replay's slider on its ``index``-th step, as a student does."""
    page.locator(f"{REPLAY} .slider-container").scroll_into_view_if_needed()
    x, y = page.evaluate(f"""(i) => {{
      const tick = document.querySelectorAll('{REPLAY} .slider-tick-rect')[i].getBoundingClientRect();
      const rail = document.querySelector('{REPLAY} .slider-rail-touch-rect').getBoundingClientRect();
      return [tick.left + tick.width / 2, rail.top + rail.height / 2];
    }}""", index)
    page.mouse.click(x, y)


def overlaps(a: dict, b: dict, slack: float = 1.0) -> bool:
    return (min(a["right"], b["right"]) - max(a["left"], b["left"]) > slack
            and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > slack)


def assert_nothing_overlaps(boxes: dict) -> None:
    chart = boxes.pop("chart")
    parts = {k: v for k, v in boxes.items() if v is not None}
    names = sorted(parts)
    clashes = [(a, b) for i, a in enumerate(names) for b in names[i + 1:] if overlaps(parts[a], parts[b])]
    # An axis title belongs beside its own plot area; the plot areas themselves never touch anything else.
    clashes = [c for c in clashes if set(c) not in ({"x_title", "scatter"}, {"y_title", "scatter"},
                                                    {"iteration_title", "loss"}, {"loss_title", "loss"},
                                                    {"accuracy_title", "loss"})]
    assert not clashes, (clashes, parts)
    outside = [k for k, v in parts.items() if v["left"] < chart["left"] - 1 or v["right"] > chart["right"] + 1
               or v["top"] < chart["top"] - 1 or v["bottom"] > chart["bottom"] + 1]
    assert not outside, (outside, chart, parts)  # a title or control cut off at the chart's edge


def test_the_replay_caption_follows_the_slider_and_play_pause(server, browser):
    page = open_lesson(browser, server, (1280, 720))
    train_to_replay(page)
    assert title(page).startswith("Iteration: 380")
    slide_to(page, 120)  # a frame for every iteration, ticks under 3 px apart: the click lands within one
    page.wait_for_function(f"""() => {{
      const gd = document.querySelector('{REPLAY}'), slider = gd._fullLayout.sliders[0];
      const label = slider.steps[slider.active].label;
      return Math.abs(Number(label) - 120) <= 2
        && document.querySelector('{REPLAY} .g-gtitle').textContent.startsWith('Iteration: ' + label);
    }}""", timeout=10_000)  # the title shows the iteration the slider shows
    chosen = shown_iteration(page)
    page.get_by_text("▶ Play").first.click()
    assert wait_iteration_change(page, chosen) > chosen  # Play goes on from the shown frame, not from 0
    page.get_by_text("❚❚ Pause").first.click()
    page.wait_for_timeout(200)
    paused = shown_iteration(page)
    page.wait_for_timeout(600)
    assert shown_iteration(page) == paused < 380  # Pause holds the frame
    page.get_by_text("▶ Play").first.click()
    assert wait_iteration_change(page, paused) > paused  # and Play continues from there
    page.wait_for_function(f"() => document.querySelector('{REPLAY} .g-gtitle').textContent.startsWith("
                           "'Iteration: 380')", timeout=180_000)  # 381 frames, each redrawn: minutes on a busy machine
    assert page.errors == []  # Plotly's interrupted animation no longer surfaces as "undefined"
    page.context.close()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_nothing_overlaps_live_or_replay(server, browser, size):
    page = open_lesson(browser, server, size)
    tag = f"{size[0]}x{size[1]}"
    set_speed(page, "20")
    page.get_by_role("button", name="Train").click()
    page.wait_for_function("() => Number(document.querySelector('.studio-live')?.dataset.painted) >= 60",
                           timeout=30_000)
    page.locator(".studio-live").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / f"lesson3-live-{tag}.png"))
    assert_nothing_overlaps(page.evaluate(GEOMETRY_JS, LIVE))
    page.get_by_role("button", name="Stop").click()
    wait_idle(page)

    train_to_replay(page)
    page.evaluate(f"() => document.querySelector('{REPLAY}').scrollIntoView({{block: 'start'}})")
    page.mouse.wheel(0, -80)  # out from under Streamlit's header
    page.wait_for_timeout(300)
    page.screenshot(path=str(ARTIFACTS / f"lesson3-replay-{tag}.png"))
    page.locator(f"{REPLAY} .slider-container").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / f"lesson3-replay-{tag}-controls.png"))
    boxes = page.evaluate(GEOMETRY_JS, REPLAY)
    assert boxes["title"]["bottom"] - boxes["title"]["top"] > 40  # the three-line caption is drawn
    assert_nothing_overlaps(boxes)
    assert page.errors == []
    page.context.close()


def test_the_learning_rate_steps_down_from_its_default(server, browser):
    page = open_lesson(browser, server, (1280, 720))
    box = page.get_by_test_id("stNumberInput").filter(has_text="Learning rate")
    down = box.get_by_test_id("stNumberInputStepDown")
    assert down.is_enabled()
    down.click()
    wait_idle(page)
    assert box.get_by_role("spinbutton").input_value() == "0.005"
    page.context.close()
