"""The live feed: an HTTP route from which a live chart reads its run while the run is going.

Why not a polling ``st.fragment``: every fragment run re-renders part of the React app in the browser
and holds the server's GIL; measured here, about 50 ms of the browser's CPU and 25 ms of the server's
per poll, per tab. Reading the same payload over HTTP costs the browser one ``fetch`` and a JSON parse,
and the server only the payload itself, so three tabs training at once leave the two cores to painting.

A page publishes a running ``LiveRun`` with the function that turns it into the chart's payload (the
same function that draws it in the script run). The URL holds the run's secret token; the route looks
the run up, builds the payload off the script thread and returns it as JSON. Runs are held weakly:
the session's state owns them.
"""

from __future__ import annotations

import json
import logging
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

if TYPE_CHECKING:
    from .runner import LiveRun

log = logging.getLogger(__name__)

PREFIX = "/api/live/"
_runs: weakref.WeakValueDictionary[str, LiveRun] = weakref.WeakValueDictionary()


def publish(run: LiveRun, payload: Callable[[LiveRun], dict]) -> str:
    """Serve ``payload(run)`` at the returned URL for as long as the run exists."""
    run.payload = payload
    _runs[run.token] = run
    return PREFIX + run.token


def _json(body: dict, status: int = 200) -> Response:
    # allow_nan=False: the browser's JSON.parse rejects NaN, so a payload must never hold one.
    return Response(json.dumps(body, separators=(",", ":"), allow_nan=False), status_code=status,
                    media_type="application/json", headers={"Cache-Control": "no-store"})


def live(request: Request) -> Response:
    """The run's payload now: its recent states, curves, status and status line."""
    run = _runs.get(request.path_params["token"])
    if run is None:  # publish() registers a run together with its payload
        return _json({"error": "No such run: it ended with its session, or a newer run replaced it."}, 404)
    try:
        return _json(run.payload(run))
    except Exception:  # the chart keeps what it shows and asks again; the traceback goes to the log
        log.exception("live feed for run %s failed", run.run_id)
        return _json({"error": "The live feed failed; see the server log."}, 500)


ROUTES = [Route(PREFIX + "{token}", live, methods=["GET"])]
