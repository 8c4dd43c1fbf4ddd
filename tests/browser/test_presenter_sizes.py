"""Presenter view at 1280x720: what a class reads besides the charts is at the presenter's size, at least 18 px as
Chromium renders it: lesson 4's tabs and its ctx inspector's tables, lesson 5's slow-motion tables, the
"Settings and presets" box, the speed slider's label and value, and the buttons that start and stop a run.
(A table must be HTML for that: the interactive grid paints 14 px text on a canvas, which no CSS reaches.)"""

from __future__ import annotations

import pytest

from testkit.browser import open_page, open_tab, slow_step, wait_idle

pytestmark = pytest.mark.browser
PRESENTER = 18  # px: the smallest text the presenter view draws (PRESENT_FONT, the charts' ticks)
SIZE = "(e) => parseFloat(getComputedStyle(e).fontSize)"
TABLES = """() => {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  const cells = [...main.querySelectorAll('[data-testid="stTable"] :is(td, th)')].filter((c) => c.textContent.trim());
  return {tables: main.querySelectorAll('[data-testid="stTable"]').length,
          grids: main.querySelectorAll('[data-testid="stDataFrame"]').length,
          smallest: Math.min(...cells.map((c) => parseFloat(getComputedStyle(c).fontSize)))};
}"""


def text_size(page, text: str, within=None) -> float:
    """The computed font size of the innermost element that shows ``text``."""
    return (within or page).get_by_text(text, exact=True).first.evaluate(SIZE)


def button_size(page, name: str) -> float:
    return text_size(page, name, page.get_by_role("button", name=name, exact=True))


@pytest.fixture
def presenter(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    yield context
    context.close()


def test_lesson4_tabs_settings_and_ctx_tables(server, presenter):
    page = open_page(presenter, f"{server}/xray?present=1")
    tabs = ("Graph", "ctx inspector", "Gradcheck lab", "zero_grad()", "Manual SGD", "Custom vs built-in")
    sizes = {tab: text_size(page, tab, page.get_by_role("tab", name=tab)) for tab in tabs}
    sizes["Settings and presets"] = text_size(page, "Settings and presets")
    assert min(sizes.values()) >= PRESENTER, sizes
    open_tab(page, "ctx inspector")
    page.locator('[data-testid="stTable"]').nth(1).wait_for()
    tables = page.evaluate(TABLES)
    assert tables["tables"] == 2 and tables["grids"] == 0 and tables["smallest"] >= PRESENTER, tables


def test_lesson2_speed_and_train_and_stop(server, presenter):
    page = open_page(presenter, f"{server}/two_layer?present=1")
    sizes = {"speed": text_size(page, "Speed (steps per second)"),
             "speed value": page.get_by_test_id("stSliderThumbValue").first.evaluate(SIZE),
             "Train": button_size(page, "Train"), "Stop": button_size(page, "Stop")}
    assert min(sizes.values()) >= PRESENTER, sizes


def test_lesson5_controls_and_slow_motion_tables(server, presenter):
    page = open_page(presenter, f"{server}/playground?present=1")
    slow_step(page)
    sizes = {name: button_size(page, name) for name in ("Play", "Pause", "Step", "Reset")}
    sizes["speed"] = text_size(page, "Speed (steps per second)")
    sizes["slow motion"] = text_size(page, "Slow motion")
    assert min(sizes.values()) >= PRESENTER, sizes
    tables = page.evaluate(TABLES)
    assert tables["tables"] == 3 and tables["grids"] == 0 and tables["smallest"] >= PRESENTER, tables


EDITOR = 'iframe[title="streamlit_ace.streamlit_ace"]'


def test_lesson6_has_a_presenter_view(server, presenter):
    """Lesson 6 on the projector: no paragraph the teacher says, the code, the task and its verdict at the
    presenter's size, and the editor with its Apply button on the first screen."""
    page = open_page(presenter, f"{server}/write_function?present=1")
    page.frame_locator(EDITOR).locator(".ace_content").wait_for(timeout=30_000)
    assert not page.get_by_text("Fill in forward and backward").count()  # the explanation: the teacher says it
    sizes = {"code": page.frame_locator(EDITOR).locator(".ace_editor").evaluate(SIZE),
             "task": text_size(page, "ReLU"), "formula": text_size(page, "relu(x) = max(0, x)"),
             "Start over": button_size(page, "Start over")}
    assert min(sizes.values()) >= PRESENTER, sizes
    apply = page.locator(EDITOR).bounding_box()
    assert apply["y"] + apply["height"] <= 720, apply  # the editor, Apply at its foot, on the projector's screen
    page.frame_locator(EDITOR).get_by_role("button", name="Apply").wait_for()
    editor = page.frame_locator(EDITOR)
    editor.locator(".ace_content").click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text("class MyReLU(torch.autograd.Function):\n    pass\n")
    editor.get_by_role("button", name="Apply").click()
    wait_idle(page)
    alert = page.locator('[data-testid="stAlert"] p').first
    alert.wait_for(timeout=60_000)
    assert alert.evaluate(SIZE) >= PRESENTER
