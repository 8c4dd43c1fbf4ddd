"""The teacher's side of the class relay (``studio.room.relay``): while the teacher's page publishes a run on the live
feed, ``mirror`` copies each new build of its payload into the class store (``class:<code>:live``, with a counter
beside it), without the presenter's scale (a follower's chart takes its own view's). With it go where the run
stands, for a student who forks it mid-way (``share``: lesson 5's network), and, once it ends, its run file and
ghost for followers, and what it did for the question the class answered (a teacher's reload forgets the run,
the relay does not). What followers read of it: ``newest``, ``fork_state``, ``teacher_run``, ``teacher_ghost``.
"""

from __future__ import annotations

import json
import logging
import threading
import time

from .. import feed
from . import classes as _rules
from .classes import IDLE

log = logging.getLogger(__name__)
MAX_FORK_BYTES = 1_000_000  # a run's state for forking (lesson 5's whole network): a larger one is not relayed
FORK_EVERY = 0.5  # seconds between two copies of it (lesson 5's largest network in float64 is about 0.7 MB)


def live_key(code: str) -> str:
    return f"class:{code}:live"


def count_key(code: str) -> str:
    return f"class:{code}:live_n"


def _ghost(code: str) -> str:
    return f"class:{code}:ghost"


def _run_file(code: str) -> str:
    return f"class:{code}:run_file"


def _fork(code: str) -> str:
    return f"class:{code}:fork"


def _classes():
    return _rules.shared()


def copy(code: str, lesson: str, built) -> None:
    """Put one build of the teacher's run where followers read it, as a view without the presenter's scale draws
    it: a follower's chart takes its own view's scale (``presented``), not the teacher's projector's."""
    store = _classes().store
    payload = feed.unscaled(built.full)
    payload = {**payload, "layout_id": feed.layout_id(payload.get("layout"), payload.get("base"))}
    body = feed._dumps({"lesson": lesson, "payload": payload})
    store.put(live_key(code), body, IDLE)
    store.count(count_key(code), IDLE)


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


def newest(code: str) -> tuple[str, dict] | None:
    """(lesson, payload) of the newest copy of the teacher's run, read now; None when there is none."""
    body = _classes().store.get(live_key(code))
    if body is None:
        return None
    data = json.loads(body)
    return data.get("lesson", ""), data["payload"]
