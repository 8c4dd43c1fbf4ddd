"""Presenter view: text a back row can read. Lesson 1's step-by-step table (the lesson's centre) is an
HTML table the presenter CSS enlarges, not the interactive grid, which paints 14 px text on a canvas; captions
and status lines ("Finished at iteration 380 in 7.6 s.") are larger and darker than Streamlit's 14 px at 60%."""

from __future__ import annotations

import pytest

from testkit.browser import open_page, wait_idle
from tests.studio.test_url_fuzz import open_app, q


def test_lesson1_steps_are_a_table_in_the_presenter_view_and_a_grid_otherwise(new_app):
    at = open_app(new_app, "custom_function", q(present="1"))
    assert not at.exception and not at.dataframe
    [table] = at.table
    steps = table.value
    assert list(steps["step"])[0] == "1 · input x" and list(steps.columns)[1:] == [f"x[{i}]" for i in range(6)]
    assert list(steps.iloc[0, 1:]) == ["-2", "-1", "-0.5", "0.5", "1", "2.5"]  # each number in its shortest form
    at = open_app(new_app, "custom_function", "")
    assert len(at.dataframe) == 1 and not at.table


SIZES = """() => {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  const px = e => parseFloat(getComputedStyle(e).fontSize);
  const caption = main.querySelector('[data-testid="stCaptionContainer"]');
  return {cell: px(main.querySelector('[data-testid="stTable"] td')), caption: px(caption.querySelector('p')),
          opacity: parseFloat(getComputedStyle(caption).opacity)};
}"""


@pytest.mark.browser
def test_lesson1_table_and_its_caption_are_presenter_sized(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = open_page(context, f"{server}/custom_function?present=1")
    wait_idle(page)
    page.locator('[data-testid="stTable"] td').first.wait_for()
    page.get_by_text("ctx.saved_tensors holds").wait_for()
    sizes = page.evaluate(SIZES)
    assert sizes["cell"] >= 20 and sizes["caption"] >= 18 and sizes["opacity"] >= 0.85, sizes
    context.close()


FINISHED = """() => { const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = w.nextNode(); n; n = w.nextNode()) if (n.textContent.startsWith('Finished')) {
    const s = getComputedStyle(n.parentElement);
    return {size: parseFloat(s.fontSize), opacity: parseFloat(s.opacity)}; }
  return null; }"""


@pytest.mark.browser
@pytest.mark.parametrize("lesson", ["two_layer", "logistic", "optimizers"])
def test_a_finished_runs_status_line_is_presenter_sized(server, browser, lesson):
    """Lesson 2's live chart says it at 18 px; lessons 3 and 7 said it in the page's plain 16 px text."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    steps = "&tl_steps=50" if lesson == "two_layer" else ""
    page = open_page(context, f"{server}/{lesson}?{lesson}_speed=max&present=1{steps}")
    page.get_by_role("button", name="Train", exact=True).click()
    page.get_by_text("Finished").first.wait_for(timeout=60_000)
    wait_idle(page)
    found = page.evaluate(FINISHED)
    assert found is not None and found["size"] >= 18, found
    context.close()
