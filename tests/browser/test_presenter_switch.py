"""Switching the presenter view on after a run (at 1280x720, the sidebar open): the page's content widens to the
whole screen, and every chart is drawn again at its new width, not left at the width it had beside the sidebar."""

from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from testkit.browser import open_page, set_speed, wait_idle

pytestmark = pytest.mark.browser
WIDTHS = """() => {
  const content = document.querySelector('[data-testid="stMainBlockContainer"]');
  const style = getComputedStyle(content);
  const inner = content.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return {content: inner, charts: [...content.querySelectorAll('.js-plotly-plot')]
    .filter((p) => p.getBoundingClientRect().width > 0)
    .map((p) => ({div: p.getBoundingClientRect().width,
                  drawn: p.querySelector('.main-svg').getBoundingClientRect().width}))};
}"""


# Every chart is drawn as wide as its place, and the first (the lesson's) fills the content.
FILLED = f"""() => {{ const w = ({WIDTHS})();
  return w.charts.length > 0 && w.charts.every((c) => Math.abs(c.drawn - c.div) <= 2)
    && w.charts[0].drawn >= 0.95 * w.content; }}"""


@pytest.mark.parametrize("lesson", ["two_layer", "logistic"])
def test_the_presenter_view_switched_on_after_a_run_redraws_the_chart_at_full_width(server, browser, lesson):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = open_page(context, f"{server}/{lesson}")
    set_speed(page, "max")
    page.get_by_role("button", name="Train", exact=True).click()
    page.get_by_text("Finished", exact=False).first.wait_for(timeout=120_000)
    wait_idle(page)
    before = page.evaluate(WIDTHS)
    assert before["content"] < 1000  # beside the open sidebar
    page.get_by_text("Presenter view", exact=True).click()
    wait_idle(page)
    page.wait_for_function("() => document.querySelector('[data-testid=\"stMainBlockContainer\"]').clientWidth > 1200")
    try:
        page.wait_for_function(FILLED, timeout=10_000)
    except PlaywrightTimeout:
        pytest.fail(f"not redrawn at the new width: before {before}, after {page.evaluate(WIDTHS)}")
    context.close()
