"""plotly.js and Streamlit's frontend go out gzipped, each file compressed once per process (studio/assets.py)."""

from __future__ import annotations

import asyncio
import gzip
import re
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from studio import assets
from testkit.browser import streamlit_server


def get(url: str, **headers):
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=20) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, b""


def test_the_server_sends_plotly_js_compressed_once_and_whole():
    raw = assets.plotly_js_path().read_bytes()
    with streamlit_server() as base:
        url = base + assets.PLOTLY_JS_URL
        status, headers, body = get(url, **{"Accept-Encoding": "gzip, deflate, br"})
        assert status == 200 and headers["Content-Encoding"] == "gzip"
        assert gzip.decompress(body) == raw  # compressed once: by us, not again by the middleware
        assert get(url, **{"Accept-Encoding": "gzip", "If-None-Match": headers["ETag"]})[0] == 304
        status, headers, body = get(url, **{"Accept-Encoding": "identity"})
        assert status == 200 and headers.get("Content-Encoding") is None and body == raw


def test_the_compressed_file_is_made_once(monkeypatch):
    assets._plotly_js_gzip.cache_clear()
    calls = []
    compress = gzip.compress
    monkeypatch.setattr(assets.gzip, "compress", lambda *a, **k: calls.append(1) or compress(*a, **k))
    with ThreadPoolExecutor(4) as pool:  # the warm-up and the first lessons' requests, at once
        answers = list(pool.map(lambda _: assets.plotly_js_gzip(), range(4)))
    assert all(a is answers[0] for a in answers) and len(calls) == 1


def bundle_script(base: str) -> str:
    """The path of the first script Streamlit's page loads from its bundle (a content-hashed name)."""
    html = get(base + "/")[2].decode()
    src = re.search(r'src="\.?(/static/js/[^"]+\.js)"', html)
    assert src, html[:2000]
    return src.group(1)


def test_the_server_sends_streamlits_frontend_compressed_and_whole():
    root = assets.bundle_root()
    with streamlit_server() as base:
        path = bundle_script(base)
        raw = (root / path.lstrip("/")).read_bytes()
        status, headers, body = get(base + path, **{"Accept-Encoding": "gzip, deflate, br"})  # the page's own load
        deadline = time.monotonic() + 20
        while headers.get("Content-Encoding") != "gzip" and time.monotonic() < deadline:  # compressed meanwhile
            time.sleep(0.1)
            status, headers, body = get(base + path, **{"Accept-Encoding": "gzip, deflate, br"})
        assert status == 200 and headers["Content-Encoding"] == "gzip", dict(headers)
        assert gzip.decompress(body) == raw and len(body) < len(raw) / 2
        assert headers["Content-Type"].startswith("text/javascript") and "immutable" in headers["Cache-Control"]
        status, headers, body = get(base + path, **{"Accept-Encoding": "identity"})  # as Streamlit sends it
        assert status == 200 and headers.get("Content-Encoding") is None and body == raw
        status, headers, body = get(base + path, **{"Accept-Encoding": "gzip", "Range": "bytes=0-9"})
        assert headers.get("Content-Encoding") is None and body == raw[: len(body)]  # left to Streamlit
        font = next((root / "static" / "media").glob("*.woff2"))  # compressed already: left to Streamlit
        status, headers, body = get(f"{base}/static/media/{font.name}", **{"Accept-Encoding": "gzip"})
        assert status == 200 and headers.get("Content-Encoding") is None and body == font.read_bytes()
        outside = (root.parent / "__init__.py").read_bytes()  # streamlit/__init__.py, beside the bundle
        for path in ("/static/../../__init__.py", "/static/%2e%2e/%2e%2e/__init__.py", "/static/js/none.js"):
            status, headers, body = get(base + path, **{"Accept-Encoding": "gzip"})
            assert headers.get("Content-Encoding") is None and body != outside, (path, status)


async def serve(middleware, path: str, **headers) -> list[dict]:
    sent = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": path,
             "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()]}
    await middleware(scope, None, send)
    return sent


def test_a_file_asked_for_by_many_at_once_is_compressed_once_and_off_the_pages_path(tmp_path, monkeypatch):
    (tmp_path / "static" / "js").mkdir(parents=True)
    raw = b"const x = 1;\n" * 5000
    (tmp_path / "static" / "js" / "main.abc.js").write_bytes(raw)
    passed = []

    async def streamlit(scope, receive, send):
        passed.append(scope["path"])

    calls = []
    compress = gzip.compress
    monkeypatch.setattr(assets.gzip, "compress", lambda *a, **k: calls.append(1) or compress(*a, **k))
    page_going = threading.Event()
    compressor = assets.Compressor(wait=page_going.wait)  # in a server: until no page's script run is going
    middleware = assets.CompressedBundle(streamlit, compressor, root=tmp_path)
    gz = {"Accept-Encoding": "gzip"}

    async def class_of(n):
        return await asyncio.gather(*(serve(middleware, "/static/js/main.abc.js", **gz) for _ in range(n)))

    asyncio.run(class_of(30))  # before it is compressed: each sent as it is, by Streamlit, at once
    assert passed == ["/static/js/main.abc.js"] * 30 and calls == []
    page_going.set()  # the page's run has ended: now it is compressed, once
    deadline = time.monotonic() + 10
    while not compressor.done and time.monotonic() < deadline:
        time.sleep(0.01)
    passed.clear()
    answers = asyncio.run(class_of(30))
    assert len(calls) == 1 and not passed
    assert all(gzip.decompress(a[1]["body"]) == raw and a[0]["status"] == 200 for a in answers)
    assert dict(answers[0][0]["headers"])[b"content-encoding"] == b"gzip"
    # anything else is Streamlit's to answer
    asyncio.run(serve(middleware, "/static/js/main.abc.js"))  # no gzip accepted
    asyncio.run(serve(middleware, "/static/js/gone.js", **gz))
    asyncio.run(serve(middleware, "/two_layer", **gz))
    assert passed == ["/static/js/main.abc.js", "/static/js/gone.js", "/two_layer"] and len(calls) == 1
