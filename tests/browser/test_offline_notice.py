"""The server goes away under an open page (headless Chromium): the page says so in the app's words, which
make sense in a classroom with no internet, not Streamlit's "Are you connected to the internet?"."""

from __future__ import annotations

import pytest
from playwright.sync_api import sync_playwright

from studio.offline_notice import MESSAGE, STREAMLIT_SAYS
from testkit.browser import ARTIFACTS, launch, open_page, streamlit_server

pytestmark = pytest.mark.browser


def test_a_server_that_stops_answering_is_said_in_the_apps_words():
    with sync_playwright() as p:
        browser = launch(p)
        try:
            with streamlit_server() as url:
                page = open_page(browser.new_context(viewport={"width": 1280, "height": 720}), f"{url}/logistic")
            page.get_by_text(MESSAGE).first.wait_for(timeout=60_000)
            text = page.locator("body").inner_text()
            assert not any(theirs in text for theirs in STREAMLIT_SAYS) and "streamlit run" not in text
            page.screenshot(path=str(ARTIFACTS / "server-not-answering.png"))
        finally:
            browser.close()
