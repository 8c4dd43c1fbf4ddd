"""Plotly's toolbar (the modebar: PNG, zoom, pan, reset, full screen), shown at the top right of a chart when the
pointer is over it, touches no text of the chart (title, legend, subplot titles, axis titles and ticks, Play
and the slider) on any finished chart of any lesson, at 1280x720 and on a 390x844 phone. The live chart has none."""

from __future__ import annotations

import pytest

from autodiff_core.grading.challenges import CHALLENGES
from testkit.browser import open_page, open_tab, play_then_pause, set_speed, wait_idle

pytestmark = pytest.mark.browser
SIZES = [(1280, 720), (390, 844)]
EDITOR = 'iframe[title="streamlit_ace.streamlit_ace"]'
XRAY_TABS = ("Graph", "ctx inspector", "Gradcheck lab", "zero_grad()", "Manual SGD", "Custom vs built-in")
# Each chart on screen (not hidden in another tab), its modebar shown as on hover, and every text of the chart
# whose box meets the modebar's.
TOUCHING = """() => {
  const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const texts = '.gtitle, .legend, .annotation, .g-xtitle, .g-ytitle, .g-x2title, .g-y2title, .g-y3title, '
    + '.xtick, .ytick, .x2tick, .y2tick, .y3tick, .slider-group, .updatemenu-container, .colorbar';
  const charts = [...document.querySelectorAll('.js-plotly-plot')]
    .filter((p) => !p.closest('.studio-live') && p.getBoundingClientRect().width > 0);
  const touching = [];
  charts.forEach((plot) => {
    const bar = plot.querySelector('.modebar');
    bar.style.opacity = 1;
    const box = bar.getBoundingClientRect();
    plot.querySelectorAll(texts).forEach((el) => {
      const r = el.getBoundingClientRect();
      const chart = plot.closest('[class*="st-key-"]')?.className.match(/st-key-\\S+/)?.[0];
      const text = `${chart} ${el.getAttribute('class')} "${el.textContent.slice(0, 40)}"`;
      if (r.width && meet(r, box)) touching.push(text);
    });
  });
  return {charts: charts.length, touching};
}"""


def check(page, where: str, found: dict, least: int = 1) -> None:
    """At least ``least`` charts drawn, each with its modebar; then what touches a modebar."""
    wait_idle(page)
    page.wait_for_function("""(least) => { const charts = [...document.querySelectorAll('.js-plotly-plot')]
      .filter((p) => !p.closest('.studio-live') && p.getBoundingClientRect().width > 0);
      return charts.length >= least && charts.every((p) => p.querySelector('.modebar')); }""", arg=least)
    result = page.evaluate(TOUCHING)
    assert result["charts"] >= least, (where, result)
    if result["touching"]:
        found[where] = result["touching"]


def finish(page) -> None:
    set_speed(page, "max")
    page.get_by_role("button", name="Train", exact=True).click()
    page.get_by_text("Finished", exact=False).first.wait_for(timeout=120_000)


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_no_chart_text_touches_the_toolbar(server, browser, width, height):
    context = browser.new_context(viewport={"width": width, "height": height})
    found = {}
    page = open_page(context, f"{server}/custom_function")
    check(page, "lesson 1", found, 2)
    page = open_page(context, f"{server}/xray")
    for tab, least in zip(XRAY_TABS, (0, 0, 2, 3, 2, 2), strict=True):
        open_tab(page, tab)
        check(page, f"lesson 4, {tab}", found, least)
    page = open_page(context, f"{server}/logistic")
    finish(page)
    check(page, "lesson 3, finished", found)
    page = open_page(context, f"{server}/playground")
    play_then_pause(page, 300)
    page.get_by_text("Replay the run as an animation", exact=True).click()
    check(page, "lesson 5, paused, with its replay", found, 3)
    page = open_page(context, f"{server}/write_function")
    editor = page.frame_locator(EDITOR)
    editor.locator(".ace_content").click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(CHALLENGES["relu"].solution.replace("input < 0] = 0", "input > 0] = 0"))
    editor.get_by_role("button", name="Apply").click()
    page.locator('[data-testid="stAlert"]').first.wait_for(timeout=60_000)
    check(page, "lesson 6, checked", found, 2)
    context.close()
    assert not found, "\n".join(f"{where}: {text}" for where, texts in found.items() for text in texts)
