"""Hostile links: whatever a query string holds, every page works, shows no traceback, and draws no link,
image or markup that came from the URL. AppTest for breadth, the real browser for a handful."""

from __future__ import annotations

import re
import urllib.parse

import pytest

from studio.lessons import lessons

EVIL = "evil.example"
BIG = "A" * 100_000
PAGES = ["home", *(x.key for x in lessons())]
TITLES = {"home": "Autograd Studio", **{x.key: f"{x.number} ·" for x in lessons()}}


def q(**params) -> str:
    """A query string; a list value repeats its key."""
    return urllib.parse.urlencode(params, doseq=True)


HOSTILE = [
    # digits that are not ASCII digits, and numbers int() must never see
    q(seed="²"), q(seed="٣"), q(seed="１２"), q(seed="𝟗"), q(seed="9" * 5000), q(seed="9" * 11),
    q(seed="2147483648"), q(seed="-1"), q(seed="1e9"), q(seed="0x10"), q(seed="1_000"), q(seed="+5"),
    q(seed=" 7"), q(seed=""), q(seed="0" * 30 + "7"), q(seed="NaN"),
    # repeated keys
    q(seed=["1", "2"]), q(seed=["1", "²"]), q(seed=["3"] * 500), q(dtype=["float64", "float32"]),
    q(device=["cuda", "cpu"]), q(device=["cpu", f"[x](http://{EVIL}/r)"]),
    # markdown, HTML, LaTeX and Streamlit's own directives
    q(device=f"[click me](http://{EVIL}/login)"), q(device=f"![x](http://{EVIL}/t.png)"),
    q(device=f"<img src=http://{EVIL}/t.png>"), q(device=f'<a href="http://{EVIL}/">x</a>'),
    q(device="<script>alert(1)</script>"), q(device=f"http://{EVIL}/login"), q(device=f"www.{EVIL}"),
    q(device=f"`x`[y](http://{EVIL}/)`"), q(device=f"[cpu](javascript:alert('{EVIL}'))"),
    q(dtype=f"[x](http://{EVIL}/)"), q(dtype=":red[alarm] :material/warning: **bold**"),
    q(dtype=f"$\\href{{http://{EVIL}/}}{{x}}$"), q(dtype="<details open><summary>x</summary>y</details>"),
    q(seed=f"[x](http://{EVIL}/)"), q(seed=f"<img src=x onerror=fetch('//{EVIL}')>"),
    q(dtype=f"[x]\n\n[x]: http://{EVIL}/"), q(device=f"<http://{EVIL}/>"),
    # control characters, odd unicode, bytes that are not UTF-8
    "device=%00cpu", "device=%1b%5b31mred", f"device=a%0a%0a[x](http://{EVIL}/)", "device=%e2%80%aecpu",
    "seed=%ff", "device=cpu%0d%0aSet-Cookie:%20x=1", "dtype=float64%00", q(device="😀" * 50),
    q(device="cuda:99"), q(device="CPU"),
    # the lessons' own settings (studio/presets.py), presets, the presenter view, solved challenges
    q(cf_input=f"[x](http://{EVIL}/)"), q(cf_grad_output=f"![x](http://{EVIL}/t.png)"),
    q(cf_input=f"1, <img src=http://{EVIL}/t.png>, 2"), q(xr_points=f"1, [x](http://{EVIL}/)"),
    q(preset="A point at the kink", xr_points=f"1, [x](http://{EVIL}/)"),  # a preset opens the tab that shows it
    q(lr_lr="²", lr_n="9" * 5000, lr_iters="1e400"), q(tl_H="99999999999999999999", tl_lr="nan"),
    q(pg_lr="inf", pg_dataset=f"[x](http://{EVIL}/)", pg_layers=["1", "3", "²"]),
    q(pg_dataset="Your points", pg_points=f"1,1,[x](http://{EVIL}/);2,2,1"), q(pg_points=BIG),
    q(pg_dataset="Your points", pg_classes="²", pg_points="1e99,1,0;2,2,1;3,3,0;4,4,1"),
    q(pg_dataset="Your points (regression)", pg_points="1,1,0;" * 600), q(pg_classes="<b>7</b>"),
    q(logistic_speed=f"[x](http://{EVIL}/)", lr_forget="maybe"), q(preset=f"[x](http://{EVIL}/)"),
    q(preset=BIG), q(present="²"), q(present=f"[x](http://{EVIL}/)"),
    q(solved=f"relu,[x](http://{EVIL}/)"), q(solved=BIG), q(cf_function="<script>alert(1)</script>"),
    # very long values, and many keys
    q(device=BIG), q(dtype=BIG), q(seed=BIG), q(**{f"k{i}": f"[x](http://{EVIL}/{i})" for i in range(200)}),
]

_CODE_SPAN = re.compile(r"`[^`]*`")
_MARKDOWN = ("markdown", "caption", "warning", "error", "info", "success", "title", "header", "subheader")


