"""The teacher's live run, relayed through the class store to every follower, on any worker process.

The teacher's page publishes its run on the live feed (``studio.feed``) as always. While the teacher teaches a
class, ``mirror`` also copies each new build of that run's payload (the feed's ``_Built``: made at most every
``feed.BUILD_EVERY`` s, whoever asks) into the store under ``class:<code>:live``, with a counter beside it. A
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
from .classes import CODE_LENGTH, IDLE, clean_code

log = logging.getLogger(__name__)

PREFIX = "/api/class/"
LOOK_EVERY = 0.1  # seconds: how stale a worker's view of a class may be (one store read per class per period)
WATCH_HOLD = 15.0  # seconds a watch with no change is held before it is answered
WATCH_CHECK = 0.25
MAX_SEEN = 5_000  # classes a worker keeps its view of
FOLLOW_CHECK = 0.05
MAX_FORK_BYTES = 1_000_000  # a run's state for forking (lesson 5's whole network): a larger one is not relayed
FORK_EVERY = 0.5  # seconds between two copies of it (lesson 5's largest network in float64 is about 0.7 MB)
_HEADERS = {"Cache-Control": "no-store"}


def _live(code: str) -> str:
    return f"class:{code}:live"


def _live_count(code: str) -> str:
    return f"class:{code}:live_n"


def _ghost(code: str) -> str:
    return f"class:{code}:ghost"


def _run_file(code: str) -> str:
    return f"class:{code}:run_file"


def _fork(code: str) -> str:
    return f"class:{code}:fork"


def _classes():
    return _rules.shared()


# ---- the teacher's side ----

def copy(code: str, lesson: str, built) -> None:
    """Put one build of the teacher's run where followers read it, as a view without the presenter's scale draws
    it: a follower's chart takes its own view's scale (``presented``), not the teacher's projector's."""
    store = _classes().store
    payload = feed.unscaled(built.full)
    payload = {**payload, "layout_id": feed.layout_id(payload.get("layout"), payload.get("base"))}
    body = feed._dumps({"lesson": lesson, "payload": payload})
    store.put(_live(code), body, IDLE)
    store.count(_live_count(code), IDLE)


def mirror(code: str, key: str, lesson: str, settings: dict, run) -> threading.Thread:
    """Copy ``run`` (published on the feed) to the class until it ends, in a thread of its own; the class then
    follows it (``Classes.lead`` names it, which closes an open question)."""
    def work() -> None:
        last, shared, ends = None, (None, 0.0), []
        try:
            while True:
                going = run.running
                built = _build(run, last)
                if built is not last:
                    copy(code, lesson, built)
                    if last is None:  # the copy is there before followers' pages are told to look for it
                        _classes().lead(code, key, lesson, settings, run.run_id)
                    last = built
                shared = share(code, lesson, run, shared)
                ends = _ends(run, ends)
                if not going or run.payload is None:
                    keep_finished(code, lesson, run)
                    settle_question(code, key, run, ends)
                    _classes().touch(code, key)  # followers' pages redraw: the teacher's replay is there
                    return
                time.sleep(feed.BUILD_EVERY)
        except Exception:  # the class store failed: the teacher's own run goes on
            log.exception("relaying run %s to class %s failed", run.run_id, code)

    thread = threading.Thread(target=work, name=f"relay-{code}", daemon=True)
    thread.start()
    return thread


def _build(run, last):
    """``feed.build(run)``; ``last`` once the run is released (its session ended: it has no payload any more)."""
    if run.payload is None:
        return last
    try:
        return feed.build(run)
    except Exception:
        if run.payload is None:  # released while it was built
            return last
        raise


def _ends(run, ends: list) -> list:
    """The run's first and newest states, kept as it goes: a run whose page closed is released, states and all."""
    newest = run.last
    if newest is None:
        return ends
    first = ends[0] if ends else next(iter(run.view()[0]), newest)
    return [first, newest]


