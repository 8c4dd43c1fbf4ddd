"""A replay shows what it replays: in lessons 3 and 5, at a laptop's 1280x720 and on a 390x844 phone, the caption,
the picture (the points with the moving boundary or surface), Play/Pause and the slider fit on one screen together,
with no empty band between the caption and the picture; and Play, pressed there, moves the picture in view.

Before, Play and the slider sat 600-900 px below the picture, under the loss curves: pressing Play showed the
curves and the slider, never the moving line."""

from __future__ import annotations

import re

import pytest

from testkit.browser import ARTIFACTS, exception_boxes, open_page, playground_replay, set_speed, wait_idle

pytestmark = pytest.mark.browser
SIZES = [(1280, 720), (390, 844)]
CHARTS = {"logistic": '.st-key-logistic_replay .js-plotly-plot', "playground": '.st-key-pg_replay .js-plotly-plot'}
BAND = 50  # px of empty space at most between the chart's caption and the picture, besides the legend (was 66-73)
ABOVE = 100  # px of empty space at most from what stands above the chart to the picture (was 102-137)

# Screen boxes of the replay's parts: the picture's plot area from Plotly's own axes, the rest from the SVG; the
# top of the screen that Streamlit's header leaves; and what the picture shows now (the boundary's path, or the
# surface's image), to tell whether it moves.
BOXES_JS = """(gd) => {
  const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height}; };
  const svg = gd.querySelector('.main-svg').getBoundingClientRect();
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  const picture = {top: svg.top + ya._offset, bottom: svg.top + ya._offset + ya._length,
                   left: svg.left + xa._offset, right: svg.left + xa._offset + xa._length, height: ya._length};
  const xy = gd.querySelector('.subplot.xy');
  const line = [...xy.querySelectorAll('.scatterlayer .trace')].map((t) => t.querySelector('path.js-line'))
    .filter(Boolean).map((p) => p.getAttribute('d')).join('|');
  const image = xy.querySelector('.heatmaplayer image');
  return {chart: box(gd), title: box(gd.querySelector('.g-gtitle')), legend: box(gd.querySelector('.legend')),
          picture, buttons: box(gd.querySelector('.updatemenu-container')),
          slider: box(gd.querySelector('.slider-container')),
          header: box(document.querySelector('[data-testid="stHeader"]')), screen: window.innerHeight,
          shows: line + (image ? image.getAttribute('href').slice(-200) : '')};
}"""

# What the picture shows, on every frame the browser paints for 1.5 s: points drawn, and the surface where the
# chart has one (Plotly's transition path once cleared the surface and the points on every frame of Play).
WHILE_PLAYING_JS = """(gd) => new Promise((done) => {
  const samples = [], t0 = performance.now(), surface = gd._fullData.some((t) => t.type === 'heatmap');
  const look = () => {
    const xy = gd.querySelector('.subplot.xy');
    samples.push({frame: gd._fullLayout._currentFrame, points: xy.querySelectorAll('.scatterlayer .point').length,
                  surface: !surface || !!xy.querySelector('.heatmaplayer image')});
    if (performance.now() - t0 < 1500) requestAnimationFrame(look); else done(samples);
  };
  requestAnimationFrame(look);
})"""

SCROLL_JS = """([gd, by]) => {
  let el = gd.parentElement;  // Streamlit scrolls its main section, not the window
  while (el && !(el.scrollHeight > el.clientHeight && /auto|scroll/.test(getComputedStyle(el).overflowY))) {
    el = el.parentElement;
  }
  (el || document.scrollingElement).scrollTop += by;
}"""


def finished_replay(page, lesson: str) -> None:
    """Train at full speed and open the finished run's replay, as a student does."""
    if lesson == "logistic":
        page.get_by_role("button", name="Train").wait_for(timeout=30_000)
        set_speed(page, "max")
        page.get_by_role("button", name="Train").click()
        page.get_by_test_id("stCaptionContainer").get_by_text(re.compile(r"^Finished")).wait_for(timeout=60_000)
    else:
        playground_replay(page, 300)
    page.wait_for_function(f"() => document.querySelector('{CHARTS[lesson]}')?._fullLayout?.sliders?.length")
    wait_idle(page)
    page.wait_for_timeout(300)  # Plotly has laid the chart out


