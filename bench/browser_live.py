"""Live chart in headless Chromium against `streamlit run app.py`: painted states per second (one tab,
then three tabs training at once), time from the Train click to the first painted frame, and from the
Stop click to 'Stopped' on screen, both timed inside the page; and a run at full speed in the app against
the same run by the engine alone in this process.

    python bench/browser_live.py
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from playwright.sync_api import sync_playwright  # noqa: E402

from autodiff_core import TwoLayerConfig, train_two_layer  # noqa: E402
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

FULL_STEPS = 3000  # about 3 s at full speed: the status line's 0.1 s is then a few per cent

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
        full = []
        page = pages[1]
        set_number(page, "Steps", FULL_STEPS)
        set_speed(page, "max")
        for _ in range(2):  # side by side: the app with its chart on screen, the app alone, the engine alone
            full.append((app_seconds(page, watch=True), app_seconds(page, watch=False), engine_seconds()))
        browser.close()
    print(f"one tab:    {one:5.1f} painted states/s ({blank1} blank samples)")
    for i, (rate, _, blank) in enumerate(three):
        print(f"tab {i + 1} of 3: {rate:5.1f} painted states/s ({blank} blank samples)")
    print(f"three tabs together: {sum(r for r, _, _ in three):5.1f} painted states/s")
    print(f"Train click to first painted frame: {', '.join(f'{t:.0f}' for t in first)} ms")
    print(f"Stop click to 'Stopped' on screen:  {', '.join(f'{t:.0f}' for t in stops)} ms")
    for watched, unwatched, engine in full:
        print(f"{FULL_STEPS} steps at full speed: engine alone {engine:.2f} s; app with its chart painting on "
              f"this machine {watched:.1f} s ({watched / engine:.2f}x), app with the page left "
              f"{unwatched:.1f} s ({unwatched / engine:.2f}x)")


def app_seconds(page, *, watch: bool) -> float:
    """A run at full speed, timed by the server (the status line). ``watch=False`` leaves the page for
    Home while it trains, so the browser paints nothing and only the server works."""
    before = page.evaluate("() => document.querySelector('.studio-live').dataset.run")
    page.get_by_role("button", name="Train").click()
    wait_idle(page)
    if not watch:
        page.get_by_role("link", name="Home").click()
        wait_idle(page)
        time.sleep(FULL_STEPS * 4e-3)  # a few times what the engine needs
        page.get_by_role("link", name=re.compile("Two-layer")).click()
        wait_idle(page)
    page.wait_for_function("(before) => document.querySelector('.studio-live')?.dataset.run !== before", arg=before)
    done = page.get_by_text(re.compile(f"Finished: step {FULL_STEPS - 1:,} in"))
    done.wait_for(timeout=120_000)
    wait_idle(page)
    return float(re.search(r"in ([0-9.]+) s", done.inner_text()).group(1))


def engine_seconds() -> float:
    """The same run as the page's, by the engine alone, with the server's one torch thread."""
    import torch

    torch.set_num_threads(1)
    start = time.perf_counter()
    for _ in train_two_layer(TwoLayerConfig(steps=FULL_STEPS)):
        pass
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
