"""Lesson 5 with three classes of the class's own points, in headless Chromium at a laptop's and a phone's size:
it trains, a click on the plane adds a point of the class picked while training goes on, Shift-click removes it,
and the surface takes each class's colour where the network picks it."""

from __future__ import annotations

import urllib.parse

import pytest

from autodiff_core.data import OWN
from autodiff_core.figures.theme import MANY_CLASS_COLORS
from testkit.browser import ARTIFACTS, exception_boxes, open_page, set_speed, wait_idle, wait_painted

pytestmark = pytest.mark.browser
SIZES = [(1280, 720), (390, 844)]
PLOT = ".studio-live .studio-plot"

COUNT_JS = """() => {  // points drawn on the plane: the class traces' and the test traces' markers
  const gd = document.querySelector('.studio-live .studio-plot');
  return (gd.data || []).filter((t) => /^(class|test) \\d$/.test(t.name || ''))
    .reduce((n, t) => n + (t.x || []).length, 0);
}"""

WHERE_JS = """([x, y]) => {  // the page's pixel at plane coordinates (x, y)
  const gd = document.querySelector('.studio-live .studio-plot'), L = gd._fullLayout, box = gd.getBoundingClientRect();
  return [box.left + L.xaxis._offset + L.xaxis.l2p(x), box.top + L.yaxis._offset + L.yaxis.l2p(y)];
}"""

COLOUR_JS = """([x, y]) => {  // the surface canvas's colour at plane coordinates (x, y)
  const gd = document.querySelector('.studio-live .studio-plot'), L = gd._fullLayout;
  const c = document.querySelector('.studio-live .studio-surface');
  const px = L.xaxis.l2p(x) / L.xaxis._length * c.width, py = L.yaxis.l2p(y) / L.yaxis._length * c.height;
  return Array.from(c.getContext('2d').getImageData(Math.round(px), Math.round(py), 1, 1).data.slice(0, 3));
}"""


def _rgb(color: str) -> list[int]:
    return [int(color[i:i + 2], 16) for i in (1, 3, 5)]


def nearest_class(rgb: list[int], classes: int) -> int:
    """Which class colour, mixed with white, ``rgb`` lies nearest (its hue, whatever the strength)."""
    def gap(k: int) -> float:
        c = _rgb(MANY_CLASS_COLORS[k])
        best = min(range(11), key=lambda i: sum((247 + (c[j] - 247) * i / 10 - rgb[j]) ** 2 for j in range(3)))
        return sum((247 + (c[j] - 247) * best / 10 - rgb[j]) ** 2 for j in range(3))
    return min(range(classes), key=gap)


def running(page) -> bool:
    return page.locator(".studio-live").get_attribute("data-status") == "running"


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_three_classes_train_and_a_click_adds_a_point_while_training_goes_on(server, browser, width, height):
    errors: list[str] = []
    ctx = browser.new_context(viewport={"width": width, "height": height})
    ctx.on("weberror", lambda e: errors.append(f"page error: {e.error}"))
    query = urllib.parse.urlencode({"pg_dataset": OWN, "pg_classes": 3})
    page = open_page(ctx, f"{server}/playground?{query}")
    size = f"{width}x{height}"
    wait_painted(page, 0, timeout=60.0)
    assert page.locator(".studio-live").get_attribute("data-draw") == "1"
    start = page.evaluate(COUNT_JS)
    assert start == 15  # five of each class to start from
    set_speed(page, "50")
    page.get_by_role("button", name="Play").click()
    wait_painted(page, 40, timeout=90.0)
    page.locator('[data-testid="stButtonGroup"]').get_by_text("class 2", exact=True).click()
    wait_idle(page)
    page.locator(PLOT).scroll_into_view_if_needed()
    x, y = page.evaluate(WHERE_JS, [4.0, -4.0])
    page.mouse.click(x, y)
    page.wait_for_function(f"() => ({COUNT_JS})() === {start + 1}", timeout=30_000)
    page.wait_for_function("() => document.querySelector('.studio-live').dataset.status === 'running'",
                           timeout=30_000)  # played on from where it was, with the new point
    painted_then = int(page.locator(".studio-live").get_attribute("data-painted"))
    wait_painted(page, painted_then + 20, timeout=60.0)
    assert painted_then >= 40  # the run went on from its step, not from 0
    page.locator(PLOT).scroll_into_view_if_needed()
    page.locator(".studio-live").screenshot(path=str(ARTIFACTS / f"lesson5-classes-{size}-drawn.png"))

    x, y = page.evaluate(WHERE_JS, [4.05, -3.95])
    page.keyboard.down("Shift")
    page.mouse.click(x, y)
    page.keyboard.up("Shift")
    page.wait_for_function(f"() => ({COUNT_JS})() === {start}", timeout=30_000)
    wait_idle(page)
    page.screenshot(path=str(ARTIFACTS / f"lesson5-classes-{size}-erased.png"))
    assert running(page)

    page.get_by_role("button", name="Pause").click()
    wait_idle(page)
    page.wait_for_function("() => document.querySelector('.studio-live').dataset.status === 'idle'")
    page.wait_for_timeout(300)
    # the starter's blobs: class 0 at the top, then around the circle; the surface picks each one's colour there
    picked = [nearest_class(page.evaluate(COLOUR_JS, xy), 3) for xy in ([0.0, 3.2], [-2.77, -1.6], [2.77, -1.6])]
    assert picked == [0, 1, 2], picked
    page.locator(PLOT).scroll_into_view_if_needed()
    page.locator(".studio-live").screenshot(path=str(ARTIFACTS / f"lesson5-classes-{size}-paused.png"))
    page.set_viewport_size({"width": width, "height": 3000})
    page.wait_for_timeout(500)
    page.locator('[data-testid="stMain"]').screenshot(path=str(ARTIFACTS / f"lesson5-classes-{size}-page.png"))
    assert exception_boxes(page) == 0
    ctx.close()
    assert not errors, errors
