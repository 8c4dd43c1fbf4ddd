"""Lesson 5 in headless Chromium: the network diagram and the gradient flow repaint while a run goes."""

from __future__ import annotations

import pytest

from testkit.browser import ARTIFACTS, exception_boxes, open_page, set_speed, wait_idle

pytestmark = pytest.mark.browser

DATASET_JS = "() => Object.assign({}, document.querySelector('.studio-live')?.dataset || {})"


def test_lesson5_diagram_and_gradient_flow_paint_live_at_max_speed(server, browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    errors = []
    ctx.on("weberror", lambda e: errors.append(f"page error: {e.error}"))
    page = open_page(ctx, f"{server}/playground")
    page.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None)
    set_speed(page, "max")
    page.get_by_role("button", name="Play", exact=True).click()
    page.wait_for_function("() => Number(document.querySelector('.studio-live')?.dataset.diagramPaints) >= 1",
                           timeout=60_000)
    diagram = page.locator(".studio-diagram-wrap")
    diagram.scroll_into_view_if_needed()  # the diagram paints while it is on screen
    first = page.evaluate(DATASET_JS)
    page.wait_for_function("""(n) => {
      const d = document.querySelector('.studio-live').dataset;
      return Number(d.diagramPaints) >= n + 3 && d.status === 'running';
    }""", arg=int(first["diagramPaints"]), timeout=60_000)
    now = page.evaluate(DATASET_JS)
    assert int(now["diagramStep"]) > int(first["diagramStep"])  # it moved on with the run
    assert diagram.locator(".studio-section-title").inner_text() == "The network"
    box = diagram.locator("canvas").bounding_box()
    assert box["width"] > 300 and box["height"] > 200
    pixels = diagram.locator("canvas").evaluate("""(c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let coloured = 0;
      for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - d[i + 2]) > 60) coloured++;
      return coloured;
    }""")
    assert pixels > 1000  # tiles and links in the class colours, not a blank canvas
    tip = diagram.locator(".studio-diagram-tip")
    for x in range(int(box["width"]) - 5, 0, -8):  # right to left along the middle: the output's tile first
        page.mouse.move(box["x"] + x, box["y"] + 20 + box["height"] / 2)  # (under the column headers' 40 px)
        if tip.is_visible():
            break
    assert tip.inner_text().startswith("output, bias ")  # hover shows values, as the static figure does
    page.screenshot(path=str(ARTIFACTS / "lesson5-1280x720-live-diagram.png"))
    flow = page.locator(".studio-flow-wrap")
    flow.scroll_into_view_if_needed()
    painted = int(page.evaluate(DATASET_JS).get("flowPaints", 0))
    page.wait_for_function("(n) => Number(document.querySelector('.studio-live').dataset.flowPaints) >= n + 2",
                           arg=painted, timeout=30_000)
    assert flow.locator(".js-plotly-plot .scatterlayer .trace").count() == 3 + 2  # norms of 3 layers, 2 dead
    page.screenshot(path=str(ARTIFACTS / "lesson5-1280x720-live-gradflow.png"))
    page.get_by_role("button", name="Pause", exact=True).click()
    wait_idle(page)
    page.wait_for_function("() => document.querySelector('.studio-live').dataset.status === 'idle'")
    assert diagram.is_hidden() and flow.is_hidden()  # the static figures under the chart take over
    assert page.locator(".st-key-pg_network .js-plotly-plot").count() == 1
    assert exception_boxes(page) == 0
    ctx.close()
    assert not errors, errors
