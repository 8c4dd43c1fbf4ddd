"""The live feed: an HTTP route from which a live chart reads its run while the run is going.

Why not a polling ``st.fragment``: every fragment run re-renders part of the React app in the browser
and holds the server's GIL; measured here, about 50 ms of the browser's CPU and 25 ms of the server's
per poll, per tab. Reading the run over HTTP costs the browser one ``fetch`` and a JSON parse.

A page publishes a running ``LiveRun`` with the function that turns it into the chart's payload (the
same function that draws it in the script run). The URL holds the run's secret token. The script run
gives the chart everything once (layout, base traces such as the points, curves, recent states);
after that the chart asks ``?after=<seq>&layout=<id>`` and gets only what is new since its newest
state: new states, the curve points after that step, the layout only when it changed, and the base
traces (the points) only when their styles changed.

Costs, whatever the number of tabs reading a run: the payload is built at most once per new batch of
states (or every ``STATUS_EVERY`` s, for the status line's clock), each state is encoded to JSON once,
and a poll with nothing new is answered from bytes made in advance. Responses over 500 bytes are
gzip-compressed by Streamlit's middleware when the browser accepts it.

Runs are held weakly (the session's state owns them) and revoked explicitly when their session ends
(``studio.runner``): a revoked address answers 410, an unknown one 404. Either tells the chart the run
is gone; after a server restart every address is unknown.
"""

from __future__ import annotations

import asyncio
import bisect
import gzip
import json
import logging
import threading
import time
import weakref
import zlib
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route

from .process import process_wide

if TYPE_CHECKING:
    from .runner import LiveRun

log = logging.getLogger(__name__)

PREFIX = "/api/live/"
STATUS_EVERY = 0.5  # seconds: the status line's clock moves on even when no new state came
# seconds: a run's payload is built at most this often for new states. A build costs a few milliseconds of the
# GIL whatever is new (the page's payload function draws the whole run), and a class of 30 paced runs asked
# for one at nearly every poll: 300 a second, most of one core (bench/classroom.py).
BUILD_EVERY = 0.25
_REVOKED_KEPT = 10_000
_HEADERS = {"Cache-Control": "no-store"}


_runs: weakref.WeakValueDictionary[str, LiveRun] = process_wide("feed_runs", weakref.WeakValueDictionary)
_revoked: OrderedDict[str, None] = process_wide("feed_revoked", OrderedDict)  # runs released with their session
_revoked_lock = process_wide("feed_revoked_lock", threading.Lock)


def publish(run: LiveRun, payload: Callable[[LiveRun], dict]) -> str:
    """Serve ``payload(run)`` at the returned URL until the run is released or forgotten."""
    run.payload = payload
    if run.token not in _revoked:
        _runs[run.token] = run
    return PREFIX + run.token


def revoke(run: LiveRun) -> None:
    """Stop serving ``run``: its address answers 410 from now on."""
    with _revoked_lock:
        _runs.pop(run.token, None)
        _revoked[run.token] = None
        while len(_revoked) > _REVOKED_KEPT:
            _revoked.popitem(last=False)


def published(token: str) -> bool:
    return token in _runs


def _dumps(value) -> bytes:
    # allow_nan=False: the browser's JSON.parse rejects NaN, so a payload must never hold one.
    return json.dumps(value, separators=(",", ":"), allow_nan=False).encode()


def _styles(base) -> bytes:
    """The base traces' styles, not their data: a change means a full redraw with the traces sent again."""
    return _dumps([{k: v for k, v in t.items() if k not in ("x", "y", "z")} if isinstance(t, dict) else t
                   for t in base or []])


PLAIN = "plain"  # a presenter's payload holds here its parts as a view without the presenter's scale draws them


def unscaled(data: dict) -> dict:
    """A payload as a view without the presenter's scale draws it (``presenter.presented`` made ``data``)."""
    if PLAIN not in data:
        return data
    out = {**data, **data[PLAIN]}
    del out[PLAIN]
    return out


def layout_id(layout, base=None) -> str:
    """A short name for a chart's layout and its base traces' styles ("<layout>-<styles>"). The chart
    sends it back with each poll and gets the layout again only when it changed, and the base traces
    (with their points) only when their styles changed."""
    return f"{zlib.crc32(_dumps(layout)):08x}-{zlib.crc32(_styles(base)):08x}"


