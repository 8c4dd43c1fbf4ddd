"""What a run costs, and the server's budget for runs.

Before a run allocates anything its memory and step time are estimated from what its config says it needs
(``estimate``; each lesson's config has a ``footprint()``). A run over the per-run limits is refused with a
message that names the limit, and runs that together exceed the server's memory budget wait in a queue that
says so: ``Budget.admit`` tells the waiting run its place and why, and the run shows it."""

from __future__ import annotations

import dataclasses
import math
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autodiff_core.grading.remote import StudentActivation
from autodiff_core.grading.sandbox import Limits

from .process import process_wide

MAX_SECONDS = 15 * 60  # no run outlives this, whatever the speed setting
RESERVED, SMALL = 0.25, 1 / 16  # of the memory budget: kept for small runs, and how large a small run may be
MAX_STEP_SECONDS = 1.0  # estimated seconds a step may take on its device: longer ones are refused


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
        self._queue: deque = deque()
        self._admitted: weakref.WeakSet = weakref.WeakSet()
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

    def admit(self, run: Any, waiting: Callable[[str], None]) -> bool:
        """Wait until the run fits; False if it was stopped while waiting. While it waits, ``waiting(why)`` is
        told its place and why, in a student's words (the run shows it: status "queued").

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
                        return True
                    waiting(self._why_waiting(run, alike.index(run), device))
                    self._cond.wait(0.5)
            finally:
                self._queue.remove(run)
                self._cond.notify_all()

    def small(self, cost: Cost) -> bool:
        return cost.memory <= SMALL * self.limit(cost.device)

    def _why_waiting(self, run: Any, ahead: int, device: str) -> str:
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

    def release(self, run: Any) -> None:
        """Give back what an admitted run held (nothing if it never was admitted, or was released already)."""
        with self._cond:
            if run not in self._admitted:
                return
            self._admitted.discard(run)
            device = run.cost.device
            self._used[device] = max(0, self._used.get(device, 0) - run.cost.memory)
            self._cond.notify_all()

    def holds(self, run: Any) -> bool:
        """Whether the run holds its memory in the budget now."""
        with self._cond:
            return run in self._admitted


def _gb(n: int) -> str:
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{n / 2**20:.0f} MB"


def _where(device: str) -> str:
    return "CPU" if device == "cpu" else f"GPU ({device})"


BUDGET: Budget = process_wide("runner_budget", Budget)
