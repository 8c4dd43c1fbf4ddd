"""Lesson 5's Step in slow motion, at 1280x720: each of its tables shows all its rows (the forward and backward
table has four rows a layer: with two hidden layers, 12), so nothing is hidden behind a scroll no one sees."""

from __future__ import annotations

import pytest

from testkit.browser import open_page, slow_step

pytestmark = pytest.mark.browser
GRIDS = """() => [...document.querySelectorAll('[data-testid="stMainBlockContainer"] [data-testid="stDataFrame"]')]
  .map((grid) => { const s = grid.querySelector('.dvn-scroller');
                   return {scroll: s.scrollHeight, shown: s.clientHeight}; })"""


def test_every_slow_motion_table_shows_all_its_rows(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = open_page(context, f"{server}/playground")
    slow_step(page)
    page.locator('[data-testid="stMainBlockContainer"] [data-testid="stDataFrame"] .dvn-scroller').nth(2).wait_for()
    grids = page.evaluate(GRIDS)
    assert len(grids) == 3, grids
    assert all(g["scroll"] <= g["shown"] + 1 for g in grids), grids  # no rows below the fold of the grid
    context.close()
