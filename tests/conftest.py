"""Shared fixtures: an AppTest of the whole app, as a real server runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from starlette.requests import Request
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
# Every AppTest is the same session ("test session id"), so the suite would meet the per-session limit on checks
# a minute; tests/grading/test_sandbox_fairness.py tests that limit on a sandbox of its own.
# torch computes in one thread, as the app does (studio/__init__.py): set before torch is first imported
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("STUDIO_CHECKS_PER_MINUTE", "100000")
# Classes the tests start live in a data folder of the test run's own, never in the user's
# (studio/room/store.py); a server a test starts inherits it.
os.environ.setdefault("STUDIO_DATA", tempfile.mkdtemp(prefix="autograd-studio-tests-"))


@pytest.fixture(autouse=True)
def build_on_every_poll(monkeypatch):
    """In-process tests poll the live feed right after a run steps, and expect what it made: the feed builds
    a payload on every poll with news, as it did before ``BUILD_EVERY``. tests/studio/test_feed.py tests the limit
    itself; a server (the browser tests') keeps its own."""
    from studio import feed

    monkeypatch.setattr(feed, "BUILD_EVERY", 0.0)


@pytest.fixture(scope="module")
def server():
    """``streamlit run app.py`` on a free port for the browser tests of one module; yields its base URL."""
    from testkit.browser import streamlit_server

    with streamlit_server() as url:
        yield url


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A browser test that fails says what each of its tabs showed and did: the report gains a section per tab (its
    address, its script's state and its text) and one with its trail (its clicks, what each landed on, and the reruns
    it asked for: ``testkit.browser.Trail``), and artifacts/failed-<test>-<n>.png is its screenshot. So a failure in
    CI, under a load no one can replay, can still be read."""
    report = yield
    browser = item.funcargs.get("browser") if report.when == "call" and report.failed else None
    if browser is not None:
        from testkit.browser import save_pages

        report.sections.extend(save_pages(browser, f"failed-{item.name}"))
    return report


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for the browser tests of one module."""
    from playwright.sync_api import sync_playwright

    from testkit.browser import launch

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture
def server_page_mode(monkeypatch):
    """Keep PagesManager.uses_pages_directory False, as a real server does once st.navigation has run.

    AppTest resets that class flag before every run; since ./pages exists it then starts each run in
    the old multipage mode, and studio.page.require_app reruns through app.py, which loses the click
    that started the run. On a server this happens at most once per process, on its first deep link.
    """
    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


@pytest.fixture
def new_app(server_page_mode):
    """A factory for AppTests of app.py (60 s timeout), not yet run."""
    return lambda: AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)


@pytest.fixture
def app(new_app):
    """An AppTest of the whole app, run once (the home page)."""
    at = new_app()
    at.run()
    return at


def wait_for_run(at: AppTest, lesson: str, timeout: float = 60.0):
    """Rerun the app until the lesson's live run has ended; returns the run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = at.session_state[f"{lesson}_run"]
        if not run.running:
            at.run()
            return run
        time.sleep(0.1)
    raise AssertionError(f"{lesson} run did not finish within {timeout} s")


def open_tab(at: AppTest, tab: str) -> AppTest:
    """Switch lesson 4 to ``tab``, as a click on it does: the page reruns with that tab open, and draws it alone."""
    at.session_state["xr_tab"] = tab
    at.run()
    assert [t.label for t in at.tabs if t.children] == [tab], [e.value for e in at.exception]
    return at


def feed_get(path: str) -> tuple[int, dict]:
    """Ask the live feed for ``path`` as the server's router does; returns (status, decoded body)."""
    from studio.feed import ROUTES, live

    [route] = ROUTES
    match, scope = route.matches({"type": "http", "path": path, "method": "GET", "headers": []})
    assert match.name == "FULL", path
    response = live(Request({"type": "http", "method": "GET", "headers": [], **scope}))  # held() without the hold
    return response.status_code, json.loads(response.body)


def run_exported(source: str, tmp_path) -> tuple[list[float], float]:
    """Run an exported script in a subprocess, as a student would (without this repo on the path): the train
    loss it prints for every step, and the final test loss of its last line."""
    path = tmp_path / "playground_run.py"
    path.write_text(source)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    return [float(line.split()[1]) for line in lines[:-1]], float(lines[-1].split()[-1])


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie waiting to be reaped has ended).

    A process can vanish between opening its ``stat`` and reading it; the read then fails with ESRCH
    (``ProcessLookupError``), which means the same as no file: it has ended."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return False