def settle_question(code: str, key: str, run, ends: list) -> None:
    """Record what the run the class predicted did (``questions.outcome_of``), here, where the run is relayed:
    the teacher's page may have been reloaded since it started, and a reload forgets the run."""
    from .outcome import outcome_of  # with the lessons' registry: loaded by the end of a run, never the routes

    classes = _classes()
    room = classes.room(code)
    q = room.question if room is not None and not room.over else None
    if q is not None and q.run_id == run.run_id and not q.open and not q.outcome:
        classes.settle(code, key, q.id, outcome_of(run, ends))


def share(code: str, lesson: str, run, done: tuple) -> tuple:
    """Put where ``run`` stands (``LiveRun.fork_state``: plain data, at most ``MAX_FORK_BYTES``) where a student
    who forks it mid-way reads it, at most every ``FORK_EVERY`` s and only when it moved on. ``done``: (the step
    put there last, when); returns the same for now."""
    shared = run.fork_state() if run.fork_state is not None else None
    if not isinstance(shared, dict) or shared.get("step") == done[0] or time.perf_counter() - done[1] < FORK_EVERY:
        return done
    body = feed._dumps({"lesson": lesson, "run": run.run_id, "shared": shared})
    if len(body) <= MAX_FORK_BYTES:
        _classes().store.put(_fork(code), body, IDLE)
    return shared.get("step"), time.perf_counter()


def fork_state(code: str, lesson: str, run_id: str) -> dict | None:
    """Where the teacher's run ``run_id`` of ``lesson`` stood lately (``share``); None when it was not shared."""
    body = _classes().store.get(_fork(code))
    data = json.loads(body) if body is not None else None
    if not isinstance(data, dict) or (data.get("lesson"), data.get("run")) != (lesson, run_id):
        return None
    return data.get("shared") if isinstance(data.get("shared"), dict) else None


def keep_finished(code: str, lesson: str, run) -> None:
    """The teacher's finished run, for followers: its run file (their replay) and what a ghost keeps of it (its
    loss curve, its final boundary) for students who try it themselves to compare with."""
    # the lesson's figures come with torch: loaded here, by the teacher's finished run, never with the routes
    from autodiff_core.figures.classroom import ghost_record
    from autodiff_core.run_file_json import MAX_JSON_BYTES
    from autodiff_core.runs_io import run_record, to_json

    from ..lessons import lesson as registered

    snaps = run.view()[0] if run.status in ("done", "stopped", "diverged") else []
    figures = registered(lesson).run_figures
    if not snaps or figures is None:
        return
    store = _classes().store
    ghost = ghost_record(figures, "", snaps)
    store.put(_ghost(code), feed._dumps({"lesson": lesson, "run_id": run.run_id, "ghost": ghost}), IDLE)
    file = to_json(run_record(lesson, run.config, snaps, status=run.status, message=run.message))
    if len(file) <= MAX_JSON_BYTES:
        store.put(_run_file(code), feed._dumps({"lesson": lesson, "run_id": run.run_id, "file": file}), IDLE)


def teacher_run(code: str, lesson: str) -> tuple[str, str] | None:
    """(run id, run file) of the teacher's last finished run of ``lesson``; None when there is none."""
    body = _classes().store.get(_run_file(code))
    data = json.loads(body) if body is not None else None
    return (data["run_id"], data["file"]) if data is not None and data.get("lesson") == lesson else None


def teacher_ghost(code: str, lesson: str) -> dict | None:
    """The ghost of the teacher's last finished run of ``lesson``; None when there is none."""
    body = _classes().store.get(_ghost(code))
    data = json.loads(body) if body is not None else None
    return data if data is not None and data.get("lesson") == lesson else None


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
        raw = classes.store.get(_live_count(code))
        copies = int(raw) if raw else 0
        if copies != seen.copies:
            body = classes.store.get(_live(code))
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


def newest(code: str) -> tuple[str, dict] | None:
    """(lesson, payload) of the newest copy of the teacher's run, read now; None when there is none."""
    body = _classes().store.get(_live(code))
    if body is None:
        return None
    data = json.loads(body)
    return data.get("lesson", ""), data["payload"]


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
