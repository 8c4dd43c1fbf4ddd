"""The live chart's choice of the next state to paint (studio/live_chart.js ``nextState``), run in Chromium: one
state at a time while it keeps up, and when far behind it skips only the excess, keeping a backlog that paints
every frame until the feed's next batch, rather than jumping near the newest and then waiting with nothing new."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
JS = (Path(__file__).resolve().parents[2] / "studio" / "live_chart.js").read_bytes()
PICK = """async ([source, pending, maxBehind, newest]) => {
  const chart = await import(`data:text/javascript;base64,${source}`);
  return chart.nextState(pending.map((seq) => ({ seq })), maxBehind, newest).seq;
}"""


@pytest.fixture(scope="module")
def pick(browser):
    page = browser.new_page()
    source = base64.b64encode(JS).decode()
    yield lambda pending, max_behind, newest=False: page.evaluate(PICK, [source, pending, max_behind, newest])
    page.close()


def test_in_order_while_the_chart_keeps_up(pick):
    assert pick(list(range(5, 35)), 30) == 5


def test_far_behind_it_skips_only_the_excess(pick):
    waiting = list(range(1, 51))  # 50 waiting, 30 allowed: 20 skipped, the 30 newest are painted one by one
    assert pick(waiting, 30) == 21


def test_an_ended_run_or_a_chart_mounted_mid_run_shows_the_newest(pick):
    assert pick(list(range(1, 51)), 30, True) == 50
    assert pick([7], 30, True) == 7
