"""A lesson's Train and Stop (lesson 5's Play, Pause, Step and Reset) stay where they first show while the rest of
the page loads: Streamlit's frontend draws each kind of widget once its code has arrived, and a click begun on Train
must not end on the page beside it."""

from __future__ import annotations

import json
import re

import pytest

from testkit.browser import IDLE

pytestmark = pytest.mark.browser

# The button's place on screen at every frame from its first paint, as the page sees it
WATCH_BUTTON_JS = """(name) => {
  window.__buttonAt = [];
  const look = () => {
    const button = [...document.querySelectorAll('button')].find((b) => b.innerText.trim() === name);
    const slider = document.querySelector('[data-testid="stSlider"]');
    if (button) {
      const box = button.getBoundingClientRect();
      const at = `${Math.round(box.x)},${Math.round(box.y)}`;
      const seen = window.__buttonAt;
      if (!seen.length || seen[seen.length - 1].at !== at) seen.push({at, slider: !!slider});
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
    assert len({s["at"] for s in seen}) == 1, f"{button} moved as the page loaded: {seen}"
    context.close()
