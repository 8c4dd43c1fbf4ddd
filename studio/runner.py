"""Live runs: a trainer generator driven by a plain worker thread, tied to the browser session.

The worker makes no ``st.*`` calls. It appends snapshots to a ``LiveRun`` that the page keeps in
``st.session_state``; the live chart reads them from the live feed (``studio.feed``). The run ends when
the trainer ends, when Stop is pressed, when a new run replaces it, or when its browser session goes away.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

MAX_KEPT = 4000  # snapshots kept per run; beyond it every other one is dropped (the newest stays)
MAX_SECONDS = 15 * 60  # no run outlives this, whatever the speed setting


@dataclass
class LiveRun:
    """One training run and everything the page needs to draw it, now or after it ended."""

    lesson: str
    config: Any
    stream: Callable[[], Iterator[Any]]
    step_of: Callable[[Any], int]
    speed: float | None = None  # iterations per second; None runs as fast as the engine
    session_id: str | None = None
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    token: str = field(default_factory=lambda: secrets.token_urlsafe(16), repr=False)  # the live feed's URL
    payload: Callable[[LiveRun], dict] | None = field(default=None, repr=False)  # what the live feed serves
    snapshots: list = field(default_factory=list)
    count: int = 0  # snapshots produced so far (some may have been thinned out of ``snapshots``)
    status: str = "starting"  # starting, running, done, stopped, diverged, error
    message: str = ""
    started: float = field(default_factory=time.perf_counter)
    finished: float | None = None
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _pace: tuple[float, int] | None = field(default=None, repr=False)  # (time, step) pacing is based on

    @property
    def running(self) -> bool:
        return self.status in ("starting", "running")

    def start(self) -> LiveRun:
        self._thread = threading.Thread(target=self._work, name=f"train-{self.lesson}", daemon=True)
        self._thread.start()
        return self

    def stop(self, reason: str = "Stopped.") -> None:
        """Ask the worker to stop; it finishes the step in hand and closes the trainer."""
        if self.running:
            self.message = reason
            self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def set_speed(self, speed: float | None) -> None:
        """Change the pace mid-run; pacing restarts from the current step."""
        if speed != self.speed:
            self.speed, self._pace = speed, None

    def view(self) -> tuple[list, int]:
        """A consistent copy of the kept snapshots and the total produced."""
        with self._lock:
            return list(self.snapshots), self.count

    @property
    def last(self):
        with self._lock:
            return self.snapshots[-1] if self.snapshots else None

    def _work(self) -> None:
        stream = None
        try:
            stream = self.stream()
            self.status = "running"
            for snap in stream:
                self._append(snap)
                if getattr(snap, "diverged", False):
                    self._finish("diverged", snap.message)
                    return
                if self._wait(self.step_of(snap)):
                    self._finish("stopped", self.message or "Stopped.")
                    return
            self._finish("done", "")
        except Exception as exc:  # shown to the student as a message; the traceback goes to the log
            log.exception("training run %s failed", self.run_id)
            self._finish("error", _explain(exc))
        finally:
            if stream is not None:
                stream.close()

    def _append(self, snap) -> None:
        with self._lock:
            self.snapshots.append(snap)
            self.count += 1
            if len(self.snapshots) > MAX_KEPT:  # keep the first, thin the middle, keep the newest
                self.snapshots = self.snapshots[:-1:2] + [self.snapshots[-1]]

    def _wait(self, step: int) -> bool:
        """Sleep to keep to ``speed``; True when the run should end now."""
        now = time.perf_counter()
        if now - self.started > MAX_SECONDS:
            self.message = f"Stopped after {MAX_SECONDS // 60} minutes, the longest a run may take."
            return True
        if not _session_alive(self.session_id):
            self.message = "The browser tab closed."
            return True
        if self.speed is None:
            return self._stop.is_set()
        if self._pace is None:
            self._pace = (now, step)
        t0, s0 = self._pace
        delay = t0 + (step - s0) / self.speed - now
        return self._stop.wait(delay) if delay > 0 else self._stop.is_set()

    def _finish(self, status: str, message: str) -> None:
        self.message = message
        self.finished = time.perf_counter()
        self.status = status


def _explain(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    if "out of memory" in text.lower():
        return "The device ran out of memory. Make the sizes smaller or choose another device."
    return f"Training stopped with an error: {text}"


def _session_alive(session_id: str | None) -> bool:
    if session_id is None:
        return True
    try:
        from streamlit.runtime import Runtime

        return not Runtime.exists() or Runtime.instance().is_active_session(session_id)
    except Exception:  # the runtime is shutting down
        return False


def current_session_id() -> str | None:
    """The id of the browser session running this script, or None outside Streamlit."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else None
