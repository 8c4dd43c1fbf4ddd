"""plotly.js goes out gzipped, compressed once per process, never again by Streamlit's middleware (studio/assets.py)."""

from __future__ import annotations

import gzip
import urllib.error
import urllib.request

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
    assets.plotly_js_gzip.cache_clear()
    calls = []
    compress = gzip.compress
    monkeypatch.setattr(assets.gzip, "compress", lambda *a, **k: calls.append(1) or compress(*a, **k))
    first, second = assets.plotly_js_gzip(), assets.plotly_js_gzip()
    assert first is second and len(calls) == 1
