"""A lesson's page tells Streamlit's frontend where the server is (studio/first_paint.py, ``BACKEND_BASE``), so it
never first asks the lesson's own path for the server, gets 404 and waits before asking the right one."""

from __future__ import annotations

import pytest

from studio import first_paint
from testkit.browser import open_page

pytestmark = pytest.mark.browser


def test_a_lessons_page_asks_the_server_where_it_is_at_once(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    asked: list[tuple[str, int]] = []
    page.on("response", lambda r: asked.append((r.url.removeprefix(server), r.status)) if "/_stcore/" in r.url
            else None)
    page.goto(f"{server}/two_layer?seed=3")
    page.get_by_role("button", name="Train").wait_for(timeout=60_000)
    pings = [(path, status) for path, status in asked if path.startswith(("/_stcore/health", "/two_layer/_stcore"))]
    assert pings and pings[0] == ("/_stcore/health", 200) and all(status == 200 for _, status in pings), asked
    assert page.evaluate("window.__streamlit.BACKEND_BASE_URL") == server + "/"
    context.close()


@pytest.mark.parametrize(("address", "page_part", "base"), [
    ("http://studio.test/two_layer", "/two_layer", "http://studio.test/"),
    ("http://studio.test/", "", "http://studio.test/"),
    ("http://studio.test/class/7/two_layer/", "/two_layer", "http://studio.test/class/7/"),  # behind a proxy's prefix
    ("http://studio.test/class/7/", "", "http://studio.test/class/7/"),
    ("http://studio.test/elsewhere", "/two_layer", None),  # a proxy that rewrote more: Streamlit looks as before
], ids=["lesson", "home", "lesson-behind-prefix", "home-behind-prefix", "rewritten"])
def test_the_server_is_the_address_less_the_page(browser, address, page_part, base):
    context = browser.new_context()
    page = context.new_page()
    html = b"<html><body>" + first_paint.backend_base(page_part) + b"</body></html>"
    page.route("http://studio.test/**", lambda route: route.fulfill(status=200, content_type="text/html", body=html))
    page.goto(address)
    assert page.evaluate("window.__streamlit ? window.__streamlit.BACKEND_BASE_URL : null") == base
    context.close()


def test_an_embedding_hosts_setting_stays(browser):
    context = browser.new_context()
    page = context.new_page()
    html = (b'<html><body><script>window.__streamlit = {BACKEND_BASE_URL: "https://host.example/app/"};</script>'
            + first_paint.backend_base("/two_layer") + b"</body></html>")
    page.route("http://studio.test/**", lambda route: route.fulfill(status=200, content_type="text/html", body=html))
    page.goto("http://studio.test/two_layer")
    assert page.evaluate("window.__streamlit.BACKEND_BASE_URL") == "https://host.example/app/"
    context.close()


def test_a_deep_link_still_opens_its_lesson_with_its_settings(server, browser):
    page = open_page(browser.new_context(viewport={"width": 1280, "height": 720}), f"{server}/logistic?lr_lr=0.05")
    page.get_by_role("button", name="Train").wait_for(timeout=60_000)
    assert page.get_by_label("Learning rate").first.input_value() in ("0.05", "0.0500")
    assert "/logistic" in page.url and "lr_lr=0.05" in page.url
