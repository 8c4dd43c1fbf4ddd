"""Live chart in headless Chromium against `streamlit run app.py`: painted states per second (one tab,
then three tabs training at once), time from the Train click to the first painted frame, and from the
Stop click to 'Stopped' on screen, both timed inside the page.

    python bench/browser_live.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from playwright.sync_api import sync_playwright  # noqa: E402

from tests.browser import (  # noqa: E402
    launch,
    open_page,
    painted_rate,
    sample_live,
    set_number,
    set_speed,
    streamlit_server,
    wait_idle,
)

CLICK_TO_TEXT_JS = """([button, text]) => new Promise((resolve) => {
  const target = [...document.querySelectorAll('button')].find(b => b.innerText.trim() === button);
  let clicked = 0;
  const done = () => resolve(performance.now() - clicked);
  const observer = new MutationObserver(() => {
    if (clicked && document.body.innerText.includes(text)) { observer.disconnect(); done(); }
  });
  observer.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
  clicked = performance.now();
  target.click();
})"""

PAINTED_20 = "() => Number(document.querySelector('.studio-live')?.dataset.painted) >= 20"

FIRST_FRAME_JS = """() => new Promise((resolve) => {
  const root = document.querySelector('.studio-live');
  const before = root.dataset.run;
  const target = [...document.querySelectorAll('button')].find(b => b.innerText.trim() === 'Train');
  const t0 = performance.now();
  target.click();
  const poll = () => {
    const r = document.querySelector('.studio-live');
    if (r && r.dataset.run !== before && Number(r.dataset.painted) >= 0) resolve(performance.now() - t0);
    else requestAnimationFrame(poll);
  };
  poll();
})"""


def main() -> None:
    with streamlit_server() as url, sync_playwright() as p:
        browser = launch(p)
        contexts = [browser.new_context(viewport={"width": 1300, "height": 900}) for _ in range(3)]
        pages = [open_page(c, f"{url}/two_layer") for c in contexts]
        for page in pages:
            set_number(page, "Steps", 1000)
            set_speed(page, "100")
        first = []
        for _ in range(3):
            first.append(pages[0].evaluate(FIRST_FRAME_JS))
            pages[0].get_by_role("button", name="Stop").click()
            wait_idle(pages[0])
        pages[0].evaluate(FIRST_FRAME_JS)
        time.sleep(1)
        one, _, blank1 = painted_rate(sample_live(pages[0], seconds=4)[0])
        pages[0].get_by_role("button", name="Stop").click()
        for page in pages:
            wait_idle(page)
            page.get_by_role("button", name="Train").click()
        time.sleep(1)
        three = [painted_rate(samples) for samples in sample_live(*pages, seconds=4)]
        for page in pages:
            page.get_by_role("button", name="Stop").click()
        logistic = open_page(contexts[0], f"{url}/logistic")
        set_speed(logistic, "10")
        stops = []
        for _ in range(3):
            logistic.get_by_role("button", name="Train").click()
            logistic.wait_for_function(PAINTED_20, timeout=30_000)
            stops.append(logistic.evaluate(CLICK_TO_TEXT_JS, ["Stop", "Stopped at iteration"]))
            wait_idle(logistic)
        browser.close()
    print(f"one tab:    {one:5.1f} painted states/s ({blank1} blank samples)")
    for i, (rate, _, blank) in enumerate(three):
        print(f"tab {i + 1} of 3: {rate:5.1f} painted states/s ({blank} blank samples)")
    print(f"three tabs together: {sum(r for r, _, _ in three):5.1f} painted states/s")
    print(f"Train click to first painted frame: {', '.join(f'{t:.0f}' for t in first)} ms")
    print(f"Stop click to 'Stopped' on screen:  {', '.join(f'{t:.0f}' for t in stops)} ms")


if __name__ == "__main__":
    main()
