"""Files the browser needs that come from installed packages, served from where pip put them.

plotly.js is read from the plotly package itself (never a CDN: classrooms go offline), so nothing is
copied into the checkout and the app runs from a read-only one. ``app.py`` adds ``ROUTES`` to the server.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse
from starlette.routing import Route

PLOTLY_JS_URL = "/api/assets/plotly.min.js"


def plotly_js_path() -> Path:
    """The plotly.min.js that the installed plotly package ships (found without importing plotly)."""
    [package] = importlib.util.find_spec("plotly").submodule_search_locations
    return Path(package) / "package_data" / "plotly.min.js"


def plotly_js(request: Request) -> FileResponse:
    # FileResponse sends an ETag and Last-Modified; a tab that asks again gets 304 Not Modified.
    return FileResponse(plotly_js_path(), media_type="text/javascript",
                        headers={"Cache-Control": "public, max-age=3600"})


ROUTES = [Route(PLOTLY_JS_URL, plotly_js, methods=["GET", "HEAD"])]
