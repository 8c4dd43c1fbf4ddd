"""Something to read while a page's first script run is still going.

Streamlit's HTML page is an empty shell: the browser shows a white screen until the first script run has sent
its first element, seconds on a fresh server while torch loads. ``FirstPaint`` (ASGI middleware in ``app.py``)
writes a short placeholder into that HTML, and the page's own stylesheet hides it once the page has drawn
anything in its main area, or shows a dialog (a lost connection), and after a minute whatever happens. It needs
no script and loads nothing else, so it shows as soon as the HTML arrives. Beside it goes a line of script that
tells Streamlit's frontend where the server is (``BACKEND_BASE``). The same stylesheet keeps a lesson's Train and
Stop in their place in their row while the page's widgets load (``RUN_ROW``).
"""

from __future__ import annotations

import json

from streamlit import config

PLACEHOLDER_ID = "studio-first-paint"
BEFORE = b'<div id="root">'
DRAWN = ('body:has([data-testid="stMainBlockContainer"] [data-testid="stElementContainer"])',
         'body:has([role="dialog"])')

# A lesson's row of run buttons and speed slider (Train and Stop, ``live_view.controls``; lesson 5's Play, Pause, Step
# and Reset) is a container whose key ends in ``RUN_ROW``, aligned at its foot. Streamlit's frontend draws a widget once
# the code for its kind has loaded, a skeleton of no height until then: in a new browser the buttons came a moment
# before the slider and sat at the foot of a row 28 px too short, then moved down under the pointer, and a click begun
# on Train ended on the page beside it and did nothing. The row is as tall as the slider from its first paint. (Not
# every row: one whose widgets are shorter than a slider would shrink under the pointer instead.)
RUN_ROW = "_run_row"
SLIDER_HEIGHT = "4.25rem"  # 68 px: Streamlit's slider with a label, as measured in Chromium

PLACEHOLDER = f"""<style>
[class*="{RUN_ROW}"] [data-testid="stSkeleton"] {{ min-height: {SLIDER_HEIGHT}; }}
#{PLACEHOLDER_ID} {{ position: fixed; inset: 0; z-index: 1000000; background: #ffffff; color: #0b0d12;
  font-family: "Source Sans", system-ui, sans-serif; padding: 4rem 2rem; box-sizing: border-box;
  animation: studio-first-paint-end 0s 60s forwards; }}
#{PLACEHOLDER_ID} p {{ max-width: 40rem; margin: 0 auto 1rem; font-size: 1.1rem; line-height: 1.5; }}
#{PLACEHOLDER_ID} .title {{ font-size: 2.25rem; font-weight: 700; }}
{", ".join(f"{drawn} #{PLACEHOLDER_ID}" for drawn in DRAWN)} {{ display: none; }}
@keyframes studio-first-paint-end {{ to {{ visibility: hidden; }} }}
</style>
<div id="{PLACEHOLDER_ID}" role="status">
<p class="title">Autograd Studio</p>
<p>Loading the page&hellip; On a server that has just started, PyTorch loads first: a few seconds.</p>
</div>
""".encode()


# Streamlit's frontend looks for its server by trying the page's own path first: a lesson at /two_layer pings
# /two_layer/_stcore/health, gets 404, and tries /_stcore/health only after a pause, 0.1-0.13 s of every lesson's
# page load. The server knows which part of the address is the page (what it was asked for, less its base path), so
# the page tells the frontend where the server is (``window.__streamlit.BACKEND_BASE_URL``, Streamlit's setting for
# hosts that embed it): the address less that part, so a proxy's prefix stays. If the address does not end with
# it (a proxy that rewrote more), or a host set it, nothing is set and Streamlit looks as before.
BACKEND_BASE = """<script>(() => {
  const page = %s, path = location.pathname.replace(/\\/+$/, "");
  if (!window.__streamlit && path.endsWith(page)) {
    window.__streamlit = { BACKEND_BASE_URL: location.origin + path.slice(0, path.length - page.length) + "/" };
  }
})();</script>
"""


def page_part(raw_path: bytes, base_url_path: str = "") -> str:
    """The part of a request's path (as the browser sent it, percent-encoded) that names the page: without the
    server's base path or trailing slashes; "" for the home page."""
    path, base = raw_path.decode("latin-1").rstrip("/"), base_url_path.strip("/")
    if base and (path == f"/{base}" or path.startswith(f"/{base}/")):
        path = path[len(base) + 1:]
    return path


def backend_base(page: str) -> bytes:
    """The script that tells Streamlit's frontend where its server is, for a page at ``page``."""
    literal = json.dumps(page).replace("<", "\\u003c").replace(">", "\\u003e")  # never ends the script
    return (BACKEND_BASE % literal).encode()


def with_placeholder(html: bytes, page: str | None = None) -> bytes:
    """The page's HTML with the placeholder, and where the page is ``page`` the script that says where the server
    is, just before the app's root (unchanged if it has no root)."""
    at = html.find(BEFORE)
    extra = b"" if page is None else backend_base(page)
    return html if at < 0 else html[:at] + PLACEHOLDER + extra + html[at:]


NOT_PAGES = ("/component/", "/_stcore/", "/static/", "/app/static/")  # a component's iframe is HTML too


def _wants_html(scope) -> bool:
    if scope["type"] != "http" or scope["method"] != "GET":
        return False
    if scope.get("path", "").startswith(NOT_PAGES):  # its stylesheet never sees the app draw: it would stay on top
        return False
    accept = dict(scope.get("headers") or []).get(b"accept", b"")
    return b"text/html" in accept


class FirstPaint:
    """ASGI middleware: a page's HTML (a GET that accepts text/html and gets 200 text/html) comes with the
    placeholder. That request is asked for without compression, so the HTML can be read: it is a few KB."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if not _wants_html(scope):
            await self.app(scope, receive, send)
            return
        headers = [(k, v) for k, v in scope["headers"] if k != b"accept-encoding"]
        scope = dict(scope, headers=headers)
        start: dict | None = None
        body: list[bytes] = []

        async def send_with_placeholder(message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                kind = dict(message.get("headers") or []).get(b"content-type", b"")
                if message["status"] == 200 and kind.startswith(b"text/html"):
                    start = message
                    return
            elif message["type"] == "http.response.body" and start is not None:
                body.append(message.get("body", b""))
                if message.get("more_body", False):
                    return
                html = with_placeholder(b"".join(body), page_part(scope.get("raw_path") or scope["path"].encode(),
                                                                   config.get_option("server.baseUrlPath") or ""))
                fixed = [(k, v) for k, v in start.get("headers") or [] if k != b"content-length"]
                await send(dict(start, headers=[*fixed, (b"content-length", str(len(html)).encode())]))
                await send({"type": "http.response.body", "body": html})
                return
            await send(message)

        await self.app(scope, receive, send_with_placeholder)