class _Built:
    """One build of a run's payload, encoded for answering polls; never changed once made."""

    __slots__ = ("key", "at", "head", "layout", "base", "styles", "layout_id", "states", "newest", "curves", "idle",
                 "full")

    def __init__(self, key, data: dict, previous: _Built | None) -> None:
        self.key, self.at, self.full = key, time.perf_counter(), data
        self.head = _dumps({"run": data.get("run"), "status": data.get("status"),
                            "status_text": data.get("status_text", "")})[1:-1]
        self.layout, self.styles = _dumps(data.get("layout")), _styles(data.get("base"))
        if previous is not None and previous.styles == self.styles:
            self.base = previous.base
        else:  # encoded once per change of style: the base traces may hold thousands of points
            self.base = _dumps(data.get("base"))
        self.layout_id = f"{zlib.crc32(self.layout):08x}-{zlib.crc32(self.styles):08x}"
        # Each state is encoded once: those the previous build had are taken from it.
        known = dict(previous.states) if previous is not None else {}
        self.states = [(s["seq"], known.get(s["seq"]) or _dumps(s)) for s in data.get("states") or []
                       if isinstance(s, dict) and "seq" in s]
        self.newest = self.states[-1][0] if self.states else None
        curves = data.get("curves") if isinstance(data.get("curves"), dict) else {}
        self.curves = {str(k): (list(c["x"]), list(c["y"])) for k, c in curves.items()}
        self.idle = b'{' + self.head + b',"states":[],"curves":{}}'

    def since(self, after: float, layout: str) -> bytes:
        """What a chart whose newest state is ``after`` and whose layout is ``layout`` lacks."""
        parts = []
        if layout != self.layout_id:
            parts.append(b'"layout":' + self.layout + b',"layout_id":"' + self.layout_id.encode() + b'"')
            if layout.partition("-")[2] != self.layout_id.partition("-")[2]:  # the traces' styles changed
                parts.append(b'"base":' + self.base)
        states = [body for seq, body in self.states if seq > after]
        curves = {}
        for k, (xs, ys) in self.curves.items():
            i = bisect.bisect_right(xs, after)
            if i < len(xs):
                curves[k] = {"x": xs[i:], "y": ys[i:]}
        if not parts and not states and not curves:
            return self.idle
        parts.append(b'"states":[' + b",".join(states) + b"]")
        parts.append(b'"curves":' + _dumps(curves))
        return b"{" + self.head + b"," + b",".join(parts) + b"}"


class _Cache:
    """What the feed built for one run (kept on the run, so it goes when the run goes)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.built: _Built | None = None

    def stale(self, run: LiveRun) -> bool:
        """Whether the run has news the last build lacks, and a new build is due: at once for a new status or
        message (the end of a run shows at once), at most every ``BUILD_EVERY`` s for new states, and every
        ``STATUS_EVERY`` s for the status line's clock."""
        built = self.built
        if built is None:
            return True
        age = time.perf_counter() - built.at
        return (built.key[1:] != (run.status, run.message) or age >= STATUS_EVERY
                or (built.key[0] != run.count and age >= BUILD_EVERY))

    def current(self, run: LiveRun) -> _Built:
        if not self.stale(run):
            return self.built
        with self.lock:  # one build per change, however many polls ask at once
            if self.stale(run):
                self.built = _Built((run.count, run.status, run.message), run.payload(run), self.built)
            return self.built


def _cache(run: LiveRun) -> _Cache:
    cache = run.feed_cache
    if cache is None:
        cache = run.feed_cache = _Cache()
    return cache


def build(run: LiveRun) -> _Built:
    """The run's current payload, built as for its charts (at most every ``BUILD_EVERY`` s, shared with them);
    the run must be published."""
    return _cache(run).current(run)


def _json(body: dict, status: int = 200) -> Response:
    return Response(_dumps(body), status_code=status, media_type="application/json", headers=_HEADERS)


HOLD = STATUS_EVERY  # seconds a poll with nothing new waits for something before it is answered
HOLD_CHECK = 0.04  # how often a held poll looks at its run (on the event loop: an attribute read, no build)


