"""Live runs: a trainer generator driven by a plain worker thread, tied to the browser session.

The worker makes no ``st.*`` calls. It appends snapshots to a ``LiveRun`` that the page keeps in
``st.session_state``; the live chart reads them from the live feed (``studio.feed``). The run ends when
the trainer ends, when Stop is pressed, when a new run replaces it, or when its browser session goes away.

One server holds a class, so before a run allocates anything its memory and step time are estimated
from its config (``estimate``): a run over the per-run limits is refused with a message that names
the limit, and runs that together exceed the server's memory budget wait in a visible queue. Stop
shows at once (the run is marked stopped; the worker drops the step in hand).

A page that loses its connection (classroom Wi-Fi) keeps its run: the run goes on for ``GRACE`` seconds
without it, and the reconnected page's chart picks up every state. After ``GRACE`` the run stops and keeps
what it recorded for the session. Once Streamlit drops the session (``server.disconnectedSessionTTL``,
120 s) its runs are released explicitly (their snapshots dropped, their feed addresses revoked):
``runner.postScriptGC`` is off, so nothing else would free them promptly.
"""

from __future__ import annotations

import ctypes
import dataclasses
import gc
import logging
import math
import os
import secrets
import sys
import threading
import time
import uuid
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from autodiff_core.functions import bind_student_activations, student_activations
from autodiff_core.grading.remote import StudentActivation, StudentFunctionError, bind_run_workers
from autodiff_core.grading.sandbox import Limits
from autodiff_core.stopping import Stopped, stop_when

from .feed import process_wide

log = logging.getLogger(__name__)

MAX_KEPT = 4000  # snapshots kept per run; beyond it every other one is dropped (the newest stays)
KEPT_BYTES = 4 * 2**20  # and no more than about this much of them (a playground snapshot holds a surface)
MAX_TRAIL = 8000  # light records (a run's curves) kept per run; beyond it they are thinned to even steps
MAX_SECONDS = 15 * 60  # no run outlives this, whatever the speed setting
RESERVED, SMALL = 0.25, 1 / 16  # of the memory budget: kept for small runs, and how large a small run may be
MAX_STEP_SECONDS = 1.0  # estimated seconds a step may take on its device: longer ones are refused

def _grace_seconds() -> float:
    try:
        return max(1.0, float(os.environ.get("STUDIO_RUN_GRACE_SECONDS", "60")))
    except ValueError:
        return 60.0


GRACE = _grace_seconds()  # seconds a run goes on without its page (a network blip, a reload) before it stops
AWAY = f"The page was away for more than {GRACE:g} s; what the run recorded until then is kept."


