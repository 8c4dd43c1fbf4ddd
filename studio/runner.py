"""Live runs: a trainer generator driven by a plain worker thread, tied to the browser session.

The worker makes no ``st.*`` calls. It appends snapshots to a ``LiveRun`` that the page keeps in
``st.session_state``; the live chart reads them from the live feed (``studio.feed``). The run ends when
the trainer ends, when Stop is pressed, when a new run replaces it, or when its browser session goes away.

Before it allocates anything, a run is estimated and admitted by the server's budget (``studio.budget``), which
may queue it; it takes turns on the cores with the other runs (``studio.turns``); and the reaper stops it when
its page has been away too long and releases it when its session ends (``studio.reaper``). Stop shows at once
(the run is marked stopped; the worker drops the step in hand).
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from streamlit.runtime.scriptrunner import get_script_run_ctx

from autodiff_core.functions import bind_student_activations, student_activations
from autodiff_core.grading.remote import StudentActivation, StudentFunctionError, bind_run_workers
from autodiff_core.pace import LEAD, Pace
from autodiff_core.stopping import Stopped, stop_when

from . import budget, feed, reaper, trainers, turns
from .keeping import MAX_KEPT
from .shown import Shown

log = logging.getLogger(__name__)

@dataclass(eq=False)  # a run is itself: compared and hashed by identity
class LiveRun(Shown):
    """One training run and everything the page needs to draw it, now or after it ended."""

    lesson: str
    config: Any
    stream: Callable[[], Iterator[Any]]
    step_of: Callable[[Any], int]
    speed: float | None = None  # iterations per second; None runs as fast as the engine
    # seconds of its schedule a paced run may compute ahead of what it shows (autodiff_core.pace); 0 for a run
    # whose model the page shares (lesson 5's Pause and weight editor act on the model as shown)
    lead: float = LEAD
    session_id: str | None = None
    # ``remote(link)``: the run's stream computed whole in a sandboxed worker (``remote._Link.train``), used when
    # its activation is a student's Function on the CPU, in place of one round trip per call of the Function
    remote: Callable[[Any], Iterator[Any]] | None = field(default=None, repr=False)
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    token: str = field(default_factory=lambda: secrets.token_urlsafe(16), repr=False)  # the live feed's URL
    # ``fork_state()``: where the run stands, as plain data a student who forks it mid-way goes on from (read off
    # the training thread; None until there is one). Lesson 3 needs none: its live states carry its three weights.
    fork_state: Callable[[], dict | None] | None = field(default=None, repr=False)
    payload: Callable[[LiveRun], dict] | None = field(default=None, repr=False)  # what the live feed serves
    feed_cache: Any = field(default=None, repr=False)  # the live feed's encoded states (studio.feed)
    snapshots: list = field(default_factory=list)  # what the screen may show (computed ahead: ``_ahead``)
    shown_count: int = 0  # snapshots shown so far (some may have been thinned out of ``snapshots``)
    # ``light(snap)``: the few numbers of a snapshot its curves need. When given, ``trail`` keeps one for every
    # snapshot produced (up to MAX_TRAIL, then evenly over the steps), so curves keep the whole run's history
    # while the heavy ``snapshots`` are thinned to KEPT_BYTES.
    light: Callable[[Any], Any] | None = field(default=None, repr=False)
    trail: list = field(default_factory=list, repr=False)
    status: str = "starting"  # queued, starting, running, done, stopped, diverged, error
    message: str = ""
    cost: budget.Cost | None = None  # what the run was estimated to need (set by start())
    released: bool = False
    started: float = field(default_factory=time.perf_counter)
    began: float | None = None  # when it started computing, after any wait in the queue
    finished: float | None = None
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _pace: Pace = field(default_factory=lambda: Pace(None), repr=False)  # the paced schedule (speed set by start())
    _ahead: deque = field(default_factory=deque, repr=False)  # snapshots computed ahead, not yet due to show
    _nudge: threading.Event = field(default_factory=threading.Event, repr=False)  # wakes a resting worker
    _kept: int = field(default=MAX_KEPT, repr=False)
    away_since: float | None = field(default=None, repr=False)  # when the reaper saw its page gone
    _functions: Any = field(default=None, repr=False)  # the session's Functions from lesson 6, seen at start
    _worker: Any = field(default=None, repr=False)  # the sandboxed worker computing a student's Function
    _trainer: Any = field(default=None, repr=False)  # the trainer process computing the run (studio.trainers)
    _ended: tuple[str, str] | None = field(default=None, repr=False)  # how it ended there: (status, message)

    @property
    def running(self) -> bool:
        return self.status in ("queued", "starting", "running")

    @classmethod
    def ended(cls, lesson: str, config: Any, snaps: list, step_of: Callable[[Any], int], *, status: str = "done",
              message: str = "", **fields: Any) -> LiveRun:
        """A run that is over without this process having trained it (a kept run read back, a run computed whole
        at once): its snapshots, and the status and message it ended with. It never starts."""
        run = cls(lesson, config, lambda: iter(()), step_of, **fields)
        run.snapshots, run.count = list(snaps), len(snaps)
        run.status, run.message, run.finished = status, message, time.perf_counter()
        return run

    def start(self) -> LiveRun:
        """Start the worker, or refuse the run (status "error", the reason in ``message``) when its
        estimated memory or step time is over a limit; it then allocates nothing."""
        self._functions = dict(student_activations())
        self.cost = budget.estimate(self.config, self._functions.get(getattr(self.config, "activation", None)))
        self._pace.speed = self.speed
        problem = budget.BUDGET.refuse(self.cost)
        if problem:
            self._finish("error", problem)
            return self
        reaper.track(self)
        self._thread = threading.Thread(target=self._work, name=f"train-{self.lesson}", daemon=True)
        self._thread.start()
        return self

    def stop(self, reason: str = "Stopped.") -> None:
        """Stop now, as far as anyone can see: the run is marked stopped at once and keeps what it has shown
        (what it computed ahead is dropped). The worker drops the step in hand and closes the trainer."""
        with self._lock:
            if not self.running:
                return
            self._show_due()
            self._ahead.clear()
            self._stop.set()
            self._nudge.set()
            queued = self.status == "queued"
            self.message, self.finished, self.status = reason, time.perf_counter(), "stopped"
            worker, trainer = self._worker, self._trainer
        if worker is not None:  # a student's Function may be mid-call: end its process now
            worker.channel.kill()
        if trainer is not None:
            trainer.stop(self)
        if queued:
            budget.BUDGET.wake()

    def release(self, reason: str = "The browser tab closed.") -> None:
        """Stop the run, revoke its feed address and drop what it holds (its session has ended)."""
        self.stop(reason)
        feed.revoke(self)
        with self._lock:
            self.snapshots, self.trail = [], []
            self.payload = self.feed_cache = None
            self.released = True

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def set_speed(self, speed: float | None) -> None:
        """Change the pace mid-run: the new pace counts from the step shown now."""
        if speed == self.speed:
            return
        with self._lock:
            self.speed = speed
            pace, trainer = self._pace, self._trainer
            if pace.t0 is None:  # nothing shown yet: the schedule starts at its first step
                pace.speed = speed
            else:
                self._show_due()
                pace.change(speed, time.perf_counter(), self.step_of(self.snapshots[-1]))
                self._show_due()  # at full speed, everything computed ahead shows at once
        if trainer is not None:
            trainer.send(("speed", self.run_id, speed, pace.t0, pace.s0))
        self._nudge.set()  # a resting worker looks at its schedule again

    def _work(self) -> None:
        stream, turn = None, None
        stop_when(self._stop)  # the trainer checks it every step, not only when it yields a snapshot
        try:
            if not budget.BUDGET.admit(self, self._queued):
                return  # stopped while it waited
            with self._lock:
                if not self.running:
                    return
                self.status = "starting"
            self._open_worker()
            # OpenMP's thread count is each thread's own: without this, a run trained here would sum its
            # matrix products in another order than a trainer process or a worker (one thread each) and
            # differ from them in the last digit
            torch.set_num_threads(1)
            if trainers.portable(self) and self._hand_over():
                return
            whole = self._worker is not None and self.remote is not None and self.cost.device == "cpu"
            stream = self.remote(self._worker) if whole else self.stream()
            with self._lock:
                if self.running:
                    self.status, self.began = "running", time.perf_counter()
            while True:
                if turn is None:
                    turn = self._turn()
                if turn is not None:
                    turn.take()
                snap = next(stream, _END)
                if snap is _END:
                    break
                step = self.step_of(snap)
                self._produce(snap)
                if getattr(snap, "diverged", False):
                    self._end_when_shown(step, "diverged", snap.message)
                    return
                hungry = self._pace.hungry(step, time.perf_counter(), self.lead)
                if turn is not None and (turn.over() or not hungry):
                    turn.give()  # a paced run rests between bursts: never while holding a turn
                    turn = None  # the speed may change before the next step (set_speed)
                if self._rest(step, hungry):
                    self._finish("stopped", self.message or "Stopped.")
                    return
            self._end_when_shown(self._newest_step(), "done", "")
        except Stopped:  # Stop, mid-way through the trainer's steps: stop() has said so already
            stream = None  # the generator ended with the exception: its tensors are freed with it
        except Exception as exc:  # shown to the student as a message; the traceback goes to the log
            log.exception("training run %s failed", self.run_id)
            self._finish("error", _explain(exc))
        finally:
            if turn is not None:
                turn.give()
            try:
                if stream is not None:
                    stream.close()
            finally:
                stop_when(None)
                self._close_worker()
                budget.BUDGET.release(self)
                if self._stop.is_set():
                    reaper.trim_heap()  # hand the stopped run's memory back to the system now

    def _queued(self, why: str) -> None:
        """The budget's word while the run waits for memory: its place and why."""
        with self._lock:
            if self.running:
                self.status, self.message = "queued", why

    def _turn(self) -> turns.Turn | None:
        """Whose turn this run waits for before its next burst of steps. Full speed: the other full-speed runs'
        (TURNS). Paced, with small steps: the other small paced runs' (PACED), so that thirty tiny models do not
        hand the GIL to one another at every torch call. Paced with long steps, or computed in a worker process:
        nobody's (it would hold up every small run for a whole step, or while it waits on the worker)."""
        if self.speed is None:
            return turns.Turn(turns.TURNS)
        small = self.cost is None or self.cost.step_seconds <= turns.PACED_STEP
        return turns.Turn(turns.PACED) if small and self._worker is None else None

    def _open_worker(self) -> None:
        """Give this thread the session's Functions, and a worker of its own, sized to the run, for the one it
        trains with (so Stop can end that worker, and its limits are this run's)."""
        bind_student_activations(self._functions)
        act = self._functions.get(getattr(self.config, "activation", None))
        if isinstance(act, StudentActivation) and self.cost is not None:
            link = act.open(self.cost.worker, call_seconds=self.cost.call_seconds)
            bind_run_workers({act.name: link})
            with self._lock:
                self._worker = link
                running = self.running
            if not running:
                link.channel.kill()

    def _close_worker(self) -> None:
        with self._lock:
            link, self._worker = self._worker, None
        if link is not None:
            link.close()
        bind_run_workers({})
        bind_student_activations(None)

    def _hand_over(self) -> bool:
        """Have a trainer process compute the run (``studio.trainers``) and follow it until it ended there; False
        when none is ready (the run trains here)."""
        with self._lock:
            if not self.running:
                return True
            trainer = self._trainer = trainers.TRAINERS.take(self)
            if trainer is None:
                return False
            self.status, self.began = "running", time.perf_counter()
        while self._ended is None and not self._stop.is_set():
            if time.perf_counter() - self.started > budget.MAX_SECONDS:
                self.stop(f"Stopped after {budget.MAX_SECONDS // 60} minutes, the longest a run may take.")
                return True
            self._nudge.wait(1.0)
            self._nudge.clear()
        if self._ended is not None:
            status, message = self._ended
            self._end_when_shown(self._newest_step(), status, _explain_text(message) if status == "error" else message)
        return True

    def trainer_ended(self, status: str, message: str) -> None:
        """The trainer process finished the run (done, diverged, or an error, in words)."""
        self._ended = (status, message)
        self._nudge.set()

    def _rest(self, step: int, hungry: bool) -> bool:
        """Rest while the run is far enough ahead of its schedule; True when the run should end now."""
        if time.perf_counter() - self.started > budget.MAX_SECONDS:
            self.message = f"Stopped after {budget.MAX_SECONDS // 60} minutes, the longest a run may take."
            return True
        while not hungry and not self._stop.is_set():
            self._nudge.wait(max(0.0, self._pace.rest_until(step, self.lead) - time.perf_counter()))
            self._nudge.clear()
            hungry = self._pace.rest_until(step, self.lead) <= time.perf_counter()
        return self._stop.is_set()

    def _end_when_shown(self, step: int | None, status: str, message: str) -> None:
        """End the run with ``status`` once its last snapshot (at ``step``) has shown, as paced."""
        while step is not None and not self._stop.is_set():
            delay = self._pace.due(step) - time.perf_counter()
            if delay <= 0:
                break
            self._nudge.wait(delay)
            self._nudge.clear()
        self._finish(status, message)

    def _finish(self, status: str, message: str) -> None:
        with self._lock:
            if not self.running:  # Stop came first: it stays stopped
                return
            while self._ahead and status != "stopped":  # the end: whatever was computed shows now
                self._show(self._ahead.popleft())
            self.message = message
            self.finished = time.perf_counter()
            self.status = status


def _explain(exc: Exception) -> str:
    if isinstance(exc, StudentFunctionError):
        return str(exc)
    return _explain_text(str(exc).strip() or type(exc).__name__)


def _explain_text(text: str) -> str:
    if text == trainers.LOST:
        return text
    if "out of memory" in text.lower():
        return "The device ran out of memory. Make the sizes smaller or choose another device."
    return f"Training stopped with an error: {text}"


def current_session_id() -> str | None:
    """The id of the browser session running this script, or None outside Streamlit."""
    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else None


_END = object()
