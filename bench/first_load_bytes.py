"""What a student's browser downloads the first time it opens the app: the bytes a classroom's Wi-Fi carries.

For each checkout it starts ``streamlit run app.py`` and opens, in headless Chromium with an empty cache (a new
browser context), the home page, then lesson 2 and lesson 5 in the same context (their own charts' code comes on
top): first as the teacher, the server's first visitor, then as a student, in another new context. It prints, per
page, the bytes that came over the wire (``transferSize``, headers included) against the bytes the browser used
(``decodedBodySize``), and for ``--class-size`` students the student's total.

``--against DIR`` measures another checkout too (an older commit, say, from ``git worktree add /tmp/before HEAD~1``)
and prints the ratio of the two totals.

    python bench/first_load_bytes.py [--against DIR] [--class-size 30]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from playwright.sync_api import sync_playwright  # noqa: E402

from testkit.browser import launch, streamlit_server, wait_idle  # noqa: E402

PAGES = (("home", "", "Open lesson 1"), ("lesson 2", "/two_layer", "Train"), ("lesson 5", "/playground", "Reset"))
SIZES = """() => [performance.getEntriesByType('navigation'), performance.getEntriesByType('resource')].flat()
  .reduce(([wire, used], e) => [wire + (e.transferSize || 0), used + (e.decodedBodySize || 0)], [0, 0])"""


def measure(browser, root: Path) -> list[tuple[str, str, int, int]]:
    with streamlit_server(root=root) as url:
        rows = []
        for who in ("teacher", "student"):
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            for name, path, text in PAGES:
                page = context.new_page()
                page.goto(url + path)
                page.get_by_text(text).first.wait_for(timeout=60_000)
                wait_idle(page)
                page.wait_for_timeout(1000)  # the charts' code, asked for once the run has drawn them
                rows.append((who, name, *page.evaluate(SIZES)))
            context.close()
        return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another checkout to measure too")
    parser.add_argument("--class-size", type=int, default=30)
    args = parser.parse_args()
    roots = {"this checkout": ROOT} | ({str(args.against): args.against.resolve()} if args.against else {})
    totals = {}
    with sync_playwright() as p:
        browser = launch(p)
        for name, root in roots.items():
            rows = measure(browser, root)
            for who, page, wire, used in rows:
                print(f"{name}: {who}: {page}: {wire / 1e6:.2f} MB over the wire, {used / 1e6:.2f} MB used")
            for who in ("teacher", "student"):
                print(f"{name}: {who}: all three {sum(r[2] for r in rows if r[0] == who) / 1e6:.2f} MB")
            totals[name] = sum(r[2] for r in rows if r[0] == "student")
            print(f"{name}: a class of {args.class_size} students: {args.class_size * totals[name] / 1e6:.0f} MB")
        browser.close()
    if args.against:
        here, there = totals.values()
        print(f"this checkout / other, a student's bytes over the wire: {here / there:.2f}")


if __name__ == "__main__":
    main()
