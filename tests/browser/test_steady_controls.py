"""A lesson's Train and Stop stay where they first show while the rest of the page loads: Streamlit's frontend draws
each kind of widget once its code has arrived, and a click begun on Train must not end on the page beside it."""

from __future__ import annotations

import re

import pytest

from testkit.browser import IDLE

pytestmark = pytest.mark.browser

# Train's place on screen at every frame from its first paint, as the page sees it
WATCH_TRAIN_JS = """(() => {
  window.__trainAt = [];
  const look = () => {
    const train = [...document.querySelectorAll('button')].find((b) => b.innerText.trim() === 'Train');
    const slider = document.querySelector('[data-testid="stSlider"]');
    if (train) {
      const box = train.getBoundingClientRect();
      const at = `${Math.round(box.x)},${Math.round(box.y)}`;
      const seen = window.__trainAt;
      if (!seen.length || seen[seen.length - 1].at !== at) seen.push({at, slider: !!slider});
    }
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})()"""
LATE = 1.5  # seconds the slider's code is held back: a loaded machine, or a slow classroom network


@pytest.mark.parametrize("lesson", ["two_layer", "logistic", "optimizers"])
def test_train_stays_put_while_the_speed_slider_loads(server, browser, lesson):
    context = browser.new_context(viewport={"width": 1280, "height": 720})  # a new browser: nothing cached
    page = context.new_page()

    def late(route):
        page.wait_for_timeout(LATE * 1000)
        route.continue_()

    page.route(re.compile(r"/static/js/Slider\.[^/]*\.js$"), late)
    page.add_init_script(WATCH_TRAIN_JS)
    page.goto(f"{server}/{lesson}")
    page.wait_for_selector(IDLE, state="attached", timeout=60_000)
    page.wait_for_selector('[data-testid="stSlider"]', timeout=30_000)
    page.wait_for_timeout(300)  # a frame or two after the slider: where the row settles
    seen = page.evaluate("window.__trainAt")
    assert seen and not seen[0]["slider"], "the slider came before Train: nothing was tested"
    assert len({s["at"] for s in seen}) == 1, f"Train moved as the page loaded: {seen}"
    context.close()
