"""Start-up as a teacher meets it: ``streamlit run app.py``, then the first browser visits.

For each of ``--runs`` fresh servers it prints:

* health: seconds from starting ``streamlit run app.py`` until ``/_stcore/health`` answers;
* first page: seconds from then until the home page has finished its first run in headless Chromium
  (the browser is started beforehand and not counted): the health answer to the page's request, measured here,
  plus the request to the end of the script run that drew the page, timed inside the page; and ``read``: when
  the first readable text (a line of at least 20 px by 8 px, on screen and not covered) showed, timed inside
  the page from its request; and ``from start``: health plus first page, the server's start to the first page
  ready (what a teacher who opens the page as the server starts meets, at least);
* second visit: the same for another tab, once the first is done;
* lesson: a first visit to lesson 2 in a third tab (a lesson's first run also loads its own modules), then
  lesson 4 and lesson 5, each in a tab of its own;
* tabs: the slowest of lesson 4's tab switches, click to the tab's content painted (timed inside the page), each
  from an idle page;
* Step: lesson 5's Step, click to the script's run finished, median of three.

Targets on a quiet 2-core machine: something readable <= 1 s after any request; the first page <= 2 s after
health; any later page <= 1 s; Step and a tab switch <= 0.5 s.

Each checkout is compiled first, as the README's run command does (``--no-compile``: as it is).
``--open-at-start`` asks for the first page as soon as the server listens (as the browser that ``streamlit run``
opens does), not once health answers; the health column is then the time it began to listen.
``--against DIR`` alternates each run with one of another checkout (an older commit, say, from
``git worktree add /tmp/before HEAD~5``), so that both see the same load, and prints both medians.

    python bench/startup.py [--runs 3] [--against DIR]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from playwright.sync_api import sync_playwright  # noqa: E402

from studio.serve import healthy  # noqa: E402
from testkit.browser import ARTIFACTS, compile_app, free_port, launch, wait_idle  # noqa: E402

HOME_READY = "Open lesson 1"  # the home page's last link: its script run has drawn the page
COLUMNS = ("health", "first page", "read", "from start", "second visit", "read", "lesson 2", "read", "lesson 4",
           "lesson 5", "tabs", "Step")

# Record when the first readable text is on screen, from the page's request (performance.now()'s origin).
READABLE_INIT_JS = """(() => {
  const readable = () => {
    if (!document.body) return false;
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || n.textContent.trim().length < 3) continue;
      const style = getComputedStyle(el);
      if (style.visibility !== 'visible' || Number(style.opacity) < 0.3) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      const box = range.getBoundingClientRect();
      const off = box.bottom < 0 || box.top > innerHeight || box.left > innerWidth;
      if (box.width < 20 || box.height < 8 || off) continue;
      const hit = document.elementFromPoint(box.left + 4, box.top + box.height / 2);
      if (hit && (el.contains(hit) || hit.contains(el))) return true;
    }
    return false;
  };
  const tick = () => {
    if (readable()) window.__studioReadable = performance.now();
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  // and when the script's runs end: data-test-script-state turning to notRunning, on the page's own clock
  window.__studioIdle = [];
  let last = null;
  new MutationObserver(() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const state = app && app.getAttribute('data-test-script-state');
    if (state === 'notRunning' && last === 'running') window.__studioIdle.push(performance.now());
    if (state) last = state;
  }).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-test-script-state'],
                        childList: true});
})();"""

TAB_SWITCH_JS = """(name) => new Promise((resolve) => {
  const tab = [...document.querySelectorAll('[role=tab]')].find(t => t.innerText.trim() === name);
  const t0 = performance.now();
  tab.click();
  const shown = () => {
    const panel = document.getElementById(tab.getAttribute('aria-controls'));
    return panel && panel.offsetHeight > 0 && panel.innerText.trim().length > 0;
  };
  // the tab's content laid out, then one more frame: it has been painted
  const tick = () => shown() ? requestAnimationFrame(() => resolve(performance.now() - t0))
                             : requestAnimationFrame(tick);
  tick();
})"""


def listening(port: int) -> bool:
    """Whether the server accepts connections (when ``streamlit run`` opens a browser)."""
    socket.create_connection(("127.0.0.1", port), timeout=1).close()
    return True


def wait_until(ready: Callable[[], bool], proc: subprocess.Popen, t0: float) -> float:
    """Seconds from ``t0`` until ``ready()`` (an OSError counts as not yet)."""
    while True:
        try:
            if ready():
                return time.perf_counter() - t0
        except OSError:
            pass
        if proc.poll() is not None or time.perf_counter() - t0 > 60:
            raise RuntimeError("streamlit did not start; see artifacts/startup-server.log")
        time.sleep(0.02)


def visit(context, url: str, text: str, since: float | None = None) -> tuple[float, float]:
    """Seconds from the page's request until its script run had ended with ``text`` on the page; seconds until
    the first readable text showed. Both are timed inside the page, from its request (``performance.now()``):
    opening the tab, and the test's own polling, are not the page's time. With ``since`` (a ``perf_counter()``),
    the time from then to the request is added to both."""
    page = context.new_page()
    page.add_init_script(READABLE_INIT_JS)
    before = 0.0 if since is None else time.perf_counter() - since
    page.goto(url, wait_until="commit")
    page.get_by_text(text).first.wait_for(timeout=60_000)
    wait_idle(page)
    # the run that drew ``text`` is the last one ended by now (wait_idle waits for a run to begin, then its end)
    ready = page.evaluate("() => window.__studioIdle[window.__studioIdle.length - 1]") / 1e3
    page.wait_for_function("() => window.__studioReadable !== undefined", timeout=60_000)
    return before + ready, before + page.evaluate("() => window.__studioReadable") / 1e3


def tab_switches(context, url: str) -> float:
    """Lesson 4: each tab in turn, then back to the first; the slowest switch. Lesson 4 draws only its open tab,
    so a switch reruns the page: each click comes once the page is idle, as a student's who has read the tab."""
    page = context.pages[-1]
    names = [t.strip() for t in page.get_by_role("tab").all_inner_texts()]
    took = []
    for name in [*names[1:], names[0]]:
        wait_idle(page)
        took.append(page.evaluate(TAB_SWITCH_JS, name) / 1e3)
    return max(took)


