"""The teacher's live run, relayed through the class store to every follower, on any worker process.

The teacher's page publishes its run on the live feed (``studio.feed``) as always. While the teacher teaches a
class, ``studio.room.mirror`` also copies each new build of that run's payload (the feed's ``_Built``: made at most
every ``feed.BUILD_EVERY`` s, whoever asks) into the store under ``class:<code>:live``, with a counter beside it. A
follower's live chart reads ``/api/class/<code>/live``: its worker reads the counter at most every
``LOOK_EVERY`` s per class (one store read for all its followers), rebuilds the payload once per new copy, and
answers each chart with only what is new, as the feed does. A chart with nothing new is held on the event loop
(``feed.HOLD`` s) until something comes.

``/api/class/<code>/watch?what=version|news&since=<n>`` is held up to ``WATCH_HOLD`` s and answers as soon as the
room's version (what a follower's page shows: the teacher's lesson, settings, run, question) or its news (what
the teacher's board shows: submissions, answers) is no longer ``since``. A page reruns only then.

The code is the only key to either route: it is what a student types to join, and the routes only read.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from dataclasses import dataclass, field

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .. import feed
from ..process import process_wide
from . import classes as _rules
from .classes import CODE_LENGTH, clean_code
from .mirror import count_key, live_key
from .mirror import fork_state as fork_state  # what the relay gives followers, where they read it
from .mirror import newest as newest
from .mirror import teacher_ghost as teacher_ghost
from .mirror import teacher_run as teacher_run

log = logging.getLogger(__name__)

PREFIX = "/api/class/"
LOOK_EVERY = 0.1  # seconds: how stale a worker's view of a class may be (one store read per class per period)
WATCH_HOLD = 15.0  # seconds a watch with no change is held before it is answered
WATCH_CHECK = 0.25
MAX_SEEN = 5_000  # classes a worker keeps its view of
FOLLOW_CHECK = 0.05
_HEADERS = {"Cache-Control": "no-store"}


def _classes():
    return _rules.shared()


# ---- what a worker knows of a class ----

@dataclass
class _Seen:
    at: float = 0.0
    version: int = -1  # -1: no such class, or it is over
    news: int = 0
    copies: int = 0
    lesson: str = ""
    built: object = None  # feed._Built of the newest copy
    presented: tuple | None = None  # (built, its feed._Built at the presenter's scale), for charts in that view
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


_seen: dict[str, _Seen] = process_wide("relay_seen", dict)
_seen_lock = process_wide("relay_seen_lock", threading.Lock)


def _fresh(code: str) -> bool:
    seen = _seen.get(code)
    return seen is not None and time.perf_counter() - seen.at < LOOK_EVERY


def look(code: str) -> _Seen:
    """This worker's view of class ``code``, at most ``LOOK_EVERY`` s old."""
    with _seen_lock:  # held only to find the class's entry: a slow store read holds up only its own class
        seen = _seen.setdefault(code, _Seen())
    with seen.lock:
        if time.perf_counter() - seen.at < LOOK_EVERY:
            return seen
        classes = _classes()
        room = classes.room(code)
        if room is None:  # no such class: nothing is kept for it, so asking for every code cannot fill memory
            with _seen_lock:
                _seen.pop(code, None)
            return _Seen(at=time.perf_counter())
        seen.version = -1 if room.over else room.version
        seen.news = classes.news(code)
        raw = classes.store.get(count_key(code))
        copies = int(raw) if raw else 0
        if copies != seen.copies:
            body = classes.store.get(live_key(code))
            if body is not None:
                data = json.loads(body)
                payload = data["payload"]
                previous = seen.built if seen.built is not None and seen.built.full.get("run") == payload.get(
                    "run") else None
                seen.built = feed._Built((copies, payload.get("status"), ""), payload, previous)
                seen.lesson = data.get("lesson", "")
            seen.copies = copies
        seen.at = time.perf_counter()
    if len(_seen) > MAX_SEEN:  # the classes looked at longest ago go first
        with _seen_lock:
            for old in sorted(_seen, key=lambda c: _seen[c].at)[:len(_seen) - MAX_SEEN // 2]:
                _seen.pop(old, None)
    return seen


def presented(seen: _Seen):
    """The newest copy at the presenter's scale (a follower in the presenter view), made once per copy."""
    from ..presenter import presented as scaled  # with the figures' theme: only once a presenter follows

    built, done = seen.built, seen.presented
    if built is None:
        return None
    if done is None or done[0] is not built:
        data = scaled(built.full)
        data.pop(feed.PLAIN)
        previous = done[1] if done is not None and done[1].full.get("run") == built.full.get("run") else None
        seen.presented = done = (built, feed._Built(built.key, data, previous))
    return done[1]


async def _look(code: str) -> _Seen:
    return _seen[code] if _fresh(code) else await run_in_threadpool(look, code)


# ---- the routes ----

def _json(body: dict, status: int = 200) -> Response:
    return Response(feed._dumps(body), status_code=status, media_type="application/json", headers=_HEADERS)


def _code(request: Request) -> str:
    return clean_code(request.path_params.get("code", ""))[:CODE_LENGTH]


_GONE = {"error": "This class has ended.", "gone": True}


def _UNAVAILABLE() -> Response:  # noqa: N802 - an answer, named as the constants beside it
    return _json({"error": "The class store is unavailable just now."}, 503)


async def _look_or_none(code: str) -> _Seen | None:
    """``look``, or None when the store failed (logged): the chart or the watch asks again later."""
    try:
        return await _look(code)
    except Exception:
        log.exception("the class store failed")
        return None


async def follow_route(request: Request) -> Response:
    """What a follower's chart lacks: the newest run whole when the chart shows another (``?run=``), else what is
    new since its newest state (``?after=``, ``?layout=``), as ``studio.feed`` answers; at the presenter's scale with
    ``?present=1``."""
    code = _code(request)
    if not code:
        return _json({"error": "No such class."}, 404)
    q = request.query_params
    try:
        after = float(q.get("after", "-1"))
    except ValueError:
        return _json({"error": "after must be a number."}, 400)
    deadline = time.perf_counter() + feed.HOLD
    while True:
        seen = await _look_or_none(code)
        if seen is None:
            return _UNAVAILABLE()
        if seen.version < 0:
            return _json(_GONE, 404)
        built = presented(seen) if q.get("present") == "1" else seen.built
        if built is None or seen.lesson != q.get("lesson", seen.lesson):
            body = None  # nothing of this lesson yet: the chart waits
        elif built.full.get("run") != q.get("run"):
            return _json({**built.full, "layout_id": built.layout_id, "full": True, "version": seen.version})
        else:
            body = built.since(after, q.get("layout", ""))
            if body is not built.idle:
                return Response(body, media_type="application/json", headers=_HEADERS)
        if time.perf_counter() >= deadline:
            if body is None:
                return _json({"waiting": True, "version": seen.version})
            return Response(body, media_type="application/json", headers=_HEADERS)
        await asyncio.sleep(FOLLOW_CHECK)


async def watch_route(request: Request) -> Response:
    code = _code(request)
    what = request.query_params.get("what", "version")
    if not code or what not in ("version", "news"):
        return _json({"error": "No such class."}, 404)
    since = request.query_params.get("since", "")
    deadline = time.perf_counter() + WATCH_HOLD
    while True:
        seen = await _look_or_none(code)
        if seen is None:
            return _UNAVAILABLE()
        value = seen.version if seen.version < 0 else getattr(seen, what)
        if str(value) != since or time.perf_counter() >= deadline:
            return _json({"value": value})
        await asyncio.sleep(WATCH_CHECK)


ROUTES = [Route(PREFIX + "{code}/live", follow_route, methods=["GET"]),
          Route(PREFIX + "{code}/watch", watch_route, methods=["GET"])]
