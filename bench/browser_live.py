"""Live chart in headless Chromium against `streamlit run app.py`: painted states per second (one tab,
then three tabs training at once), time from the Train click to the first painted frame, and from the
Stop click to 'Stopped' on screen, both timed inside the page; and a run at full speed in the app against
the same run by the engine alone in this process.

``--largest``: only lesson 3 at its largest sizes (5,000 points per class, Draw every 1, 100,000
iterations at full speed): what the feed sends per poll, states painted per second, Stop click to
'Stopped' on screen, and how long after Stop the chart area has no chart on it.

``--playground``: only lesson 5 at max speed in one tab (the default network, and 6 hidden layers of 8), at
1280x720 and in a window tall enough to show the network diagram and gradient flow too: states the main
chart paints per second, diagram and gradient-flow repaints per second, and what the feed sends per poll.

``--against DIR [--rounds N]``: only the painted states per second in one tab and in three, for this checkout
and another (an older commit, say, from ``git worktree add /tmp/before HEAD~5``), a fresh server of each in
turn, N rounds; it prints both medians and their ratios.

    python bench/browser_live.py
    python bench/browser_live.py --against DIR [--rounds 3]
    python bench/browser_live.py --largest
    python bench/browser_live.py --playground
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from playwright.sync_api import sync_playwright  # noqa: E402

from autodiff_core import TwoLayerConfig, train_two_layer  # noqa: E402
from testkit.browser import (  # noqa: E402
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


FEED_BYTES_JS = """() => performance.getEntriesByType('resource').filter(e => e.name.includes('/api/live/'))
  .map(e => [e.transferSize, e.decodedBodySize, e.duration])"""

BLANK_AFTER_STOP_JS = """() => new Promise((resolve) => {
  // From the Stop click: when 'Stopped at iteration' shows, and how long the chart area then has no
  // chart on it (no Plotly plot with its SVG and a size), until the finished view is drawn and idle.
  const target = [...document.querySelectorAll('button')].find(b => b.innerText.trim() === 'Stop');
  const t0 = performance.now();
  let stopped = null, blank = 0, last = t0, blankSince = null, longest = 0;
  const visible = () => [...document.querySelectorAll('.js-plotly-plot')].some((p) => {
    const box = p.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && p.querySelector('.main-svg');
  });
  const tick = () => {
    const now = performance.now();
    if (stopped === null && document.body.innerText.includes('Stopped at iteration')) stopped = now - t0;
    const shown = visible();
    if (!shown) { blank += now - last; if (blankSince === null) blankSince = now; }
    else if (blankSince !== null) { longest = Math.max(longest, now - blankSince); blankSince = null; }
    last = now;
    const idle = document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState === 'notRunning';
    const replay = [...document.querySelectorAll('button, text, .updatemenu-item-text')]
      .some((b) => (b.textContent || '').includes('Play'));
    if ((stopped !== null && idle && shown && replay && now - t0 > 300) || now - t0 > 120000) {
      resolve({stopped, blank, longest, done: now - t0});
    } else setTimeout(tick, 20);
  };
  target.click();
  tick();
})"""


def largest() -> None:
    """Lesson 3 at its largest sizes, as issue 9 item 17 saw it freeze."""
    with streamlit_server() as url, sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser.new_context(viewport={"width": 1300, "height": 900}), f"{url}/logistic")
        set_number(page, "Points per class", 5000)
        set_number(page, "Draw every", 1)
        set_number(page, "Max iterations", 100_000)
        set_number(page, "Stop at accuracy >", 1.0)
        set_speed(page, "max")
        page.get_by_role("button", name="Train").click()
        page.wait_for_function(PAINTED_20, timeout=120_000)
        time.sleep(1)
        rate, _, blank = painted_rate(sample_live(page, seconds=5)[0])
        polls = page.evaluate(FEED_BYTES_JS)
        after = page.evaluate(BLANK_AFTER_STOP_JS)
        browser.close()
    sent = sorted(t for t, _, _ in polls[1:]) or [0]
    body = sorted(b for _, b, _ in polls[1:]) or [0]
    print(f"lesson 3, 5,000 points per class, Draw every 1, full speed: {len(polls)} feed polls in the run")
    print(f"  per poll over the wire: median {sent[len(sent) // 2] / 1e3:.1f} KB, largest {sent[-1] / 1e3:.1f} KB; "
          f"decoded median {body[len(body) // 2] / 1e3:.1f} KB (first poll {polls[0][1] / 1e3:.1f} KB)")
    print(f"  painted {rate:.1f} states/s while running ({blank} blank samples)")
    stopped = "never" if after["stopped"] is None else f"{after['stopped']:.0f} ms"
    print(f"  Stop click to 'Stopped at iteration' on screen: {stopped}")
    print(f"  after Stop, chart area without a chart: {after['blank'] / 1e3:.2f} s in all "
          f"(longest stretch {after['longest'] / 1e3:.2f} s); finished view drawn and idle {after['done'] / 1e3:.1f} s "
          "after the click")


DIAGRAM_PAINTS_JS = """() => [Number(document.querySelector('.studio-live')?.dataset.diagramPaints || 0),
  Number(document.querySelector('.studio-live')?.dataset.flowPaints || 0)]"""


def playground(seconds: float = 5.0) -> None:
    """Lesson 5, one tab, max speed: the main chart's painted states per second with the diagram live, at a
    laptop's 1280x720 (the diagram and gradient flow below the fold: they paint only when scrolled into
    view) and at 1280x3000, where the chart, the diagram and the gradient flow are all on screen."""
    rows = []
    with streamlit_server() as url, sync_playwright() as p:
        browser = launch(p)
        for height in (720, 3000):
            page = open_page(browser.new_context(viewport={"width": 1280, "height": height}), f"{url}/playground")
            set_speed(page, "max")
            for layers in (2, 6):
                set_number(page, "Hidden layers", layers)
                rows.append((height, layers, *playground_run(page, seconds)))
            page.context.close()
        browser.close()
    for height, layers, rate, blank, diagram, flow, n, sent, body in rows:
        print(f"lesson 5, 1280x{height}, {layers} hidden layers of 8, max speed, one tab: main chart {rate:5.1f} "
              f"painted states/s ({blank} blank samples), diagram {diagram:4.1f}/s, gradient flow {flow:4.1f}/s; "
              f"{n} feed polls, median {sent / 1e3:.1f} KB over the wire ({body / 1e3:.1f} KB decoded)")


def playground_run(page, seconds: float) -> tuple:
    page.evaluate("() => performance.clearResourceTimings()")
    page.get_by_role("button", name="Play", exact=True).click()
    page.wait_for_function(PAINTED_20, timeout=120_000)
    time.sleep(1)
    before = page.evaluate(DIAGRAM_PAINTS_JS)
    samples = sample_live(page, seconds=seconds)[0]
    after = page.evaluate(DIAGRAM_PAINTS_JS)
    diagram, flow = ((a - b) / seconds for a, b in zip(after, before, strict=True))
    rate, _, blank = painted_rate(samples)
    polls = page.evaluate(FEED_BYTES_JS)
    page.get_by_role("button", name="Pause", exact=True).click()
    wait_idle(page)
    page.get_by_role("button", name="Reset", exact=True).click()
    wait_idle(page)
    sent = sorted(t for t, _, _ in polls[1:]) or [0]
    body = sorted(b for _, b, _ in polls[1:]) or [0]
    return rate, blank, diagram, flow, len(polls), sent[len(sent) // 2], body[len(body) // 2]


def painting(browser, url: str, pages=None) -> tuple[float, list[float], list]:
    """Lesson 2 at 100 steps a second: painted states per second in one tab, then in each of three tabs
    training at once (the tabs are opened here unless given)."""
    if pages is None:
        pages = [open_page(browser.new_context(viewport={"width": 1300, "height": 900}), f"{url}/two_layer")
                 for _ in range(3)]
        for page in pages:
            set_number(page, "Steps", 1000)
            set_speed(page, "100")
    pages[0].evaluate(FIRST_FRAME_JS)
    time.sleep(1)
    one, _, blank1 = painted_rate(sample_live(pages[0], seconds=4)[0])
    stop(pages[0])
    for page in pages:
        wait_idle(page)
        page.get_by_role("button", name="Train").click()
    time.sleep(1)
    three = [painted_rate(samples) for samples in sample_live(*pages, seconds=4)]
    for page in pages:
        stop(page)
    for page in pages:
        wait_idle(page)
    print(f"  one tab: {one:5.1f} painted states/s ({blank1} blank samples); three tabs: "
          + ", ".join(f"{rate:5.1f}" for rate, _, _ in three) + f" per tab; load {os.getloadavg()[0]:.1f}",
          flush=True)
    return one, [rate for rate, _, _ in three], pages


def stop(page) -> None:
    """Stop the page's run, unless it has ended already."""
    button = page.get_by_role("button", name="Stop")
    if button.is_enabled():
        button.click()


