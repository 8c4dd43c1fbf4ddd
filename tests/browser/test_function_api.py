"""Lesson 8 in headless Chromium at a laptop's 1280x720 and a phone's 390x844: each part runs and draws, the
errors autograd raises are plain text in a box of their own (never an exception box), nothing is wider than
the screen, and needs_input_grad's timing shows its ratio. One challenge is typed into the code editor, failed,
then passed; the presenter view's charts are projector-sized. Whole-page screenshots go to artifacts/ for a
person to look at."""

from __future__ import annotations

import pytest

from autodiff_core.api_demos import PARTS
from autodiff_core.grading.api_challenges import API_CHALLENGES
from testkit.browser import ARTIFACTS, exception_boxes, wait_idle
from tests.browser.test_classroom import MEASURE
from tests.browser.test_write_function import EDITOR, type_code, verdict
from tests.browser.test_xray import shot

pytestmark = pytest.mark.browser

SIZES = [(1280, 720), (390, 844)]
ERRORS = {"double_backward": ["@once_differentiable"], "forward_mode": ["jvp function", "setup_context"],
          "in_place": ["This behavior is forbidden"], "non_differentiable": [], "needs_input_grad": [],
          "torch_func": ["setup_context", "generate_vmap_rule=True"]}
WIDTH = """() => ({page: document.documentElement.scrollWidth, main: document.querySelector(
  '[data-testid="stMain"]').scrollWidth, screen: window.innerWidth})"""


@pytest.fixture
def app(server, browser):
    return browser, server


def open_part(app, part: str, size, query: str = ""):
    browser, url = app
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    errors = []
    context.on("weberror", lambda e: errors.append(str(e.error)))
    page = context.new_page()
    page.goto(f"{url}/function_api?fa_part={part}{query}")
    wait_idle(page)
    page.get_by_role("heading", name=PARTS[part]).wait_for(timeout=60_000)
    page.get_by_text("Show the code that ran").wait_for(timeout=60_000)  # the part is drawn whole
    wait_idle(page)
    return context, page, errors


@pytest.mark.parametrize("size", SIZES, ids=["1280x720", "390x844"])
def test_every_part_runs_and_fits_the_screen(app, size):
    for part in PARTS:
        context, page, errors = open_part(app, part, size)
        if part == "needs_input_grad":
            page.get_by_role("button", name="Time both backwards").click()
            page.locator('[data-testid="stAlert"]').filter(has_text="the time of MyMatMulEveryGrad's").wait_for(
                timeout=60_000)
            page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
        if part != "needs_input_grad":  # its chart comes with the timing
            page.locator(".js-plotly-plot, [data-testid='stTable']").first.wait_for(timeout=30_000)
        for words in ERRORS[part]:  # autograd's words, each in a code box
            page.locator('[data-testid="stCode"]').filter(has_text=words).first.wait_for(timeout=30_000)
        assert exception_boxes(page) == 0 and "Traceback" not in page.locator("body").inner_text()
        width = page.evaluate(WIDTH)
        assert width["page"] <= width["screen"] + 1 and width["main"] <= width["screen"] + 1, (part, width)
        shot(page, f"function_api-{part}", size)
        context.close()
        assert not errors, (part, errors)


@pytest.mark.parametrize("size", SIZES, ids=["1280x720", "390x844"])
def test_a_challenge_typed_into_the_editor_fails_then_passes(app, size):
    context, page, errors = open_part(app, "in_place", size)
    page.wait_for_selector(EDITOR, timeout=30_000)
    page.frame_locator(EDITOR).locator(".ace_content").wait_for(timeout=30_000)
    broken = API_CHALLENGES["in_place"].skeleton.replace("        return input\n",
                                                         "        return input  # as it came\n", 1)
    type_code(page, broken)
    verdict(page, "3 of 5 checks failed")
    body = page.locator("body").inner_text()
    assert "✕ ctx.mark_dirty(input)" in body and "This behavior is forbidden" in body
    shot(page, "function_api-challenge-failed", size)
    type_code(page, API_CHALLENGES["in_place"].solution)
    verdict(page, "All 5 checks passed, against torch.relu.")
    assert "✕" not in page.locator("body").inner_text()
    shot(page, "function_api-challenge-passed", size)
    assert exception_boxes(page) == 0 and not errors
    context.close()


def test_presenter_view_charts_are_projector_sized(app):
    context, page, errors = open_part(app, "double_backward", (1280, 720), "&present=1")
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .xtick').length >= 2",
                           timeout=30_000)
    page.wait_for_timeout(500)
    m = page.evaluate(MEASURE)
    page.screenshot(path=str(ARTIFACTS / "function_api-presenter-1280x720.png"))
    assert m["sidebar"] < 50 and len(m["plots"]) == 2
    for chart in m["plots"]:
        assert min(chart["ticks"]) >= 18 and min(chart["titles"], default=22) >= 22, chart
    assert exception_boxes(page) == 0 and not errors
    context.close()
