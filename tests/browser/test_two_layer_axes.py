"""Lesson 2's live chart in a browser: a stopped run's step axis fits the steps it took."""

from __future__ import annotations

import pytest

from testkit.browser import exception_boxes, open_page, set_number, set_speed, wait_idle

pytestmark = pytest.mark.browser


@pytest.fixture
def page(server, browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    yield open_page(ctx, f"{server}/two_layer")
    ctx.close()


def x_range(page) -> list[float]:
    return page.evaluate("() => document.querySelector('.studio-plot')._fullLayout.xaxis.range")


def test_a_stopped_run_rescales_its_step_axis(page):
    set_number(page, "Steps", 100000)
    set_speed(page, "200")
    page.get_by_role("button", name="Train").click()
    page.wait_for_function("() => Number(document.querySelector('.studio-live')?.dataset.painted) >= 150",
                           timeout=30_000)
    assert x_range(page)[1] == pytest.approx(99_999)  # while it runs: all the planned steps
    page.get_by_role("button", name="Stop").click()
    page.get_by_text("Stopped at step").wait_for(timeout=10_000)
    wait_idle(page)
    page.wait_for_function("() => document.querySelector('.studio-plot')._fullLayout.xaxis.range[1] < 5000",
                           timeout=10_000)
    stopped = int(page.locator(".studio-live").get_attribute("data-step"))
    assert x_range(page)[1] == pytest.approx(stopped)
    assert exception_boxes(page) == 0


def test_the_png_button_reads_as_its_neighbours(page):
    """Lesson 2's PNG button (a component of ours) in the font size of Streamlit's CSV, JSON, HTML buttons."""
    set_number(page, "Steps", 20)
    set_speed(page, "max")
    page.get_by_role("button", name="Train").click()
    page.get_by_text("Finished: all 20 steps").wait_for(timeout=30_000)
    wait_idle(page)
    csv = page.get_by_role("button", name="CSV")
    csv.wait_for(timeout=10_000)
    size = "(el) => getComputedStyle(el.querySelector('p') || el).fontSize"
    png = page.locator(".studio-png")
    assert png.evaluate(size) == csv.evaluate(size)
    csv.scroll_into_view_if_needed()
    page.screenshot(path="/tmp/review_fix_l2_buttons.png")