@dataclass(eq=False)  # a run is itself: compared and hashed by identity
class LiveRun:
    """One training run and everything the page needs to draw it, now or after it ended."""

    lesson: str
    config: Any
    stream: Callable[[], Iterator[Any]]
    step_of: Callable[[Any], int]
    speed: float | None = None  # iterations per second; None runs as fast as the engine
    session_id: str | None = None
    # ``remote(link)``: the run's stream computed whole in a sandboxed worker (``remote._Link.train``), used when
    # its activation is a student's Function on the CPU, in place of one round trip per call of the Function
    remote: Callable[[Any], Iterator[Any]] | None = field(default=None, repr=False)
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    token: str = field(default_factory=lambda: secrets.token_urlsafe(16), repr=False)  # the live feed's URL
    payload: Callable[[LiveRun], dict] | None = field(default=None, repr=False)  # what the live feed serves
    feed_cache: Any = field(default=None, repr=False)  # the live feed's encoded states (studio.feed)
    snapshots: list = field(default_factory=list)
    count: int = 0  # snapshots produced so far (some may have been thinned out of ``snapshots``)
    # ``light(snap)``: the few numbers of a snapshot its curves need. When given, ``trail`` keeps one for every
    # snapshot produced (up to MAX_TRAIL, then evenly over the steps), so curves keep the whole run's history
    # while the heavy ``snapshots`` are thinned to KEPT_BYTES.
    light: Callable[[Any], Any] | None = field(default=None, repr=False)
    trail: list = field(default_factory=list, repr=False)
    status: str = "starting"  # queued, starting, running, done, stopped, diverged, error
    message: str = ""
    cost: Cost | None = None  # what the run was estimated to need (set by start())
    admitted: bool = False  # holds its memory in the server's budget
    released: bool = False
    started: float = field(default_factory=time.perf_counter)
    began: float | None = None  # when it started computing, after any wait in the queue
    finished: float | None = None
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _pace: tuple[float, int] | None = field(default=None, repr=False)  # (time, step) pacing is based on
    _kept: int = field(default=MAX_KEPT, repr=False)
    _away_since: float | None = field(default=None, repr=False)
    _functions: Any = field(default=None, repr=False)  # the session's Functions from lesson 6, seen at start
    _worker: Any = field(default=None, repr=False)  # the sandboxed worker computing a student's Function

    @property
    def running(self) -> bool:
        return self.status in ("queued", "starting", "running")

    def start(self) -> LiveRun:
        """Start the worker, or refuse the run (status "error", the reason in ``message``) when its
        estimated memory or step time is over a limit; it then allocates nothing."""
        self._functions = dict(student_activations())
        self.cost = estimate(self.config, self._functions.get(getattr(self.config, "activation", None)))
        problem = BUDGET.refuse(self.cost)
        if problem:
            self._finish("error", problem)
            return self
        _track(self)
        self._thread = threading.Thread(target=self._work, name=f"train-{self.lesson}", daemon=True)
        self._thread.start()
        return self

    def stop(self, reason: str = "Stopped.") -> None:
        """Stop now, as far as anyone can see: the run is marked stopped at once and keeps what it has.
        The worker drops the step in hand and closes the trainer."""
        with self._lock:
            if not self.running:
                return
            self._stop.set()
            queued = self.status == "queued"
            self.message, self.finished, self.status = reason, time.perf_counter(), "stopped"
            worker = self._worker
        if worker is not None:  # a student's Function may be mid-call: end its process now
            worker.channel.kill()
        if queued:
            BUDGET.wake()

    def release(self, reason: str = "The browser tab closed.") -> None:
        """Stop the run, revoke its feed address and drop what it holds (its session has ended)."""
        from . import feed

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
        """Change the pace mid-run; pacing restarts from the current step."""
        if speed != self.speed:
            self.speed, self._pace = speed, None

    def view(self) -> tuple[list, int]:
        """A consistent copy of the kept snapshots and the total produced."""
        with self._lock:
            return list(self.snapshots), self.count

    def trail_view(self) -> list:
        """A consistent copy of the light records: one for every snapshot produced (see ``light``)."""
        with self._lock:
            return list(self.trail)

    @property
    def last(self):
        with self._lock:
            return self.snapshots[-1] if self.snapshots else None

    def _work(self) -> None:
        stream, turn = None, None
        stop_when(self._stop)  # the trainer checks it every step, not only when it yields a snapshot
        try:
            if not BUDGET.admit(self):
                return  # stopped while it waited
            with self._lock:
                if not self.running:
                    return
                self.status = "starting"
            self._open_worker()
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
                self._append(snap)
                if getattr(snap, "diverged", False):
                    self._finish("diverged", snap.message)
                    return
                if turn is not None and (self.speed is not None or turn.over()):
                    turn.give()  # a paced run sleeps between steps: never while holding a turn
                    turn = None  # the speed may change before the next step (set_speed)
                if self._wait(self.step_of(snap)):
                    self._finish("stopped", self.message or "Stopped.")
                    return
            self._finish("done", "")
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
                BUDGET.release(self)
                if self._stop.is_set():
                    _trim_heap()  # hand the stopped run's memory back to the system now

    def _turn(self) -> _Turn | None:
        """Whose turn this run waits for before its next step. Full speed: the other full-speed runs' (TURNS).
        Paced, with small steps: the other small paced runs' (PACED), so that thirty tiny models do not hand
        the GIL to one another at every torch call. Paced with long steps, or computed in a worker process:
        nobody's (it would hold up every small run for a whole step, or while it waits on the worker)."""
        if self.speed is None:
            return _Turn(TURNS)
        small = self.cost is None or self.cost.step_seconds <= PACED_STEP
        return _Turn(PACED) if small and self._worker is None else None

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

    def _append(self, snap) -> None:
        with self._lock:
            if self._stop.is_set():  # stopped: what is shown stays as it was when Stop was pressed
                return
            if self.count == 0:  # a run may start with snapshots it carries on from (the playground's)
                self._kept = max(100, min(MAX_KEPT, KEPT_BYTES // max(1, _size(snap))))
            self.snapshots.append(snap)
            self.count += 1
            if len(self.snapshots) > self._kept:  # keep the first, thin the middle, keep the newest
                self.snapshots = self.snapshots[:-1:2] + [self.snapshots[-1]]
            if self.light is not None:
                self.trail.append(self.light(snap))
                if len(self.trail) > MAX_TRAIL:
                    self.trail = evenly(self.trail, self.step_of, MAX_TRAIL // 2)

    def _wait(self, step: int) -> bool:
        """Sleep to keep to ``speed``; True when the run should end now."""
        now = time.perf_counter()
        if now - self.started > MAX_SECONDS:
            self.message = f"Stopped after {MAX_SECONDS // 60} minutes, the longest a run may take."
            return True
        if self.speed is None:
            return self._stop.is_set()
        if self._pace is None:
            self._pace = (now, step)
        t0, s0 = self._pace
        delay = t0 + (step - s0) / self.speed - now
        return self._stop.wait(delay) if delay > 0 else self._stop.is_set()

    def _finish(self, status: str, message: str) -> None:
        with self._lock:
            if not self.running:  # Stop came first: it stays stopped
                return
            self.message = message
            self.finished = time.perf_counter()
            self.status = status


def evenly(records: list, step_of: Callable[[Any], int], n: int) -> list:
    """At most about ``n`` of ``records`` (in step order), spread evenly over the steps they span; the first
    and the newest always stay. Thinning by index would keep a run's dense start and starve its end."""
    first, newest = step_of(records[0]), step_of(records[-1])
    gap, kept, due = (newest - first) / max(1, n), [], first
    for r in records[:-1]:
        step = step_of(r)
        if step >= due:
            kept.append(r)
            due = step + gap
    kept.append(records[-1])
    return kept


def _explain(exc: Exception) -> str:
    if isinstance(exc, StudentFunctionError):
        return str(exc)
    text = str(exc).strip() or type(exc).__name__
    if "out of memory" in text.lower():
        return "The device ran out of memory. Make the sizes smaller or choose another device."
    return f"Training stopped with an error: {text}"


def _session_alive(session_id: str | None) -> bool:
    """Whether the session's page is connected now."""
    if session_id is None:
        return True
    try:
        from streamlit.runtime import Runtime

        return not Runtime.exists() or Runtime.instance().is_active_session(session_id)
    except Exception:  # the runtime is shutting down
        return False


def _session_kept(session_id: str | None) -> bool:
    """Whether Streamlit still holds the session, connected or kept for its page to reconnect."""
    if session_id is None:
        return True
    try:
        from streamlit.runtime import Runtime

        return not Runtime.exists() or Runtime.instance()._session_mgr.get_session_info(session_id) is not None
    except Exception:  # the runtime is shutting down, or the private attribute moved: the run has stopped after
        return True  # GRACE anyway, and goes with its session's state when Streamlit drops it


def current_session_id() -> str | None:
    """The id of the browser session running this script, or None outside Streamlit."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else None


_END = object()


class Turns:
    """Full-speed runs take turns: at most ``n`` compute at once, each for up to ``QUANTUM`` s, first
    come first served. Thirty threads stepping small models at once mostly hand the GIL to one another
    (measured: 30 runs together took up to 1.4 times as long as the same 30 one after another); in
    turns, the cores compute. Paced runs with small steps take turns of their own (PACED, one at a time, a step
    a turn, never behind a full-speed run); see ``LiveRun._turn``."""

    def __init__(self, n: int) -> None:
        self.free = n
        self.waiting: deque[threading.Event] = deque()
        self.lock = threading.Lock()

    def acquire(self) -> None:
        with self.lock:
            if self.free and not self.waiting:
                self.free -= 1
                return
            ready = threading.Event()
            self.waiting.append(ready)
        ready.wait()  # handed over by release(): no one can barge in

    def release(self) -> None:
        with self.lock:
            if self.waiting:
                self.waiting.popleft().set()
            else:
                self.free += 1


QUANTUM = 0.05  # seconds of steps a full-speed run takes in one turn
TURNS: Turns = process_wide("runner_turns", lambda: Turns(max(1, os.cpu_count() or 1)))
PACED: Turns = process_wide("runner_paced_turns", lambda: Turns(1))
PACED_STEP = 0.005  # estimated seconds a step: a paced run with steps up to this long takes PACED turns


class _Turn:
    """One run's hold on a turn (``Turns``)."""

    def __init__(self, turns: Turns) -> None:
        self.turns, self.since = turns, None

    def take(self) -> None:
        if self.since is None:
            self.turns.acquire()
            self.since = time.perf_counter()

    def over(self) -> bool:
        return self.since is not None and time.perf_counter() - self.since > QUANTUM

    def give(self) -> None:
        if self.since is not None:
            self.since = None
            self.turns.release()


# ---- what a run costs, and the server's budget ----

@dataclass(frozen=True)
class Cost:
    """A run's estimated peak memory on its device and seconds per step there."""

    memory: int  # bytes
    step_seconds: float
    device: str  # "cpu", "cuda:0", ...
    hint: str = "Make the sizes smaller."  # what to change when it is over a limit
    worker: Limits | None = None  # a student's Function: the limits of the sandboxed worker that computes it
    call_seconds: float = 0.0  # and the wall-clock seconds one call of it may take


def with_student_function(cost: Cost, act: StudentActivation, elements: int, calls: int, steps: int | None) -> Cost:
    """``cost`` plus what a student's Function adds: its worker's memory (what one call makes, per element as
    lesson 6's Check measured it, for each of the step's ``calls`` of ``elements`` elements, kept for backward)
    and its time, and the worker's limits: that memory and a margin, CPU seconds in proportion to the steps."""
    call_bytes = act.bytes_per_element * elements
    call_seconds = act.seconds_per_element * elements + IPC_SECONDS
    worker_mb = WORKER_BASE_MB + math.ceil(2 * calls * call_bytes / 2**20)
    cpu = MAX_SECONDS if steps is None else min(MAX_SECONDS, 60 + math.ceil(4 * steps * calls * call_seconds))
    return dataclasses.replace(
        cost, memory=cost.memory + worker_mb * 2**20, step_seconds=cost.step_seconds + calls * call_seconds,
        worker=Limits(cpu_seconds=cpu, memory_mb=worker_mb, wall_seconds=MAX_SECONDS + 60),
        call_seconds=max(10.0, 50 * call_seconds),
        hint=cost.hint + " Your Function from lesson 6 adds about "
                         f"{_gb(int(call_bytes))} a call at this size.")


WORKER_BASE_MB = 256  # a worker's room past what torch already maps, before the run's own tensors
IPC_SECONDS = 2e-4  # one round trip to the worker and back, with the tensor's bytes (bench/sandbox_training.py)


def estimate(config: Any, activation: Any = None) -> Cost:
    """Peak memory and step time of a run, from what its config says it needs (``config.footprint()``:
    numbers of its dtype and flops, nothing allocated), with what a student's Function as its ``activation``
    adds (``with_student_function``). A run with no config (``None``) computes nothing sized."""
    device = str(getattr(config, "device", "cpu"))
    itemsize = 8 if getattr(config, "dtype", "float32") == "float64" else 4
    if config is None:
        return Cost(2**20, 0.0, device)
    if not callable(getattr(config, "footprint", None)):
        raise TypeError(f"{type(config).__name__} does not say what a run needs: give it a footprint() method.")
    need = config.footprint()
    cost = Cost(int(itemsize * need.numbers) + need.fixed_bytes,
                need.flops / flop_rate(device, itemsize) + need.fixed_seconds, device, need.hint)
    if isinstance(activation, StudentActivation) and need.activation_elements:
        return with_student_function(cost, activation, need.activation_elements, need.activation_calls,
                                     need.activation_steps)
    return cost


_rates: dict[tuple[str, int], float] = {}
CPU_GFLOPS = float(os.environ.get("STUDIO_CPU_GFLOPS", "20"))  # one core, float32; float64 half as fast


def flop_rate(device: str, itemsize: int) -> float:
    """Flops per second a run reaches on ``device``. The CPU's is a fixed, modest figure (one torch
    thread, measured 7-40 GFLOP/s on a shared 2-core server): timing it on a busy server would make
    the same run accepted one minute and refused the next. A GPU's is measured once, on a 2048-square
    matrix product."""
    key = (device, itemsize)
    if key not in _rates:
        if not device.startswith(("cuda", "mps")):
            _rates[key] = CPU_GFLOPS * 1e9 / (2 if itemsize == 8 else 1)
        else:
            import torch

            from autodiff_core.devices import resolve_device, synchronize

            dev = resolve_device(device)
            a = torch.ones(2048, 2048, device=dev, dtype=torch.float64 if itemsize == 8 else torch.float32)
            a.mm(a)
            synchronize(dev)
            best = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                a.mm(a)
                synchronize(dev)
                best = min(best, time.perf_counter() - t0)
            _rates[key] = 2 * 2048**3 / max(best, 1e-9)
    return _rates[key]


def _device_memory(device: str) -> int:
    """Bytes of memory the device has: the host's RAM for the CPU, the GPU's own otherwise."""
    if device.startswith("cuda"):
        import torch

        return torch.cuda.get_device_properties(torch.device(device)).total_memory
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 8 * 2**30


def _env_bytes(name: str) -> int | None:
    value = os.environ.get(name)
    return int(float(value) * 2**20) if value else None


class Budget:
    """The server's memory for runs, per device: a share of each device's memory that all runs together
    may hold. A run that alone needs more than ``1 - RESERVED`` of the budget, or steps slower than
    ``MAX_STEP_SECONDS``, is refused; one that does not fit next to the runs going waits, and says so (see ``admit``).

    ``STUDIO_MEMORY_BUDGET_MB`` sets the CPU budget (default: a quarter of the RAM); GPUs get 80 % of
    their memory."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._used: dict[str, int] = {}
        self._queue: deque[LiveRun] = deque()
        self._admitted: weakref.WeakSet[LiveRun] = weakref.WeakSet()
        self._limits: dict[str, int] = {}

    def limit(self, device: str) -> int:
        if device not in self._limits:
            share = 0.8 if device.startswith(("cuda", "mps")) else 0.25
            env = _env_bytes("STUDIO_MEMORY_BUDGET_MB") if device == "cpu" else None
            self._limits[device] = env if env is not None else int(share * _device_memory(device))
        return self._limits[device]

    def used(self, device: str = "cpu") -> int:
        with self._cond:
            return self._used.get(device, 0)

    def refuse(self, cost: Cost) -> str:
        """Why a run with this cost can never run here, or ""."""
        limit = self.limit(cost.device)
        if cost.memory > (1 - RESERVED) * limit:  # the rest is kept for small runs
            return (f"This run needs about {_gb(cost.memory)} of memory; this server lets one run on the "
                    f"{_where(cost.device)} use {_gb(int((1 - RESERVED) * limit))} (all runs together "
                    f"{_gb(limit)}). {cost.hint}")
        if cost.step_seconds > MAX_STEP_SECONDS:
            return (f"Each step of this run would take about {cost.step_seconds:.1f} s on the {_where(cost.device)}; "
                    f"the limit is {MAX_STEP_SECONDS:g} s a step, so that Stop and the chart keep up. {cost.hint}")
        return ""

    def admit(self, run: LiveRun) -> bool:
        """Wait (status "queued") until the run fits; False if it was stopped while waiting.

        Scheduled by size, so that a small run never waits behind a big one: the last ``RESERVED`` of the budget
        is kept for small runs (each at most ``SMALL`` of it), which a big run never takes. Small runs wait only
        behind small ones, big behind big, each first come first served."""
        cost = run.cost or Cost(0, 0.0, "cpu")
        with self._cond:
            self._queue.append(run)
            try:
                while True:
                    if not run.running:
                        return False
                    device, limit = cost.device, self.limit(cost.device)
                    small = self.small(cost)
                    alike = [r for r in self._queue if r.cost and r.cost.device == device
                             and self.small(r.cost) == small]
                    used = self._used.get(device, 0)
                    room = limit if small else int((1 - RESERVED) * limit)
                    if alike[0] is run and used + cost.memory <= room:
                        self._used[device] = used + cost.memory
                        self._admitted.add(run)
                        run.admitted = True
                        return True
                    with run._lock:
                        if run.running:
                            run.status = "queued"
                            run.message = self._why_waiting(run, alike.index(run), device)
                    self._cond.wait(0.5)
            finally:
                self._queue.remove(run)
                self._cond.notify_all()

    def small(self, cost: Cost) -> bool:
        return cost.memory <= SMALL * self.limit(cost.device)

    def _why_waiting(self, run: LiveRun, ahead: int, device: str) -> str:
        """The queued run's place and why, in a student's words (holding the condition's lock)."""
        others = [r for r in self._admitted if r.cost.device == device]
        bigger = sum(1 for r in others if r.cost.memory > run.cost.memory)
        going = (f"{bigger} larger run{'s are' if bigger != 1 else ' is'}" if bigger == len(others) and bigger
                 else f"{len(others)} run{'s are' if len(others) != 1 else ' is'}" if others else "other runs are")
        place = "you are next" if ahead == 0 else f"{ahead} run{'s' if ahead != 1 else ''} ahead of yours"
        return (f"Waiting: {going} using this server's memory for the {_where(device)} (yours needs about "
                f"{_gb(run.cost.memory)}); {place}.")

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def release(self, run: LiveRun) -> None:
        if not getattr(run, "admitted", False):
            return
        with self._cond:
            run.admitted = False
            self._admitted.discard(run)
            device = run.cost.device
            self._used[device] = max(0, self._used.get(device, 0) - run.cost.memory)
            self._cond.notify_all()


def _gb(n: int) -> str:
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{n / 2**20:.0f} MB"


def _where(device: str) -> str:
    return "CPU" if device == "cpu" else f"GPU ({device})"


BUDGET: Budget = process_wide("runner_budget", Budget)


def _size(obj, depth: int = 0) -> int:
    """Roughly the bytes an object holds (its fields, and lists or tuples in them, two levels deep)."""
    size = sys.getsizeof(obj)
    if depth > 2:
        return size
    if isinstance(obj, (list, tuple)):
        if obj:
            size += len(obj) * _size(obj[0], depth + 1)
        return size
    slots = getattr(type(obj), "__slots__", ())
    fields = [getattr(obj, f, None) for f in slots] if slots else list(getattr(obj, "__dict__", {}).values())
    return size + sum(_size(v, depth + 1) for v in fields if isinstance(v, (list, tuple, str, float, int)))


# ---- releasing the runs of sessions that ended ----

_live: weakref.WeakSet[LiveRun] = process_wide("runner_live", weakref.WeakSet)
_reaper_lock = process_wide("runner_reaper_lock", threading.Lock)
REAP_EVERY = 1.0


def _track(run: LiveRun) -> None:
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
            run._away_since = None
            continue
        if run._away_since is None:
            run._away_since = now
        if now - run._away_since >= GRACE and run.running:
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
        _trim_heap()
    return released


_collect_due = False
_sessions_seen = 0


def _session_count() -> int | None:
    """How many sessions Streamlit holds (connected, or kept for a reconnect); None outside a server."""
    try:
        from streamlit.runtime import Runtime

        return len(Runtime.instance()._session_mgr.list_sessions()) if Runtime.exists() else None
    except Exception:  # a private attribute: if it moves, collect only when runs are released
        return None


def _prune_idle_threads() -> None:
    from . import boot

    boot.prune_idle_threads()


def _trim_heap() -> None:
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass
