"""Lesson 6 on a 390x844 phone: a wrong ReLU's Jacobians and curves are drawn with every title whole and apart.

In one figure of two panels, the two Jacobian titles printed on top of each other ("analytical (yo…numerical…"),
and the curve's right title was cut at the chart's edge ("backward with grad_outpu")."""

from __future__ import annotations

import pytest

from autodiff_core.grading.challenges import CHALLENGES
from testkit.browser import ARTIFACTS, exception_boxes, open_page, wait_idle

pytestmark = pytest.mark.browser

RELU = CHALLENGES["relu"].solution
WRONG_RELU = RELU.replace("grad_input = grad_output.clone()", "grad_input = torch.ones_like(input)")
CHARTS = '[class*="st-key-wf_jacobians"] .js-plotly-plot, [class*="st-key-wf_curve"] .js-plotly-plot'

# Every title each chart draws (its own title, and subplot titles, which Plotly draws as annotations), with its
# screen box and the box of the chart's SVG, which clips what runs past it.
TITLES_JS = """(selector) => [...document.querySelectorAll(selector)].map((gd) => {
  const svg = gd.querySelector('.main-svg').getBoundingClientRect();
  const titles = [...gd.querySelectorAll('.g-gtitle text, .annotation-text')].filter((t) => t.textContent.trim())
    .map((t) => { const r = t.getBoundingClientRect();
      return {text: t.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom}; });
  return {chart: gd.closest('[class*="st-key-"]').className.match(/st-key-(\\S+)/)[1],
          svg: {left: svg.left, right: svg.right}, titles};
})"""


def test_on_a_phone_every_title_of_the_verdict_s_charts_is_whole_and_apart(server, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = open_page(context, f"{server}/write_function")
    page.get_by_text("Plain text box", exact=True).click()
    wait_idle(page)
    page.get_by_label("Your code").fill(WRONG_RELU)
    page.get_by_role("button", name="Check").click()
    page.locator('[data-testid="stAlert"]').filter(has_text="gradcheck failed").first.wait_for(timeout=60_000)
    wait_idle(page)
    page.wait_for_function(f"() => document.querySelectorAll('{CHARTS}').length >= 2 && [...document."
                           f"querySelectorAll('{CHARTS}')].every((gd) => gd._fullLayout)", timeout=30_000)
    page.wait_for_timeout(300)  # Plotly has laid the titles out
    charts = page.evaluate(TITLES_JS, CHARTS)
    titles = [t for c in charts for t in c["titles"]]
    assert {"analytical (your backward)", "numerical (finite differences)"} <= {t["text"] for t in titles}
    assert any(t["text"].startswith("backward with grad_output") for t in titles)
    for c in charts:
        for t in c["titles"]:  # nothing runs past the chart's edge, where the SVG cuts it off
            assert c["svg"]["left"] - 1 <= t["left"] and t["right"] <= c["svg"]["right"] + 1, (c["chart"], t)
    meet = [(a["text"], b["text"]) for i, a in enumerate(titles) for b in titles[i + 1:]
            if min(a["right"], b["right"]) - max(a["left"], b["left"]) > 1
            and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 1]
    assert not meet, meet
    page.locator(CHARTS).first.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "lesson6-phone-jacobians.png"))
    assert exception_boxes(page) == 0
    context.close()