def _texts(at) -> list[tuple[str, str]]:
    """(kind, text) of every element that shows text, main area and sidebar."""
    out = []
    for kind in (*_MARKDOWN, "code", "text", "exception"):
        out += [(kind, str(el.value)) for el in at.get(kind)]
    return out


def check_page(at, page: str, query: str) -> list[str]:
    """What is wrong with this run of ``page`` opened with ``query``; [] when nothing."""
    problems = []
    if at.exception:
        problems.append(f"exception: {at.exception[0].value[:200]} {list(at.exception[0].stack_trace)[-3:]}")
    texts = _texts(at)
    for kind, text in texts:
        if "Traceback" in text or "/site-packages/" in text:
            problems.append(f"traceback in {kind}")
        plain = _CODE_SPAN.sub("", text) if kind in _MARKDOWN else ""
        if EVIL in plain:  # the host anywhere outside a code span could become a link (GFM autolinks it)
            problems.append(f"URL text outside a code span in {kind}: {text[:120]!r}")
        if kind in _MARKDOWN:
            for span in _CODE_SPAN.findall(text):
                if len(span) > 2 + 41:
                    problems.append(f"an echo longer than 40 characters: {span[:60]!r}…")
    if len(query) > 10_000 and any(BIG[:200] in text for _, text in texts):
        problems.append("a 100 KB value shown in full")
    titles = [t.value for t in at.title]
    if not titles or not titles[0].startswith(TITLES[page]):
        problems.append(f"page did not draw its title: {titles}")
    devices = [box.value for box in at.sidebar.selectbox if box.key == "device"]
    if devices != ["cpu"] and "cuda" not in query.lower():
        problems.append(f"the sidebar's device is {devices}, not the CPU")
    return problems


def open_app(new_app, page: str, query: str):
    at = new_app()
    at.query_params.update(urllib.parse.parse_qs(query, keep_blank_values=True))
    if page != "home":
        at.switch_page(f"pages/{page}.py")
    return at.run()


def test_there_are_at_least_forty_hostile_links():
    assert len(HOSTILE) >= 40 and len(set(HOSTILE)) == len(HOSTILE)


@pytest.mark.parametrize("page", PAGES)
def test_every_hostile_link_opens_every_page(new_app, page):
    """Each link as a fresh session that lands on ``page`` (the URL is read once, on a session's first
    run); on the home page also one rerun, where the warnings are still drawn."""
    failures = {}
    for query in HOSTILE:
        at = open_app(new_app, page, query)
        problems = check_page(at, page, query)
        if page == "home":
            problems += check_page(at.run(), page, query)
        if problems:
            failures[query[:80]] = problems
    assert not failures, failures


def test_a_bad_seed_warns_once_and_goes_when_the_seed_changes(new_app):
    at = open_app(new_app, "home", q(seed="²", dtype=f"[x](http://{EVIL}/)"))
    texts = [w.value for w in at.sidebar.warning]
    assert any(t.startswith("seed `²` in the link") for t in texts), texts
    assert any(t.startswith(f"dtype `[x](http://{EVIL}/)` in the link") for t in texts), texts
    at.run()
    assert len(at.sidebar.warning) == 2  # still there after a rerun: the student may not have read it yet
    at.sidebar.toggle(key="seed_tutorial").set_value(False).run()
    texts = [w.value for w in at.sidebar.warning]
    assert len(texts) == 1 and texts[0].startswith("dtype"), texts
    at.sidebar.button(key="url_notes_dismiss").click().run()
    assert not at.sidebar.warning and not at.exception
    at.switch_page("pages/logistic.py").run()
    assert not at.sidebar.warning


def test_a_long_value_is_cut_and_control_characters_are_not_echoed(new_app):
    at = open_app(new_app, "home", "device=" + "x" * 60 + "&dtype=a%1b%5b31m%0ab")
    device, dtype = (w.value for w in at.sidebar.warning)
    assert "`" + "x" * 40 + "…`" in device
    assert "`a\N{REPLACEMENT CHARACTER}[31m\N{REPLACEMENT CHARACTER}b`" in dtype


def test_repeated_keys_use_the_last_and_say_so(new_app):
    at = open_app(new_app, "home", q(seed=["5", "7"], dtype=["float64", "float64"]))
    assert at.sidebar.number_input(key="seed_value").value == 7
    assert at.sidebar.radio(key="dtype").value == "float64"
    [note] = [w.value for w in at.sidebar.warning]
    assert "seed 2 times; the last one counts" in note
    assert at.query_params["seed"] in ("7", ["7"])  # the address bar holds each setting once


def test_a_good_link_gives_no_warning(new_app):
    at = open_app(new_app, "logistic", q(device="CPU", dtype="float64", seed="2147483647"))
    assert not at.sidebar.warning and not at.exception
    assert at.sidebar.number_input(key="seed_value").value == 2**31 - 1


# ---------------------------------------------------------------------------------------------- browser

