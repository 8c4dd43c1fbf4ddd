"""Presenter view at 1280x720: the band that holds the sidebar's » button is opaque, so text scrolled up
passes under it instead of under the button (it covered "Network" on lesson 4's Graph tab), and the band
ends above the lesson's title."""

from __future__ import annotations

import pytest

from testkit.browser import open_page, wait_idle

BOXES = """() => {
  const box = s => document.querySelector(s).getBoundingClientRect();
  const header = document.querySelector('[data-testid="stHeader"]');
  return {header: box('[data-testid="stHeader"]').bottom, button: box('[data-testid="stExpandSidebarButton"]').bottom,
          title: box('h1').top, background: getComputedStyle(header).backgroundColor};
}"""


@pytest.mark.browser
def test_presenter_text_scrolls_under_an_opaque_band_not_under_the_sidebar_button(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = open_page(context, f"{server}/xray?present=1")
    wait_idle(page)
    page.get_by_text("Network", exact=True).wait_for()
    boxes = page.evaluate(BOXES)
    assert boxes["background"] == "rgb(255, 255, 255)", boxes  # no alpha: nothing shows through
    assert boxes["button"] <= boxes["header"] <= boxes["title"], boxes
    page.mouse.move(640, 400)
    page.mouse.wheel(0, 500)
    page.wait_for_timeout(500)
    label = page.get_by_text("Network", exact=True).bounding_box()
    assert label["y"] < boxes["header"]  # scrolled up under the band: hidden, not overlapping the button
    context.close()
