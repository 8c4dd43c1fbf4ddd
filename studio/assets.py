"""Files the browser needs that come from installed packages, served from where pip put them.

plotly.js is read from the plotly package itself (never a CDN: classrooms go offline), so nothing is
copied into the checkout and the app runs from a read-only one. ``app.py`` adds ``ROUTES`` to the server.

It is sent compressed when the browser accepts gzip, compressed once per process (``plotly_js_gzip``, which
the server's preload calls): Streamlit's own middleware would otherwise compress its 4.8 MB again for every
tab that opens a lesson with a live chart, 0.2 s or more of the event loop that every page and live feed waits on.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.util
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


@functools.lru_cache(maxsize=1)
def plotly_js_gzip() -> tuple[bytes, str]:
    """plotly.min.js gzipped, and its ETag; computed once."""
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