def caption_above(page, lesson: str) -> float:
    """The bottom of what stands right above the replay: the run's status line, or the replay's toggle."""
    above = (page.get_by_test_id("stCaptionContainer").get_by_text(re.compile(r"^Finished")) if lesson == "logistic"
             else page.get_by_text("Replay the run as an animation"))
    return above.bounding_box()["y"] + above.bounding_box()["height"]


@pytest.mark.parametrize("lesson", list(CHARTS))
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_picture_and_its_play_and_slider_are_on_screen_together(server, browser, lesson, size):
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    errors = []
    context.on("weberror", lambda e: errors.append(str(e.error)))
    page = open_page(context, f"{server}/{lesson}")
    finished_replay(page, lesson)
    chart = page.locator(CHARTS[lesson])
    b = chart.evaluate(BOXES_JS)
    room = b["screen"] - b["header"]["bottom"]  # the screen under Streamlit's header
    span = b["slider"]["bottom"] - b["title"]["top"]
    assert span <= room, f"caption to slider {span:.0f} px, the screen has {room:.0f}"
    assert b["buttons"]["top"] >= b["picture"]["bottom"] and b["buttons"]["top"] - b["picture"]["bottom"] <= 75, b
    assert b["slider"]["top"] >= b["buttons"]["bottom"] - 1, b  # Play/Pause, then the slider, under the picture
    assert b["title"]["top"] >= b["chart"]["top"], b  # the caption is not cut at the chart's top
    empty = b["picture"]["top"] - b["title"]["bottom"] - b["legend"]["height"]
    assert empty <= BAND, f"{empty:.0f} px of empty band between the caption and the picture"
    blank = b["picture"]["top"] - caption_above(page, lesson) - b["title"]["height"] - b["legend"]["height"]
    assert blank <= ABOVE, f"{blank:.0f} px of empty space from the status line (or toggle) above to the picture"

    # Scroll as a student does, the caption just under the header: the picture and its controls are all in view.
    page.evaluate(SCROLL_JS, [chart.element_handle(), b["title"]["top"] - b["header"]["bottom"] - 4])
    page.wait_for_timeout(200)
    b = chart.evaluate(BOXES_JS)
    for part in ("title", "picture", "buttons", "slider"):
        assert b["header"]["bottom"] - 1 <= b[part]["top"] and b[part]["bottom"] <= b["screen"] + 1, (part, b)
    page.screenshot(path=str(ARTIFACTS / f"replay-in-view-{lesson}-{size[0]}x{size[1]}.png"))

    # Play, pressed where it is: the picture moves, in view (nothing scrolled it away).
    before = b["shows"]
    play = chart.locator(".updatemenu-button").first.bounding_box()
    page.mouse.click(play["x"] + play["width"] / 2, play["y"] + play["height"] / 2)
    samples = chart.evaluate(WHILE_PLAYING_JS)
    blank = [x for x in samples if not (x["points"] and x["surface"])]
    assert not blank, f"{len(blank)} of {len(samples)} painted frames showed no points or no surface: {blank[:3]}"
    page.wait_for_function(f"([gd, before]) => ({BOXES_JS})(gd).shows !== before",
                           arg=[chart.element_handle(), before], timeout=15_000)  # the line (or surface) moved
    now = chart.evaluate(BOXES_JS)
    assert b["header"]["bottom"] - 1 <= now["picture"]["top"] and now["picture"]["bottom"] <= now["screen"] + 1
    page.screenshot(path=str(ARTIFACTS / f"replay-in-view-{lesson}-{size[0]}x{size[1]}-playing.png"))
    assert exception_boxes(page) == 0
    context.close()
    assert not [e for e in errors if e not in ("undefined", "")], errors
