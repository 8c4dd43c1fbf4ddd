"""A lesson's Train and Stop (lesson 5's Play, Pause, Step and Reset) keep their place in their row while the speed
slider beside them loads: Streamlit's frontend draws each kind of widget once its code has arrived, and a click begun
on Train must not end on the page beside it."""

from __future__ import annotations

import json
import re

import pytest

from testkit.browser import IDLE

pytestmark = pytest.mark.browser

# At every frame from the button's first paint, as the page sees it: the button's place in its row (the row of run
# buttons and speed slider), and the row's height
WATCH_BUTTON_JS = """(name) => {
  window.__buttonAt = [];
  const look = () => {
    const button = [...document.querySelectorAll('button')].find((b) => b.innerText.trim() === name);
    const row = button && button.closest('[data-testid="stHorizontalBlock"]');
    if (row) {
      const box = button.getBoundingClientRect(), rowBox = row.getBoundingClientRect();
      const place = `${Math.round(box.x - rowBox.x)},${Math.round(box.y - rowBox.y)}`;
      const at = `${place} in a row ${Math.round(rowBox.height)} px tall`;
      const seen = window.__buttonAt, last = seen[seen.length - 1];
      const slider = !!row.querySelector('[data-testid="stSlider"]');
      if (!last || last.at !== at || last.slider !== slider) seen.push({at, slider});
    }
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}"""
LATE = 1.5  # seconds the slider's code is held back: a loaded machine, or a slow classroom network


@pytest.mark.parametrize(("lesson", "button"), [("two_layer", "Train"), ("logistic", "Train"), ("optimizers", "Train"),
                                               ("playground", "Play")])
def test_the_run_buttons_stay_put_while_the_speed_slider_loads(server, browser, lesson, button):
    context = browser.new_context(viewport={"width": 1280, "height": 720})  # a new browser: nothing cached
    try:
        page = context.new_page()

        def late(route):
            page.wait_for_timeout(LATE * 1000)
            route.continue_()

        page.route(re.compile(r"/static/js/Slider\.[^/]*\.js$"), late)
        page.add_init_script(f"({WATCH_BUTTON_JS})({json.dumps(button)})")
        page.goto(f"{server}/{lesson}")
        page.wait_for_selector(IDLE, state="attached", timeout=60_000)
        page.wait_for_selector('[data-testid="stSlider"]', timeout=30_000)
        page.wait_for_timeout(300)  # a frame or two after the slider: where the row settles
        seen = page.evaluate("window.__buttonAt")
        assert seen and not seen[0]["slider"], f"the slider came before {button}: nothing was tested"
        assert seen[-1]["slider"], f"the slider never showed beside {button}: {seen}"
        assert len({s["at"] for s in seen}) == 1, f"{button} moved in its row as the page loaded: {seen}"
    finally:
        context.close()
