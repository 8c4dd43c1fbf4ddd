"""Lesson 6 in headless Chromium: a student types ReLU wrongly, then with a forbidden call (refused, and the
editor marks its line), then rightly, in the code editor, and sees each verdict. Nothing is fetched from
outside the machine (the editor's JavaScript ships in its wheel)."""

from __future__ import annotations

import pytest

from autodiff_core.grading.challenges import CHALLENGES
from testkit.browser import ARTIFACTS, exception_boxes, launch, open_page, streamlit_server, wait_idle

pytestmark = pytest.mark.browser

RELU = CHALLENGES["relu"].solution
WRONG_RELU = RELU.replace("grad_input = grad_output.clone()", "grad_input = torch.ones_like(input)")
EDITOR = 'iframe[title="streamlit_ace.streamlit_ace"]'


@pytest.fixture(scope="module")
def page():
    from playwright.sync_api import sync_playwright

    with streamlit_server() as url, sync_playwright() as p:
        browser = launch(p)
        context = browser.new_context(viewport={"width": 1400, "height": 1100})
        external, errors = [], []
        context.on("request", lambda r: r.url.startswith(("http://127.0.0.1", "data:", "blob:", "about:"))
                   or external.append(r.url))
        context.on("weberror", lambda e: errors.append(str(e.error)))
        yield open_page(context, f"{url}/write_function")
        browser.close()
        assert not errors, errors
        assert not external, f"requests left this machine: {external[:5]}"


def type_code(page, source: str) -> None:
    """Replace the editor's text as a student pasting it would, then press Apply (which checks it)."""
    editor = page.frame_locator(EDITOR)
    editor.locator(".ace_content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(source)  # a paste: no auto-indent on each new line
    editor.get_by_role("button", name="Apply").click()
    wait_idle(page)


def verdict(page, text: str) -> None:
    page.locator('[data-testid="stAlert"]').filter(has_text=text).first.wait_for(timeout=60_000)


def alerts(page) -> str:
    return " ".join(page.locator('[data-testid="stAlert"]').all_inner_texts())


def test_a_wrong_relu_then_a_right_one(page):
    page.wait_for_selector(EDITOR, timeout=30_000)
    page.frame_locator(EDITOR).locator(".ace_content").wait_for(timeout=30_000)

    type_code(page, WRONG_RELU)
    verdict(page, "gradcheck failed")
    assert "forgot grad_output" in alerts(page)
    page.screenshot(path=str(ARTIFACTS / "lesson6-wrong-relu.png"), full_page=True)
    charts = page.locator(".js-plotly-plot")
    charts.first.wait_for(timeout=30_000)
    charts.first.scroll_into_view_if_needed()
    charts.first.screenshot(path=str(ARTIFACTS / "lesson6-wrong-relu-jacobians.png"))
    charts.nth(1).screenshot(path=str(ARTIFACTS / "lesson6-wrong-relu-curve.png"))

    type_code(page, RELU.replace("(input,) = ctx.saved_tensors", "(input,) = ctx.saved_tensors\n"
                                 "        y = open(input)"))
    verdict(page, "Your code was not run")
    assert "Line 10: you can call" in alerts(page) and "not `open`" in alerts(page)
    page.frame_locator(EDITOR).locator(".ace_gutter-cell.ace_error").wait_for(timeout=30_000)
    assert page.frame_locator(EDITOR).locator(".ace_gutter-cell.ace_error").inner_text().strip() == "10"

    type_code(page, RELU)
    verdict(page, "gradcheck passed")
    assert "forgot grad_output" not in alerts(page)
    assert "solved=relu" in page.url
    page.screenshot(path=str(ARTIFACTS / "lesson6-right-relu.png"), full_page=True)
    assert exception_boxes(page) == 0
