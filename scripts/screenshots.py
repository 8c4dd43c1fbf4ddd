"""The README's screenshots, taken from the real app: a representative run of each lesson, as a student sees it.

Starts `streamlit run app.py` and headless Chromium with the browser tests' helpers (testkit/browser.py), opens
each lesson by a link (its presets and settings are in the URL), trains it as a student would, checks that
the page shows what the run promises and no error box, and writes docs/lesson<N>-<name>.png. Look at every
image before committing it.

    python scripts/screenshots.py          # every lesson
    python scripts/screenshots.py 3 5      # lessons 3 and 5 only
    python scripts/screenshots.py --out artifacts 2    # a trial, leaving docs/ alone

A teacher's walk: ``--view 1280x720``, ``--view 390x844`` (a phone) or ``--view presenter`` (1280x720 with
``?present=1``) opens the home page, every lesson and the class board at that size, does the same, and writes two
images of each into ``--out`` (default artifacts/walk): ``<view>-<page>.png``, the screen as it shows after the
action, and ``<view>-<page>-full.png``, the whole page.

    python scripts/screenshots.py --view 390x844
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from playwright.sync_api import sync_playwright  # noqa: E402

from testkit.browser import (  # noqa: E402
    exception_boxes,
    launch,
    open_page,
    play_then_pause,
    set_speed,
    streamlit_server,
    wait_idle,
)

DOCS = ROOT / "docs"
VIEWPORT = {"width": 1400, "height": 1000}
MAX_HEIGHT = 1800  # px: a README image taller than this is unreadable once scaled to the page width
EDITOR = 'iframe[title="streamlit_ace.streamlit_ace"]'


def text(page, what: str, timeout: float = 120_000) -> None:
    page.get_by_text(what).first.wait_for(timeout=timeout)


def train(page, lesson: str, done: str) -> None:
    """Speed 'max', Train, then wait for ``done`` on the page and for the script to be idle."""
    set_speed(page, "max")
    page.get_by_role("button", name="Train", exact=True).click()
    text(page, done)
    wait_idle(page)


def lesson1(page) -> str:
    text(page, "gradcheck passed")
    return '.js-plotly-plot, [data-testid="stAlert"]'  # the charts and gradcheck's verdict


def lesson2(page) -> str:
    train(page, "two_layer", "Finished: all 500 steps")
    return '.studio-live, [data-testid="stMetric"]'  # the loss curve and the numbers under it


def lesson3(page) -> str:
    # The tutorial's clusters are apart: accuracy passes 99% at iteration 20 and the run stops there. Closer
    # clusters overlap (the link's mean 1.0), so the run goes on and the boundary can be seen settling between them.
    train(page, "logistic", "Finished")
    page.get_by_text("▶ Play").first.wait_for(timeout=60_000)  # the replay
    return ".js-plotly-plot"


def lesson4(page) -> str:
    return '[data-testid="stGraphVizChart"]'  # the autograd graph of a real step


def choose(page, label: str, option: str) -> None:
    """Pick ``option`` in the selectbox labelled ``label``."""
    page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first.click()
    page.get_by_role("option", name=option, exact=True).click()
    wait_idle(page)


def lesson5(page) -> str:
    # The preset "Spirals need depth": three layers have learnt the two spirals by step 1,000.
    play_then_pause(page, 1000)
    page.wait_for_timeout(1500)  # the finished view's first paint
    return '.studio-live, [data-testid="stMetric"]'  # the surface, the curves and the numbers under them


def lesson6(page) -> str:
    from autodiff_core.grading.challenges import CHALLENGES

    wrong = CHALLENGES["relu"].solution.replace("grad_input = grad_output.clone()",
                                                "grad_input = torch.ones_like(input)")
    page.frame_locator(EDITOR).locator(".ace_content").wait_for(timeout=60_000)
    page.frame_locator(EDITOR).locator(".ace_content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(wrong)  # the classic bug: backward forgets grad_output
    page.frame_locator(EDITOR).get_by_role("button", name="Apply").click()
    wait_idle(page)
    page.locator('[data-testid="stAlert"]').filter(has_text="gradcheck failed").first.wait_for(timeout=60_000)
    return ".js-plotly-plot", 1  # the code, the verdict and the two Jacobians


def lesson7(page) -> str:
    # The preset "Rosenbrock's valley": drawn live at full speed, then the replay and what happened beside it.
    train(page, "optimizers", "Finished: all 501 steps")
    page.get_by_text("▶ Play").first.wait_for(timeout=60_000)
    return ".js-plotly-plot, .st-key-optimizers_story"


def lesson8(page) -> str:
    text(page, "Asked for the same H·v through MySinhOnce")
    page.locator('[data-testid="stCode"]').filter(has_text="@once_differentiable").first.wait_for(timeout=60_000)
    return '[data-testid="stCode"]', 1  # the charts, then what autograd says to @once_differentiable


LESSONS = {  # number: (file name, link, what to do, returning the selector whose last match ends the image)
    1: ("lesson1-custom-function.png", "/custom_function", lesson1),
    2: ("lesson2-two-layer.png", "/two_layer", lesson2),
    3: ("lesson3-logistic.png", "/logistic?lr_mean=1.0", lesson3),
    4: ("lesson4-xray.png", "/xray", lesson4),
    5: ("lesson5-playground.png", "/playground?preset=spirals-need-depth", lesson5),
    6: ("lesson6-write-function.png", "/write_function", lesson6),
    7: ("lesson7-optimizers.png", "/optimizers?preset=rosenbrock-s-valley", lesson7),
    8: ("lesson8-function-api.png", "/function_api", lesson8),
}


def drawn(page) -> str:
    """A page with nothing to do (the home page, the class board): what it has drawn."""
    return '[data-testid="stMainBlockContainer"] [data-testid="stElementContainer"]'


WALK = {0: ("home.png", "/", drawn), **LESSONS, 9: ("board.png", "/board", drawn)}  # --view: every page
VIEWS = {"1280x720": {"width": 1280, "height": 720}, "390x844": {"width": 390, "height": 844},
         "presenter": {"width": 1280, "height": 720}}


BOTTOM_JS = """([selector, count]) => Math.max(0, ...[...document.querySelectorAll(selector)]
  .map(e => e.getBoundingClientRect()).filter(r => r.height > 0).slice(0, count || undefined).map(r => r.bottom))"""
TO_TOP_JS = "() => { for (const e of document.querySelectorAll('*')) if (e.scrollTop) e.scrollTop = 0; }"


def shoot(context, url: str, number: int, out: Path, view: str | None = None) -> Path:
    """The lesson from the top of the page down to the end of its last chart (Streamlit scrolls its main
    area inside the page, so the window is made as tall as that instead of taking a full-page image).
    With ``view`` (a key of VIEWS), first the screen at that size as it shows after the action."""
    name, link, act = WALK[number]
    size = VIEWS[view] if view else VIEWPORT
    if view == "presenter":
        link += ("&" if "?" in link else "?") + "present=1"
    page = open_page(context, url + link)
    selector, count = act(page), 0  # the image ends below the last of them on screen
    if isinstance(selector, tuple):
        selector, count = selector  # ... or below the first ``count`` of them
    page.locator(selector).locator("visible=true").first.wait_for(timeout=60_000)
    page.wait_for_timeout(1000)  # the last charts' first paint
    assert exception_boxes(page) == 0, f"page {number} shows an error box"
    page.evaluate(TO_TOP_JS)
    if view:
        name = f"{view}-{name}"
        page.screenshot(path=str(out / name))
        name = name.replace(".png", "-full.png")
    bottom = page.evaluate(BOTTOM_JS, [selector, count])
    height = min(MAX_HEIGHT if not view else 6000, max(size["height"], int(bottom + 8)))
    page.set_viewport_size({"width": size["width"], "height": height})
    page.wait_for_timeout(1000)  # charts follow the new size
    page.evaluate(TO_TOP_JS)
    path = out / name
    page.screenshot(path=str(path))
    page.close()
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", type=int, help=f"lesson numbers (default: all of {list(LESSONS)}; "
                                                             "with --view, 0 is the home page and 9 the class board)")
    parser.add_argument("--out", type=Path, help="folder for the images (default: docs, or artifacts/walk with --view)")
    parser.add_argument("--view", choices=list(VIEWS),
                        help="a teacher's walk at this size: every page, two images each")
    args = parser.parse_args()
    pages = WALK if args.view else LESSONS
    if unknown := set(args.lessons) - set(pages):
        parser.error(f"no page {sorted(unknown)}")
    args.lessons = args.lessons or list(pages)
    args.out = args.out or (ROOT / "artifacts" / "walk" if args.view else DOCS)
    args.out.mkdir(parents=True, exist_ok=True)
    with streamlit_server() as url, sync_playwright() as p:
        browser = launch(p)
        context = browser.new_context(viewport=VIEWS[args.view] if args.view else VIEWPORT)
        errors = []
        context.on("weberror", lambda e: errors.append(str(e.error)))
        for number in args.lessons:
            print(f"page {number}: {shoot(context, url, number, args.out, args.view)}", flush=True)
        browser.close()
    assert not errors, f"page errors: {errors}"


if __name__ == "__main__":
    main()
