"""Lessons 1 and 4 in headless Chromium at a laptop's 1280x720 and a phone's 390x844: the X-ray graph's text
is readable, every node has its outline, and the ctx inspector's tables are not cut off. Screenshots of
lesson 1 and of every X-ray tab go to artifacts/ for a person to look at."""

from __future__ import annotations

import pytest

from testkit.browser import ARTIFACTS, exception_boxes, launch, open_tab, streamlit_server, wait_idle

pytestmark = pytest.mark.browser

SIZES = [(1280, 720), (390, 844)]

GRAPH_TEXT = """() => [...document.querySelectorAll('[data-testid="stGraphVizChart"] svg text')].map(t =>
  parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a)"""

NODE_SHAPES = """() => [...document.querySelectorAll('[data-testid="stGraphVizChart"] svg g.node')].map(g => {
  const s = g.querySelector('polygon, path, ellipse');
  return s ? [s.getAttribute('fill'), s.getAttribute('stroke')] : [null, null]; })"""

TABLE_OVERFLOW = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')]
  .filter(el => el.getBoundingClientRect().width > 0)
  .map(el => { const s = el.querySelector('.dvn-scroller') || el; return s.scrollWidth - s.clientWidth; })"""


@pytest.fixture(scope="module")
def browser_and_url():
    from playwright.sync_api import sync_playwright

    with streamlit_server() as url, sync_playwright() as p:
        b = launch(p)
        yield b, url
        b.close()


def open_at(browser_and_url, path: str, size: tuple[int, int]):
    browser, url = browser_and_url
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = ctx.new_page()
    page.goto(f"{url}/{path}")
    wait_idle(page)
    return ctx, page


FULL_HEIGHT = """() => Math.max(document.body.scrollHeight,
  ...[...document.querySelectorAll('[data-testid="stMain"], [data-testid="stAppViewContainer"]')]
    .map(el => el.scrollHeight))"""


def shot(page, name: str, size: tuple[int, int]) -> None:
    """The whole page: the app scrolls inside its own container, so the viewport is grown to fit it."""
    page.wait_for_timeout(800)  # let charts and the graph finish drawing
    page.set_viewport_size({"width": size[0], "height": max(size[1], page.evaluate(FULL_HEIGHT))})
    page.wait_for_timeout(1200)  # tables repaint their canvas after the resize
    page.screenshot(path=str(ARTIFACTS / f"{name}-{size[0]}x{size[1]}.png"))
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.wait_for_timeout(300)


def choose_network(page, net: str) -> None:
    page.get_by_text(net, exact=True).click()
    wait_idle(page)
    page.wait_for_timeout(1500)  # the graph animates from the previous one


@pytest.mark.parametrize("size", SIZES, ids=["1280x720", "390x844"])
def test_xray_graph_is_readable_and_outlined(browser_and_url, size):
    ctx, page = open_at(browser_and_url, "xray", size)
    try:
        for net in ("Logistic regression", "Two-layer net", "Logistic regression"):  # switching both ways
            choose_network(page, net)
            fonts = page.evaluate(GRAPH_TEXT)
            if size == (1280, 720):
                assert fonts and min(fonts) >= 12, (net, min(fonts))
            shapes = page.evaluate(NODE_SHAPES)
            assert shapes and all(fill not in (None, "none", "transparent") and stroke not in (None, "none",
                                  "transparent") for fill, stroke in shapes), (net, shapes)
            shot(page, f"xray-0-graph-{'logistic' if net.startswith('Log') else 'two-layer'}", size)
        assert exception_boxes(page) == 0
    finally:
        ctx.close()


@pytest.mark.parametrize("size", SIZES, ids=["1280x720", "390x844"])
def test_every_xray_tab_draws_and_the_ctx_tables_fit(browser_and_url, size):
    ctx, page = open_at(browser_and_url, "xray", size)
    try:
        tabs = page.get_by_role("tab")
        assert tabs.count() == 6
        for i in range(tabs.count()):
            label = tabs.nth(i).inner_text().strip()
            open_tab(page, label)
            page.wait_for_timeout(600)  # charts and tables finish their layout
            name = label.lower().replace(" ", "-").replace("()", "")
            if name == "ctx-inspector" and size == (1280, 720):
                overflow = page.evaluate(TABLE_OVERFLOW)
                assert len(overflow) == 2 and max(overflow) <= 1, overflow
            shot(page, f"xray-{i}-{name}", size)
        assert exception_boxes(page) == 0
        ctx2, lesson1 = open_at(browser_and_url, "custom_function", size)
        shot(lesson1, "lesson1", size)
        assert exception_boxes(lesson1) == 0
        ctx2.close()
    finally:
        ctx.close()
