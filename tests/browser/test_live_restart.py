"""A server restart mid-run, in headless Chromium: the page says the run was lost with the server and
offers Train again (it used to stay on "Training… step 250 of 100,000" with Stop enabled)."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import sync_playwright

from testkit.browser import (
    ARTIFACTS,
    exception_boxes,
    free_port,
    launch,
    open_page,
    set_speed,
    streamlit_server,
    wait_idle,
)

pytestmark = pytest.mark.browser


def test_a_run_lost_with_a_server_restart_says_so_and_offers_train_again():
    port = free_port()
    with sync_playwright() as p:
        browser = launch(p)
        page = None
        try:
            with streamlit_server(port) as url:
                page = open_page(browser.new_context(viewport={"width": 1300, "height": 900}), f"{url}/logistic")
                set_speed(page, "1")  # one iteration a second: the run is going when the server goes
                page.get_by_role("button", name="Train").click()
                page.wait_for_function("() => document.querySelector('.studio-live')?.dataset.status === 'running'",
                                       timeout=30_000)
            with streamlit_server(port):  # the same address, a new process: it knows no run
                status = page.locator(".studio-live .studio-status")
                status.get_by_text("The run was lost: the server restarted").wait_for(timeout=60_000)
                page.wait_for_function("() => document.querySelector('.studio-live')?.dataset.status === 'lost'")
                wait_idle(page)
                train, stop = (page.get_by_role("button", name=n) for n in ("Train", "Stop"))
                train.wait_for()
                deadline = time.monotonic() + 30
                while not (train.is_enabled() and stop.is_disabled()) and time.monotonic() < deadline:
                    time.sleep(0.2)  # the rerun the chart asked for draws the page as the new server has it
                assert train.is_enabled() and stop.is_disabled()
                assert exception_boxes(page) == 0
                page.screenshot(path=str(ARTIFACTS / "live-run-lost-with-the-server.png"), full_page=True)
                set_speed(page, "max")
                train.click()  # Train again: a new run, and the message goes
                status.get_by_text("Finished").or_(status.get_by_text("Training")).first.wait_for(timeout=60_000)
                assert "lost" not in status.inner_text()
        finally:
            browser.close()
