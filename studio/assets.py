"""Files the browser needs that come from installed packages, served from where pip put them.

plotly.js is read from the plotly package itself (never a CDN: classrooms go offline), so nothing is
copied into the checkout and the app runs from a read-only one. ``app.py`` adds ``ROUTES`` to the server.

It is sent compressed when the browser accepts gzip, compressed once per process (``plotly_js_gzip``, which the
server's warm-up calls after the first page): Streamlit's own middleware would otherwise compress its 4.8 MB again
for every tab that opens a lesson with a live chart, 0.2 s or more of the event loop that every page and live feed
waits on.

Streamlit sends its own frontend (``/static/...``: about 3 MB of JavaScript for the home page, 5 MB more for a
lesson's charts) uncompressed, as it would otherwise compress it again for every request. ``CompressedBundle``
(ASGI middleware in ``app.py``) sends each of those files gzipped, compressed once per process after its first
request, between the pages' script runs, and kept in memory: a class of 30 opening the app over one classroom
Wi-Fi fetches a quarter of the bytes.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.util
import posixpath
import queue
import threading
from collections.abc import Callable
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

PLOTLY_JS_URL = "/api/assets/plotly.min.js"
CACHE = "public, max-age=3600"


def plotly_js_path() -> Path:
    """The plotly.min.js that the installed plotly package ships (found without importing plotly)."""
    [package] = importlib.util.find_spec("plotly").submodule_search_locations
    return Path(package) / "package_data" / "plotly.min.js"


_plotly_lock = threading.Lock()


def plotly_js_gzip() -> tuple[bytes, str]:
    """plotly.min.js gzipped, and its ETag; computed once (the warm-up and a first request may ask together)."""
    with _plotly_lock:
        return _plotly_js_gzip()


@functools.lru_cache(maxsize=1)
def _plotly_js_gzip() -> tuple[bytes, str]:
    raw = plotly_js_path().read_bytes()
    return gzip.compress(raw, compresslevel=6, mtime=0), f'"{hashlib.sha1(raw).hexdigest()[:16]}-gz"'


def plotly_js(request: Request) -> Response:
    if "gzip" not in request.headers.get("accept-encoding", ""):
        # FileResponse sends an ETag and Last-Modified; a tab that asks again gets 304 Not Modified.
        return FileResponse(plotly_js_path(), media_type="text/javascript", headers={"Cache-Control": CACHE})
    body, etag = plotly_js_gzip()
    headers = {"Cache-Control": CACHE, "ETag": etag, "Vary": "Accept-Encoding"}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    # Content-Encoding already set: Streamlit's gzip middleware passes the body on as it is.
    return Response(body, media_type="text/javascript", headers={**headers, "Content-Encoding": "gzip"})


ROUTES = [Route(PLOTLY_JS_URL, plotly_js, methods=["GET", "HEAD"])]


BUNDLE_PREFIX = "/static/"  # Streamlit's frontend: content-hashed names, served "immutable" for a year
BUNDLE_CACHE = "public, immutable, max-age=31536000"
COMPRESSIBLE = {".js": "text/javascript", ".css": "text/css", ".json": "application/json", ".svg": "image/svg+xml"}
# fonts (woff2) and images are compressed already; a page's HTML is not under /static/


def bundle_root() -> Path:
    """Streamlit's static folder (found without importing more of Streamlit than the server has)."""
    from streamlit import file_util

    return Path(file_util.get_static_dir()).resolve()


class Compressor:
    """Gzips files one at a time in a daemon thread, each once per process, and keeps them in memory.

    ``get`` answers at once: the compressed file if it is ready, else None (and the file joins the queue). Before
    each file the thread calls ``wait`` (in a server: until no page's script run is going), so compression takes no
    core from a page being drawn; zlib lets go of the GIL while it works."""

    def __init__(self, wait: Callable[[], object] = lambda: None) -> None:
        self.wait = wait
        self.done: dict[Path, bytes] = {}
        self.queued: set[Path] = set()
        self._queue: queue.SimpleQueue[Path] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def get(self, file: Path) -> bytes | None:
        body = self.done.get(file)
        if body is None:
            with self._lock:
                if file not in self.queued:
                    self.queued.add(file)
                    self._queue.put(file)
                if self._thread is None:
                    self._thread = threading.Thread(target=self._work, name="studio-compressor", daemon=True)
                    self._thread.start()
        return body

    def _work(self) -> None:
        while True:
            file = self._queue.get()
            self.wait()
            try:
                self.done[file] = gzip.compress(file.read_bytes(), compresslevel=6, mtime=0)
            except OSError:
                with self._lock:
                    self.queued.discard(file)  # unreadable now: a later request queues it again


class CompressedBundle:
    """ASGI middleware: a GET for one of Streamlit's frontend files, from a browser that accepts gzip, is answered
    here with the file gzipped once it has been compressed (``Compressor``); until then, and for anything else,
    Streamlit answers as it would.

    A file's first request is sent as it is (on the machine itself that is the fastest) and queues its compression,
    done between the pages' script runs; the requests after it get the compressed file, about a quarter of the
    bytes: what matters when a class of 30 loads the app over one classroom Wi-Fi."""

    def __init__(self, app, compressor: Compressor, root: Path | None = None) -> None:
        self.app = app
        self.compressor = compressor  # app.py's waits, before each file, until no page's script run is going
        self.root = root

    def _file(self, path: str) -> Path | None:
        """The bundle file a request path names, or None (not in the bundle, not compressible, or outside it)."""
        relative = posixpath.normpath(path.lstrip("/"))
        if relative.startswith("..") or Path(relative).suffix not in COMPRESSIBLE:
            return None
        if self.root is None:
            self.root = bundle_root()
        file = (self.root / relative).resolve()
        return file if file.is_relative_to(self.root) and file.is_file() else None

    async def __call__(self, scope, receive, send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not path.startswith(BUNDLE_PREFIX) or scope["method"] != "GET":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        file = None if b"range" in headers else self._file(path)
        body = None if file is None or b"gzip" not in headers.get(b"accept-encoding", b"") else \
            self.compressor.get(file)
        if body is None:
            await self.app(scope, receive, send)
            return
        kind = COMPRESSIBLE[file.suffix]
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", (f"{kind}; charset=utf-8" if kind.startswith("text/") else kind).encode()),
            (b"content-encoding", b"gzip"), (b"vary", b"Accept-Encoding"),
            (b"cache-control", BUNDLE_CACHE.encode()), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
