"""Lesson 5 in headless Chromium at 1280x720: click a link of the network diagram, type its weight, and the
model, the diagram and the value box follow (TF Playground's click-to-edit)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from testkit.browser import ARTIFACTS, exception_boxes, open_page, set_number, wait_idle

pytestmark = pytest.mark.browser
DIAGRAM = ".st-key-pg_network .js-plotly-plot"

# Where on screen the diagram draws the point whose customdata is ``which``, and its hover text.
POINT_JS = """([sel, which]) => {
  const div = document.querySelector(sel), l = div._fullLayout;
  const box = div.querySelector('.nsewdrag').getBoundingClientRect();
  for (const t of div.data) {
    const i = (t.customdata || []).findIndex((d) => JSON.stringify(d) === JSON.stringify(which));
    if (i >= 0) return {x: box.left + l.xaxis.d2p(t.x[i]), y: box.top + l.yaxis.d2p(t.y[i]), text: t.text[i]};
  }
  return null;
}"""


def point(page, which):
    page.wait_for_function("(sel) => document.querySelector(sel)?._fullLayout", arg=DIAGRAM)
    return page.evaluate(POINT_JS, [DIAGRAM, which])


def test_click_a_link_then_type_its_weight(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = open_page(context, f"{server}/playground?pg_hidden=4,2")
    page.get_by_role("button", name="Step", exact=True).click()
    wait_idle(page)
    page.locator(DIAGRAM).scroll_into_view_if_needed()
    link = point(page, [1, 1, 3])  # layer 1 -> layer 2, from neuron 4 to neuron 2
    page.mouse.move(link["x"], link["y"])
    page.mouse.click(link["x"], link["y"])
    wait_idle(page)
    for name, shown in (("Link", "layer 1 → layer 2"), ("From", "neuron 4"), ("To", "neuron 2")):
        expect(page.get_by_role("combobox", name=name, exact=True)).to_have_value(shown)
    box = page.get_by_label("Weight", exact=True)
    assert f"weight {float(box.input_value()):+.3f}" == link["text"]  # the box shows the clicked link
    set_number(page, "Weight", 2.5)
    page.locator(DIAGRAM).scroll_into_view_if_needed()
    page.wait_for_function("([sel, which]) => { const d = document.querySelector(sel);"
                           " return d && d.data.some((t) => (t.text || []).includes('weight +2.500')); }",
                           arg=[DIAGRAM, [1, 1, 3]])
    assert point(page, [1, 1, 3])["text"] == "weight +2.500"
    bias = point(page, [2, 0, -1])  # the output's bias square
    page.mouse.click(bias["x"], bias["y"])
    wait_idle(page)
    expect(page.get_by_label("Bias", exact=True)).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "playground-weight-editor-1280x720.png"))
    assert exception_boxes(page) == 0
    context.close()
