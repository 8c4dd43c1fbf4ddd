"""Start-up as a teacher meets it: ``streamlit run app.py``, then the first browser visit.

For each of ``--runs`` fresh servers it prints:

* health: seconds from starting ``streamlit run app.py`` until ``/_stcore/health`` answers;
* first page: seconds from then until the home page has finished its first run in headless Chromium
  (the browser is started beforehand and not counted);
* second visit: the same for another tab, once the first is done;
* lesson: a first visit to lesson 2 in a third tab (a lesson's first run also loads its own modules).

Targets on a 2-core machine: health <= 2 s, first page <= 3 s after that.

``--against DIR`` alternates each run with one of another checkout (an older commit, say, from
``git worktree add /tmp/before HEAD~5``), so that both see the same load, and prints both medians.

    python bench/startup.py [--runs 3] [--against DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from playwright.sync_api import sync_playwright  # noqa: E402

from testkit.browser import ARTIFACTS, free_port, launch, wait_idle  # noqa: E402

HOME_READY = "Open lesson 1"  # the home page's last link: its script run has drawn the page


def wait_health(url: str, proc: subprocess.Popen, t0: float) -> float:
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return time.perf_counter() - t0
        except OSError:
            pass
        if proc.poll() is not None or time.perf_counter() - t0 > 60:
            raise RuntimeError("streamlit did not start; see artifacts/startup-server.log")
        time.sleep(0.02)


def visit(context, url: str, text: str) -> float:
    t0 = time.perf_counter()
    page = context.new_page()
    page.goto(url)
    page.get_by_text(text).first.wait_for(timeout=60_000)
    wait_idle(page)
    return time.perf_counter() - t0 - 0.15  # wait_idle's pause for a run to begin


def one_run(browser, root: Path) -> tuple[float, float, float, float]:
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
            health = wait_health(url, proc, t0)
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            first = visit(context, url, HOME_READY)
            second = visit(context, url, HOME_READY)
            lesson = visit(context, f"{url}/two_layer", "Train")
            context.close()
        finally:
            proc.terminate()
            proc.wait(10)
    return health, first, second, lesson


def report(name: str, rows: list[tuple[float, ...]]) -> None:
    med = [statistics.median(col) for col in zip(*rows, strict=True)]
    print(f"{name}, median of {len(rows)}: health {med[0]:.2f} s (target <= 2)   first page {med[1]:.2f} s after "
          f"health (target <= 3)   second visit {med[2]:.2f} s   lesson 2 first visit {med[3]:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout to alternate with")
    args = parser.parse_args()
    roots = {"this checkout": ROOT} | ({f"{args.against}": args.against.resolve()} if args.against else {})
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    rows = {name: [] for name in roots}
    with sync_playwright() as p:
        browser = launch(p)
        for i in range(args.runs):
            for name, root in roots.items():
                rows[name].append(one_run(browser, root))
                r = rows[name][-1]
                print(f"{name}, run {i + 1}: health {r[0]:.2f} s   first page {r[1]:.2f} s   "
                      f"second visit {r[2]:.2f} s   lesson 2 first visit {r[3]:.2f} s", flush=True)
        browser.close()
    for name in roots:
        report(name, rows[name])
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
