"""Releasing the runs of sessions that ended.

A page that loses its connection (classroom Wi-Fi) keeps its run: the run goes on for ``GRACE`` seconds
without it, and the reconnected page's chart picks up every state. After ``GRACE`` the run stops and keeps
what it recorded for the session. Once Streamlit drops the session (``server.disconnectedSessionTTL``,
120 s) its runs are released explicitly (their snapshots dropped, their feed addresses revoked):
``runner.postScriptGC`` is off, so nothing else would free them promptly."""

from __future__ import annotations

import ctypes
import gc
import logging
import os
import threading
import time
import weakref
from typing import Any

from streamlit.runtime import Runtime

from . import server_loop
from .process import process_wide

log = logging.getLogger(__name__)


def _grace_seconds() -> float:
    try:
        return max(1.0, float(os.environ.get("STUDIO_RUN_GRACE_SECONDS", "60")))
    except ValueError:
        return 60.0


GRACE = _grace_seconds()  # seconds a run goes on without its page (a network blip, a reload) before it stops
AWAY = f"The page was away for more than {GRACE:g} s; what the run recorded until then is kept."


def _session_alive(session_id: str | None) -> bool:
    """Whether the session's page is connected now."""
    if session_id is None:
        return True
    try:
        return not Runtime.exists() or Runtime.instance().is_active_session(session_id)
    except Exception:  # the runtime is shutting down
        return False


def _session_kept(session_id: str | None) -> bool:
    """Whether Streamlit still holds the session, connected or kept for its page to reconnect."""
    if session_id is None:
        return True
    try:
        return not Runtime.exists() or Runtime.instance()._session_mgr.get_session_info(session_id) is not None
    except Exception:  # the runtime is shutting down, or the private attribute moved: the run has stopped after
        return True  # GRACE anyway, and goes with its session's state when Streamlit drops it


_live: weakref.WeakSet = process_wide("runner_live", weakref.WeakSet)
_reaper_lock = process_wide("runner_reaper_lock", threading.Lock)
REAP_EVERY = 1.0


def track(run: Any) -> None:
    """Watch ``run``'s session: stop the run when its page has been away for ``GRACE`` s, and release it once
    Streamlit has dropped the session."""
    if run.session_id is None:
        return
    with _reaper_lock:
        _live.add(run)
        if not any(t.name == "studio-reaper" and t.is_alive() for t in threading.enumerate()):
            threading.Thread(target=_reap_forever, name="studio-reaper", daemon=True).start()


def _reap_forever() -> None:
    while True:
        time.sleep(REAP_EVERY)
        try:
            reap()
        except Exception:  # never let the reaper die
            log.exception("releasing ended sessions' runs failed")


_last_collect = 0.0


def reap(now: float | None = None) -> int:
    """Stop the runs whose page has been away for ``GRACE`` s, release those whose session Streamlit dropped;
    returns how many were released."""
    global _last_collect
    now = time.monotonic() if now is None else now
    released = 0
    with _reaper_lock:
        runs = list(_live)
    for run in runs:
        if _session_alive(run.session_id):
            run.away_since = None
            continue
        if run.away_since is None:
            run.away_since = now
        if now - run.away_since >= GRACE and run.running:
            run.stop(AWAY)
        if not _session_kept(run.session_id):
            run.release()
            with _reaper_lock:
                _live.discard(run)
            released += 1
    global _collect_due, _sessions_seen
    sessions = _session_count()
    if released or (sessions is not None and sessions < _sessions_seen):
        _collect_due = True  # runs released, or Streamlit dropped sessions (120 s after they left)
    _sessions_seen = sessions if sessions is not None else _sessions_seen
    if _collect_due and now - _last_collect > 10:
        # The post-script GC is off, and a closed session's objects sit in reference cycles: collect
        # them now (once in a while, off the script threads), then hand freed heap back to the system.
        _last_collect, _collect_due = now, False
        _prune_idle_threads()
        gc.collect()
        trim_heap()
    return released


_collect_due = False
_sessions_seen = 0


def _session_count() -> int | None:
    """How many sessions Streamlit holds (connected, or kept for a reconnect); None outside a server."""
    try:
        return len(Runtime.instance()._session_mgr.list_sessions()) if Runtime.exists() else None
    except Exception:  # a private attribute: if it moves, collect only when runs are released
        return None


def _prune_idle_threads() -> None:
    server_loop.prune_idle_threads()


def trim_heap() -> None:
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass
