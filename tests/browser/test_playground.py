"""Lesson 5 in headless Chromium at a laptop's and a phone's size: what a class sees, live and finished."""

from __future__ import annotations

import re

import pytest

from autodiff_core.functions import activation_names
from testkit.browser import (
    ARTIFACTS,
    exception_boxes,
    open_page,
    painted,
    playground_replay,
    set_speed,
    wait_idle,
    wait_painted,
)

pytestmark = pytest.mark.browser
SIZES = [(1280, 720), (390, 844)]
REPLAY = '.st-key-pg_replay .js-plotly-plot'  # the replay, not the diagram or gradient flow below it

# Every text Plotly drew in one chart, and every plot area: no two texts may meet, and no text may sit on a
# plot area (the points, the surface, the curves). Returns the offending pairs, described.
OVERLAPS_JS = """(plot) => {
  const texts = [...plot.querySelectorAll('text')].filter((t) => t.textContent.trim())
    .map((t) => ({name: t.textContent.trim(), kind: t.getAttribute('class') || t.parentNode.getAttribute('class'),
                  box: t.getBoundingClientRect()}))
    .filter((t) => t.box.width > 0 && t.box.height > 0);
  const areas = [...plot.querySelectorAll('.nsewdrag')].map((r) => r.getBoundingClientRect());
  const meet = (a, b, pad) => a.left + pad < b.right && b.left + pad < a.right && a.top + pad < b.bottom
    && b.top + pad < a.bottom;
  const bad = [];
  texts.forEach((a, i) => texts.slice(i + 1).forEach((b) => {
    if (meet(a.box, b.box, 1)) bad.push(`"${a.name}" (${a.kind}) meets "${b.name}" (${b.kind})`);
  }));
  texts.forEach((a) => areas.forEach((r) => {
    if (meet(a.box, r, 1)) bad.push(`"${a.name}" (${a.kind}) lies on a plot area`);
  }));
  return bad;
}"""

FONT_SIZES_JS = """(plot) => [...new Set([...plot.querySelectorAll('.xtick text, .ytick text, .legendtext')]
  .map((t) => getComputedStyle(t).fontSize))]"""


@pytest.fixture
def errors():
    return []


def new_context(browser, errors, width: int, height: int):
    ctx = browser.new_context(viewport={"width": width, "height": height})
    ctx.on("weberror", lambda e: errors.append(f"page error: {e.error}"))
    return ctx


def choose(page, label: str, option: str) -> None:
    page.get_by_label(label).click()
    page.keyboard.type(option)
    page.keyboard.press("Enter")
    wait_idle(page)


def shown_value_fits(page, label: str, option: str) -> bool:
    """The selectbox shows ``option`` whole: its text, measured in the box's font, fits inside the box."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label)
    return box.evaluate("""(el, option) => {
      const input = el.querySelector('input'), cs = getComputedStyle(input);
      const ctx = document.createElement('canvas').getContext('2d');
      ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      const room = input.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      return input.value === option && ctx.measureText(option).width <= room;
    }""", option)


def live_plot(page):
    return page.locator(".studio-live .studio-plot")  # the chart, not the gradient flow under it


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_lesson5_live_and_finished_nothing_overlaps(server, browser, errors, width, height):
    ctx = new_context(browser, errors, width, height)
    page = open_page(ctx, f"{server}/playground")
    size = f"{width}x{height}"
    wait_painted(page, 0, timeout=60.0)
    longest = max(activation_names(), key=len)
    choose(page, "Activation", longest)
    assert shown_value_fits(page, "Activation", longest), "the activation's name is cut off"
    choose(page, "Activation", "ReLU")
    page.screenshot(path=str(ARTIFACTS / f"lesson5-{size}-controls.png"))

    set_speed(page, "200")
    page.get_by_role("button", name="Play").click()
    wait_painted(page, 150, timeout=60.0)
    assert (bad := live_plot(page).evaluate(OVERLAPS_JS)) == [], bad
    assert live_plot(page).evaluate(FONT_SIZES_JS) == ["16px"]
    page.locator(".studio-live").screenshot(path=str(ARTIFACTS / f"lesson5-{size}-live.png"))

    page.get_by_role("button", name="Pause").click()
    wait_idle(page)
    page.wait_for_function("() => document.querySelector('.studio-live').dataset.status === 'idle'")
    page.wait_for_timeout(300)  # the chart paints the paused model's state
    paused = painted(page)
    for i in range(1, 4):  # Step goes on from where Pause left the model, one step a click
        page.get_by_role("button", name="Step").click()
        wait_idle(page)
        page.wait_for_function(f"() => document.querySelector('.studio-live .studio-caption').textContent"
                               f".startsWith('Step {paused + i:,} ')", timeout=15_000)
    assert painted(page) == paused + 3
    assert (bad := live_plot(page).evaluate(OVERLAPS_JS)) == [], bad
    page.locator(".studio-live").screenshot(path=str(ARTIFACTS / f"lesson5-{size}-finished.png"))

    page.get_by_text("Replay the run as an animation").click()
    page.wait_for_function(f"() => document.querySelector('{REPLAY}')?._fullLayout")
    replay = page.locator(REPLAY)
    page.wait_for_timeout(500)
    assert (bad := replay.evaluate(OVERLAPS_JS)) == [], bad
    assert replay.evaluate(FONT_SIZES_JS) == ["16px"]  # the finished chart looks like the live one
    shot = ARTIFACTS / f"lesson5-{size}-replay.png"
    page.locator('.st-key-pg_replay [data-testid="stPlotlyChart"]').screenshot(path=str(shot))
    page.set_viewport_size({"width": width, "height": 2400})  # the same width, tall enough for the whole page
    page.wait_for_timeout(500)
    page.locator('[data-testid="stMain"]').screenshot(path=str(ARTIFACTS / f"lesson5-{size}-finished-page.png"))
    assert exception_boxes(page) == 0
    ctx.close()
    assert not errors, errors


def current_frame(page) -> int:
    return int(page.locator(REPLAY).evaluate("(gd) => Number(gd._fullLayout._currentFrame ?? -1)"))


def test_lesson5_replay_pause_then_play_goes_on_from_the_paused_frame(server, browser, errors):
    ctx = new_context(browser, errors, 1280, 900)
    page = open_page(ctx, f"{server}/playground")
    playground_replay(page, 1000)
    page.wait_for_function(f"() => document.querySelector('{REPLAY}')?._fullLayout")
    play, pause = page.get_by_text("▶ Play"), page.get_by_text("❚❚ Pause")
    play.click()  # from the start: the replay opens on the last frame
    page.wait_for_function(f"() => Number(document.querySelector('{REPLAY}')._fullLayout._currentFrame) >= 300")
    pause.click()
    page.wait_for_timeout(400)
    stopped = current_frame(page)
    page.wait_for_timeout(400)
    assert current_frame(page) == stopped  # Pause holds the frame
    title = page.locator(f"{REPLAY} .gtitle").first.text_content()
    assert re.match(rf"Step {stopped:,}\b", title)  # and the caption is that frame's
    play.click()
    page.wait_for_timeout(300)
    assert current_frame(page) > stopped  # on from the paused frame, not from step 0
    pause.click()
    page.wait_for_timeout(300)
    ctx.close()
    assert not errors, errors  # Play and Pause throw nothing