CLICK_JS = "(button) => { const t0 = performance.now(); button.click(); return t0; }"


def steps(context, url: str, n: int = 3) -> float:
    """Lesson 5: Step, click to the end of the script run it started, timed inside the page; the median of
    ``n``."""
    page = context.pages[-1]
    took = []
    for _ in range(n):
        wait_idle(page)  # a click while a run redraws the page can be lost (once: no run came in 60 s)
        ended = page.evaluate("() => window.__studioIdle.length")
        t0 = page.get_by_role("button", name="Step", exact=True).evaluate(CLICK_JS)
        page.wait_for_function(f"() => window.__studioIdle.length > {ended}", timeout=60_000)
        wait_idle(page)
        took.append(page.evaluate("() => window.__studioIdle[window.__studioIdle.length - 1]") / 1e3 - t0 / 1e3)
    return statistics.median(took)


def one_run(browser, root: Path, open_at_start: bool = False) -> tuple[float, ...]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / "startup-server.log", "w") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true"],
            cwd=root, stdout=log, stderr=subprocess.STDOUT, env=os.environ | {"PYTHONUNBUFFERED": "1"})
        try:
            # with open_at_start, the page is asked for as soon as the server listens, before health
            health = wait_until(partial(listening, port) if open_at_start else partial(healthy, url), proc, t0)
            answered = time.perf_counter()
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            first = visit(context, url, HOME_READY, since=answered)
            second = visit(context, url, HOME_READY)
            lesson = visit(context, f"{url}/two_layer", "Train")
            xray = visit(context, f"{url}/xray", "ctx inspector")
            tabs = tab_switches(context, url)
            playground = visit(context, f"{url}/playground", "Reset")
            step = steps(context, url)
            context.close()
        finally:
            proc.terminate()
            proc.wait(10)
    return health, *first, health + first[0], *second, *lesson, xray[0], playground[0], tabs, step


def line(row) -> str:
    return "   ".join(f"{name} {value:.2f}" for name, value in zip(COLUMNS, row, strict=True))


def report(name: str, rows: list[tuple[float, ...]]) -> None:
    med = [statistics.median(col) for col in zip(*rows, strict=True)]
    print(f"{name}, median of {len(rows)} (s): {line(med)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout to alternate with")
    parser.add_argument("--open-at-start", action="store_true",
                        help="ask for the first page as soon as the server listens, as the browser that streamlit run "
                             "opens does (health is then the time it began to listen)")
    parser.add_argument("--no-compile", action="store_true",
                        help="start from the checkouts as they are, without the run command's compileall")
    args = parser.parse_args()
    roots = {"this checkout": ROOT} | ({f"{args.against}": args.against.resolve()} if args.against else {})
    for root in roots.values():
        if not args.no_compile:
            compile_app(root)  # as the README's run command does (this machine does not write bytecode itself)
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    rows = {name: [] for name in roots}
    with sync_playwright() as p:
        browser = launch(p)
        for i in range(args.runs):
            for name, root in roots.items():
                rows[name].append(one_run(browser, root, args.open_at_start))
                r = rows[name][-1]
                print(f"{name}, run {i + 1} (s): {line(r)}   load {os.getloadavg()[0]:.1f}", flush=True)
        browser.close()
    for name in roots:
        report(name, rows[name])
    if args.against:
        here, there = ([statistics.median(col) for col in zip(*rows[k], strict=True)] for k in roots)
        print("this checkout / other, medians: " + "   ".join(
            f"{name} {a / b:.2f}" for name, a, b in zip(COLUMNS, here, there, strict=True) if b > 0))
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
