"""Lesson 6's code editor in headless Chromium at a projector's 1280 px and a phone's 390 px: every character
of the starter code stays inside the editor (long lines wrap, indented), none runs off its right edge."""

from __future__ import annotations

import pytest

from testkit.browser import open_page

pytestmark = pytest.mark.browser
EDITOR = 'iframe[title="streamlit_ace.streamlit_ace"]'
OVERFLOW = """() => {
    const right = document.querySelector('.ace_scroller').getBoundingClientRect().right;
    const spans = [...document.querySelectorAll('.ace_text-layer .ace_line span')];
    return [spans.length, spans.filter(s => s.getBoundingClientRect().right > right + 1).map(s => s.textContent)];
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_no_line_of_the_starter_code_is_cut_off(server, browser, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = open_page(context, f"{server}/write_function")
    page.wait_for_selector(EDITOR, timeout=30_000)
    frame = page.frame_locator(EDITOR)
    frame.locator(".ace_line").first.wait_for(timeout=30_000)
    counted, cut = frame.locator("body").evaluate(f"body => ({OVERFLOW})()")
    context.close()
    assert counted > 5 and cut == [], cut
