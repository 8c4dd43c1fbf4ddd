"""The class's answers as a phone draws them (the app's plotly.js, in headless Chromium, at a phone's width):
Plotly's toolbar keeps clear of the chart's title and of the run's mark, and guesses over decades get a bar in
each decade of a log axis."""

from __future__ import annotations

import json

import pytest

from autodiff_core.figures.answers import choice_figure, number_figure
from autodiff_core.figures.theme import recolor
from studio.assets import plotly_js_path
from studio.charts import PLOT_CONFIG

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
WIDTH = 358  # the chart's width on a 390 px phone, inside Streamlit's padding

FIGURES = {
    "choices": lambda: choice_figure(["The loss goes down", "It blows up (NaN)", "It stalls"],
                                     ["It stalls"] * 3 + ["The loss goes down"] * 24, happened=0),
    "numbers": lambda: number_figure([0.1, 0.12, 0.6, 0.25], actual=0.3),
    "numbers over decades": lambda: number_figure([0.001, 0.002, 0.01, 0.05, 0.3, 3.0, 0.04], actual=0.02),
}


def _drawn(page, fig) -> dict:
    """The boxes of the toolbar (shown, as a tap shows it), the title, the run's mark and the bars."""
    page.set_content(f"<html><body style='margin:0'><div id='p' style='width:{WIDTH}px'></div>"
                     f"<script>{plotly_js_path().read_text()}</script></body></html>")
    spec = json.loads(json.dumps(recolor(fig.to_plotly_json())))
    return page.evaluate("""([spec, config]) => Plotly.newPlot('p', spec.data, spec.layout,
        Object.assign({}, config, {displayModeBar: true})).then((gd) => {
          const box = (e) => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
          const xa = gd._fullLayout.xaxis;
          return {toolbar: box(document.querySelector('.modebar')), title: box(document.querySelector('.gtitle')),
                  marks: [...document.querySelectorAll('.annotation')].map(box), axis: xa.type,
                  bars: [...document.querySelectorAll('.bars .point path')].map(box),
                  p: [0.001, 0.01, 0.1, 1, 0.02].map((v) => xa._offset + xa.l2p(xa.d2l(v)))};
        })""", [spec, PLOT_CONFIG])


def _apart(a, b) -> bool:
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


@pytest.mark.parametrize("name", FIGURES)
def test_on_a_phone_plotly_s_toolbar_keeps_clear_of_the_answers(browser, name):
    page = browser.new_page(viewport=PHONE)
    drawn = _drawn(page, FIGURES[name]())
    assert _apart(drawn["toolbar"], drawn["title"]), drawn
    assert all(_apart(drawn["toolbar"], box) for box in drawn["marks"] + drawn["bars"]), drawn
    page.close()


def test_guesses_over_decades_get_a_bar_in_each_decade_of_a_log_axis(browser):
    page = browser.new_page(viewport=PHONE)
    drawn = _drawn(page, FIGURES["numbers over decades"]())
    assert drawn["axis"] == "log"
    left, right = min(b[0] for b in drawn["bars"]), max(b[2] for b in drawn["bars"])
    x001, x01, x1 = drawn["p"][0], drawn["p"][1], drawn["p"][3]
    assert abs(left - x001) < 2 and right > x1  # the bars span 0.001 to 3, each decade its share of the axis
    assert abs((x01 - x001) - (drawn["p"][2] - x01)) < 1
    [mark] = drawn["marks"]
    assert abs((mark[0] + mark[2]) / 2 - drawn["p"][4]) < 3  # "the run: 0.02" over its line
    page.close()
