"""A page's HTML carries something to read before its first script run has drawn (studio/first_paint.py)."""

from __future__ import annotations

import asyncio
import gzip
import urllib.request
from pathlib import Path

import streamlit

from studio import first_paint
from testkit.browser import streamlit_server

INDEX = (Path(streamlit.__file__).parent / "static" / "index.html").read_bytes()


def call(path: str = "/", accept: str = "text/html,*/*", method: str = "GET"):
    """One request through ``FirstPaint`` around an app that serves Streamlit's page, gzipped when the request
    accepts it: (the scope the app saw, the response start, the body sent)."""
    seen, sent = [], []
    scope = {"type": "http", "method": method, "path": path,
             "headers": [(b"accept", accept.encode()), (b"accept-encoding", b"gzip, br")]}

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    async def inner(scope, receive, send):
        seen.append(scope)
        zipped = any(k == b"accept-encoding" for k, _ in scope["headers"])
        body = gzip.compress(INDEX) if zipped else INDEX
        headers = [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        half = len(body) // 2  # in two pieces, as a file is sent
        await send({"type": "http.response.body", "body": body[:half], "more_body": True})
        await send({"type": "http.response.body", "body": body[half:]})

    asyncio.run(first_paint.FirstPaint(inner)(scope, receive, send))
    start = sent[0]
    return seen[0], start, b"".join(m.get("body", b"") for m in sent[1:])


def test_the_placeholder_is_written_into_streamlits_page_before_its_root():
    html = first_paint.with_placeholder(INDEX, "/logistic")
    assert html.index(b'id="studio-first-paint"') < html.index(b'<div id="root">')
    assert b"Autograd Studio" in html and b"Loading the page" in html
    script = first_paint.backend_base("/logistic")
    assert html.index(script) < html.index(b'<div id="root">')
    assert html.replace(first_paint.PLACEHOLDER, b"").replace(script, b"") == INDEX


def test_the_page_part_of_an_address_is_the_path_less_the_servers_base_path():
    assert first_paint.page_part(b"/") == "" and first_paint.page_part(b"") == ""
    assert first_paint.page_part(b"/two_layer") == "/two_layer" == first_paint.page_part(b"/two_layer/")
    assert first_paint.page_part(b"/class/two_layer", "class/") == "/two_layer"
    assert first_paint.page_part(b"/class", "/class") == ""
    assert first_paint.page_part(b"/classes", "class") == "/classes"
    assert first_paint.page_part(b"/caf%C3%A9") == "/caf%C3%A9"  # as the browser's location.pathname has it


def test_an_address_never_ends_the_script():
    script = first_paint.backend_base('/x</script><script>alert("hi")</script>').decode()
    body = script.removeprefix("<script>").removesuffix("</script>\n")
    assert "</" not in body and "<script" not in body.lower() and "\\u003c/script\\u003e" in body


def test_a_page_request_gets_the_placeholder_uncompressed_with_its_length():
    seen, start, body = call("/two_layer")
    assert all(k != b"accept-encoding" for k, _ in seen["headers"])
    assert first_paint.PLACEHOLDER in body and first_paint.backend_base("/two_layer") in body
    assert dict(start["headers"])[b"content-length"] == str(len(body)).encode()


def test_other_requests_pass_unchanged():
    for accept, method in (("*/*", "GET"), ("text/html", "POST")):
        seen, _, body = call(accept=accept, method=method)
        assert any(k == b"accept-encoding" for k, _ in seen["headers"])
        assert gzip.decompress(body) == INDEX


def test_a_components_page_passes_unchanged():
    """A component's iframe (lesson 6's code editor) is an HTML page too, and nothing in it hides the placeholder:
    it stayed over the editor for a minute and took its clicks."""
    for path in ("/component/streamlit_ace.streamlit_ace/index.html", "/_stcore/health", "/static/index.html"):
        seen, _, body = call(path=path)
        assert any(k == b"accept-encoding" for k, _ in seen["headers"]), path
        assert gzip.decompress(body) == INDEX, path


def test_the_servers_pages_come_with_the_placeholder_and_hide_it_once_drawn():
    """A real server: the home page and a deep link (Streamlit answers both with its page) carry it, and the
    stylesheet that hides it names what Streamlit draws into."""
    with streamlit_server() as url:
        for path in ("/", "/logistic"):
            request = urllib.request.Request(url + path, headers={"Accept": "text/html", "Accept-Encoding": "gzip"})
            with urllib.request.urlopen(request, timeout=20) as r:
                body = r.read()
                assert r.headers.get("Content-Encoding") is None
            assert b'id="studio-first-paint"' in body and b"Loading the page" in body
            assert b'[data-testid="stMainBlockContainer"]' in body