async def held(request: Request) -> Response:
    """The route: ``live``, but a poll that finds nothing new is held (on the event loop, off every thread) until
    the run has something new or ``HOLD`` s have passed, then answered. A paced run makes a state or two a
    second while its charts would ask ten times; a queued run makes none. Held, each chart asks about as often
    as there is news (and the status line's clock still moves every ``HOLD`` s), and a new state reaches it
    within ``HOLD_CHECK`` s of its build (``BUILD_EVERY``) instead of after the chart's next pause."""
    from starlette.concurrency import run_in_threadpool

    response = await run_in_threadpool(live, request)
    run = getattr(response, "held_run", None)
    if run is None:
        return response
    deadline = time.perf_counter() + HOLD
    while time.perf_counter() < deadline and run.payload is not None and not _cache(run).stale(run):
        await asyncio.sleep(HOLD_CHECK)
    return await run_in_threadpool(live, request)


def live(request: Request) -> Response:
    """``answer``, with the time it took in a ``Server-Timing`` header (the browser's network panel shows it;
    bench/classroom.py tells it from the time a request waited for a thread, the GIL or the network)."""
    t0 = time.perf_counter()
    response = answer(request)
    response.headers["Server-Timing"] = f"feed;dur={(time.perf_counter() - t0) * 1e3:.2f}"
    return response


def answer(request: Request) -> Response:
    """The run's payload (no query), or what is new since the chart's newest state (``?after=<seq>``)."""
    token = request.path_params["token"]
    run = _runs.get(token)
    if run is None or run.payload is None:
        if token in _revoked:
            return _json({"error": "This run ended with its session.", "gone": True}, 410)
        return _json({"error": "No such run: it ended with its session, the server restarted, or a newer run "
                               "replaced it.", "gone": True}, 404)
    query = QueryParams(request.scope.get("query_string", b""))
    after = query.get("after")
    try:
        after_seq = float(after) if after is not None else None
    except ValueError:
        return _json({"error": "after must be a number."}, 400)
    try:
        built = _cache(run).current(run)
        if after_seq is None:
            whole = {**built.full, "layout_id": built.layout_id}
            whole.pop(PLAIN, None)
            return _json(whole)
        body = built.since(after_seq, query.get("layout", ""))
    except Exception:  # the chart keeps what it shows and asks again; the traceback goes to the log
        log.exception("live feed for run %s failed", run.run_id)
        return _json({"error": "The live feed failed; see the server log."}, 500)
    response = Response(body, media_type="application/json", headers=_HEADERS)
    if body is built.idle and run.running:
        response.held_run = run  # nothing new yet: ``held`` may wait for some
    return response


ROUTES = [Route(PREFIX + "{token}", held, methods=["GET"])]
GZIP_OVER = 500  # bytes: a longer answer is gzip-compressed when the browser accepts it (as Streamlit's middleware)


class FastLane:
    """ASGI middleware, first in ``st.App``'s list: it answers the live feed's polls itself (and those of any
    other ``routes`` given: the class relay's), and passes every other request on. A poll needs none of what lies
    between (path security for static files, the session cookie's middleware, the router), and a class of 30
    asks a few hundred times a second: through the whole stack, a poll cost several times what the feed itself
    spends on it, and the stack took over half of the server's GIL (bench/classroom.py). Answers longer than
    ``GZIP_OVER`` are compressed here instead."""

    def __init__(self, app, routes: list[Route] | None = None) -> None:
        self.app, self.routes = app, [(r.path.split("{")[0], r) for r in (routes or ROUTES)]

    async def __call__(self, scope, receive, send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" and scope.get("method") == "GET" else ""
        for prefix, route in self.routes:
            if path.startswith(prefix):
                match, child = route.matches(scope)
                if match is Match.FULL:
                    await self._answer(route.endpoint, Request({**scope, **child}), scope, receive, send)
                    return
        await self.app(scope, receive, send)

    @staticmethod
    async def _answer(endpoint, request: Request, scope, receive, send) -> None:
        response = await endpoint(request)
        body = response.body
        if len(body) > GZIP_OVER and "gzip" in request.headers.get("accept-encoding", ""):
            body = gzip.compress(body, 6)
            response.headers["Content-Encoding"] = "gzip"
            response.headers["Content-Length"] = str(len(body))
            response.headers["Vary"] = "Accept-Encoding"
            response.body = body
        await response(scope, receive, send)
