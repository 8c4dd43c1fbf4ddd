"""A network blip in headless Chromium: the page's websocket closes mid-run (for a moment, and for 15 s, with
the network off meanwhile), Streamlit's client reconnects into the same session, and the run goes on: lesson 3
finishes with every iteration it draws, lesson 5 keeps training, and nothing says the tab closed."""

from __future__ import annotations

import time

import pytest

from autodiff_core import LogisticConfig, train_logistic
from autodiff_core.recording import every_step_then_sparser
from testkit.browser import (
    exception_boxes,
    finished_caption,
    open_page,
    painted,
    set_speed,
    wait_idle,
    wait_painted,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]

# Keep every websocket the page opens, so the test can close them; while __blockUntil is in the future, a new
# one goes to a closed port (the server is out of reach), as Streamlit's client retries.
SOCKETS_JS = """(() => {
  const Real = window.WebSocket;
  window.__sockets = []; window.__blockUntil = 0;
  function Patched(url, protocols) {
    if (Date.now() < window.__blockUntil) url = url.replace(/\\/\\/[^/]+/, '//127.0.0.1:9');
    const ws = new Real(url, protocols);
    window.__sockets.push(ws);
    return ws;
  }
  Patched.prototype = Real.prototype;
  for (const k of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) Patched[k] = Real[k];
  window.WebSocket = Patched;
})()"""


def blip(page, seconds: float) -> None:
    """The network goes for ``seconds``: open websockets close, no new one connects, no request gets through."""
    page.context.set_offline(True)
    page.evaluate("(ms) => { window.__blockUntil = Date.now() + ms; window.__sockets.forEach((s) => s.close()); }",
                  seconds * 1000)
    time.sleep(seconds)
    page.context.set_offline(False)


def train_through_a_blip(tab, button: str, outage: float, then: int, timeout: float) -> int:
    """Press ``button``, and once 40 states are painted take the network away for ``outage`` seconds; returns the
    state painted before it, once the chart has painted ``then`` more after the page reconnected."""
    tab.get_by_role("button", name=button).click()
    wait_painted(tab, 40, timeout=60.0)
    before = painted(tab)
    blip(tab, outage)
    connected(tab)
    wait_painted(tab, before + then + 1, timeout=timeout)  # it went on, and the chart follows it again
    return before


def connected(page) -> None:
    page.wait_for_function("() => document.querySelector('[data-testid=stApp]')?.dataset.testConnectionState"
                           " === 'CONNECTED'", timeout=60_000)


@pytest.fixture
def page(server, browser):
    ctx = browser.new_context(viewport={"width": 1300, "height": 900})
    ctx.add_init_script(SOCKETS_JS)
    yield ctx
    ctx.close()


@pytest.mark.parametrize("outage", [1.0, 15.0], ids=["1s", "15s"])
def test_lesson_3_finishes_through_a_blip_with_every_iteration(server, page, outage):
    last = list(train_logistic(LogisticConfig()))[-1].iteration  # where the same run ends undisturbed
    tab = open_page(page, f"{server}/logistic")
    set_speed(tab, "10" if outage > 5 else "20")  # about 40 s or 20 s: the outage falls well inside the run
    train_through_a_blip(tab, "Train", outage, then=20, timeout=60.0)
    finished_caption(tab, f"Finished at iteration {last}").wait_for(timeout=180_000)
    wait_idle(tab)
    text = tab.locator("body").inner_text()
    assert "tab closed" not in text and "Stopped" not in text and exception_boxes(tab) == 0


CURVES_JS = """() => {
  const div = document.querySelector('.studio-live .studio-plot .js-plotly-plot') ||
              document.querySelector('.studio-live .js-plotly-plot');
  return div.data.filter(t => t.mode && t.mode.includes('lines')).map(t => ({name: t.name, x: Array.from(t.x || [])}));
}"""


def recorded_steps(upto: int) -> list[int]:
    """The steps a Play records up to ``upto``: every step of the first ``REPLAY_CAP``, then every second, every
    fourth, ... (``every_step_then_sparser``), on a stand-in for the model that yields its step numbers."""
    at = [0]

    def run(steps: int, every: int):
        start = at[0]
        at[0] += steps
        return iter(range(start, start + steps + 1, every))

    out = []
    for step in every_step_then_sparser(run, total=upto + 1):
        if step > upto:
            break
        out.append(step)
    return out


@pytest.mark.parametrize("outage", [1.0, 15.0], ids=["1s", "15s"])
def test_lesson_5_trains_on_through_a_blip_and_keeps_every_state(server, page, outage):
    tab = open_page(page, f"{server}/playground")
    set_speed(tab, "20")
    before = train_through_a_blip(tab, "Play", outage, then=40, timeout=120.0)
    [loss] = [c["x"] for c in tab.evaluate(CURVES_JS) if c["name"] == "train loss"]
    # every recorded step, none lost: each step up to step 400, every second step past it (a long Play's record)
    assert loss == [x for x in recorded_steps(loss[-1]) if x >= loss[0]] and loss[-1] > before + 20
    assert tab.locator(".studio-live").get_attribute("data-status") == "running"
    tab.get_by_role("button", name="Pause").click()
    wait_idle(tab)
    text = tab.locator("body").inner_text()
    assert "tab closed" not in text and "Stopped" not in text and exception_boxes(tab) == 0