def against(other: Path, rounds: int) -> None:
    """Painted states per second, this checkout's server and ``other``'s in turn, ``rounds`` times."""
    roots = {"this checkout": ROOT, str(other): other.resolve()}
    rows = {name: [] for name in roots}
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with sync_playwright() as p:
        browser = launch(p)
        for i in range(rounds):
            for name, root in roots.items():
                print(f"{name}, round {i + 1}:")
                with streamlit_server(root=root) as url:
                    one, three, pages = painting(browser, url)
                    for page in pages:
                        page.context.close()
                rows[name].append((one, min(three), statistics.mean(three)))
        browser.close()
    medians = {name: [statistics.median(col) for col in zip(*r, strict=True)] for name, r in rows.items()}
    for name, (one, slowest, mean) in medians.items():
        print(f"{name}, median of {rounds}: one tab {one:5.1f} painted states/s; three tabs: slowest tab "
              f"{slowest:5.1f}, mean per tab {mean:5.1f}")
    here, there = medians.values()
    print("this checkout / other: " + ", ".join(f"{label} {a / b:.2f}" for label, a, b in
                                                zip(("one tab", "slowest of three", "mean of three"), here, there,
                                                    strict=True) if b))
    print(f"load average after: {os.getloadavg()[0]:.1f}")


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
        one, three, _ = painting(browser, url, pages)
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
    print(f"one tab:    {one:5.1f} painted states/s")
    for i, rate in enumerate(three):
        print(f"tab {i + 1} of 3: {rate:5.1f} painted states/s")
    print(f"three tabs together: {sum(three):5.1f} painted states/s")
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
    done = page.get_by_text(re.compile(f"Finished: all {FULL_STEPS:,} steps .* in [0-9.]+ s"))
    done.wait_for(timeout=120_000)
    wait_idle(page)
    return float(re.search(r"in ([0-9.]+) s", done.first.inner_text()).group(1))


def engine_seconds() -> float:
    """The same run as the page's, by the engine alone, with the server's one torch thread."""
    import torch

    torch.set_num_threads(1)
    start = time.perf_counter()
    for _ in train_two_layer(TwoLayerConfig(steps=FULL_STEPS)):
        pass
    return time.perf_counter() - start


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--largest", action="store_true")
    parser.add_argument("--playground", action="store_true")
    parser.add_argument("--against", type=Path, help="another checkout to alternate with (painting only)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.against:
        against(args.against, args.rounds)
    elif args.largest:
        largest()
    elif args.playground:
        playground()
    else:
        main()