BROWSER_LINKS = [
    ("home", q(device=f"[click me](http://{EVIL}/login)")),
    ("logistic", q(device=f"![x](http://{EVIL}/t.png)", seed="²")),
    ("xray", q(seed="9" * 5000, dtype=f"<img src=http://{EVIL}/t.png>")),
    ("playground", q(dtype=f"$\\href{{http://{EVIL}/}}{{x}}$", device=f"http://{EVIL}/login")),
    ("two_layer", q(device=["cpu", f"<a href='http://{EVIL}/'>x</a>"], seed="٣")),
    ("custom_function", "device=a%0a%0a%5Bx%5D(http://" + EVIL + "/)&seed=" + "1" * 3000),
]


@pytest.mark.browser
def test_hostile_links_in_the_browser():
    """The real page: no exception box, no traceback, no <a>/<img> pointing at the link's host, no
    request to it, and the page's own widgets there."""
    from playwright.sync_api import sync_playwright

    from testkit.browser import launch, streamlit_server, wait_idle

    failures = {}
    with streamlit_server() as url, sync_playwright() as p:
        browser = launch(p)
        context = browser.new_context()
        outside = []
        context.route(lambda u: (urllib.parse.urlsplit(u).hostname or "").endswith(EVIL),
                      lambda route: (outside.append(route.request.url), route.abort()))
        for page_name, query in BROWSER_LINKS:
            page = context.new_page()
            path = "" if page_name == "home" else page_name
            page.goto(f"{url}/{path}?{query}")
            wait_idle(page)
            page.locator('[data-testid="stSidebar"] h3, [data-testid="stException"]').first.wait_for()
            found = page.evaluate("""(host) => ({
                links: [...document.querySelectorAll('a[href]')].map(a => a.href)
                  .filter(h => h.includes(host) && !h.startsWith(location.origin)),
                images: [...document.querySelectorAll('img[src]')].map(i => i.src).filter(s => s.includes(host)),
                outside: [...document.querySelectorAll('a[href^="http"]')].map(a => a.href)
                  .filter(h => !h.startsWith(location.origin)),
                exceptions: document.querySelectorAll('[data-testid="stException"]').length,
                traceback: document.body.innerText.includes('Traceback'),
                title: document.querySelector('h1')?.innerText ?? '',
            })""", EVIL)
            problems = {k: v for k, v in found.items() if v and k != "title"}
            if not found["title"].startswith(TITLES[page_name]):
                problems["title"] = found["title"]
            if problems:
                failures[f"{page_name}?{query[:60]}"] = problems
            page.close()
        browser.close()
    assert not failures, failures
    assert not outside, outside


@pytest.mark.browser
def test_an_uncaught_error_shows_a_short_message_with_no_traceback_and_no_outside_link(tmp_path):
    """With the app's .streamlit/config.toml, a script that raises shows Streamlit's generic message:
    no exception type, no traceback, no server path, and no 'Ask Google' / 'Ask ChatGPT' links."""
    import subprocess
    import sys

    from playwright.sync_api import sync_playwright

    from testkit.browser import ROOT, free_port, launch, wait_idle

    script = tmp_path / "boom.py"
    script.write_text('import streamlit as st\nst.title("boom")\nint("\u00b2")\n')
    port = free_port()
    log = tmp_path / "server.log"
    with open(log, "w") as out:
        server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
                                   "--server.port", str(port), "--server.address", "127.0.0.1"],
                                  cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)  # cwd: the app's config
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page()
            for _ in range(120):
                try:
                    page.goto(f"http://127.0.0.1:{port}/")
                    break
                except Exception:
                    page.wait_for_timeout(500)
            wait_idle(page)
            box = page.locator('[data-testid="stException"]')
            box.wait_for()
            text = box.inner_text()
            links = page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)")
            browser.close()
    finally:
        server.terminate()
        server.wait(10)
    assert "encountered an error" in text
    assert "ValueError" not in text and "Traceback" not in text and "boom.py" not in text, text
    assert not [h for h in links if not h.startswith(f"http://127.0.0.1:{port}/")], links
    assert "ValueError" in log.read_text()  # the log keeps the details


def test_a_lessons_address_holds_none_of_another_lessons_settings(new_app):
    """After Back, or a page switch that crossed a rerun, the address once held lesson 3's settings (and lesson 1's)
    beside lesson 2's: a link copied then carried them. The page drops them and keeps its own and the sidebar's."""
    at = open_app(new_app, "two_layer", q(tl_D_in="300", lr_n="42", cf_input="1, 2", pg_layers="2", seed="7"))
    assert not at.exception and not at.main.warning
    assert at.number_input(key="tl_D_in").value == 300
    params = dict(at.query_params)
    assert {"lr_n", "cf_input", "pg_layers"}.isdisjoint(params), params
    assert params["tl_D_in"] in ("300", ["300"]) and params["seed"] in ("7", ["7"])
