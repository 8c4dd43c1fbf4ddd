"""Trainer processes: ``python -m autodiff_core.pool FD [FD ...]``, which compute small training runs for the server.

A small model's step is a fraction of a millisecond of Python, and one server process runs all of its Python on
one core, under one lock (the GIL): thirty students' lesson-3 runs trained in the server needed more than the
core that also answers their pages. The server (``studio.trainers``) starts a few of these processes and hands
each small run on the CPU to one of them. A process computes its runs in bursts: a paced run up to ``LEAD``
seconds ahead of its schedule (``autodiff_core.pace``), runs at full speed in turns, and sends the snapshots
back; the server shows each when its time comes.

One process is started with a socket for each trainer the server wants. It imports torch and warms up once, then
forks a process for each socket after the first and serves the first itself: the forks share the imported
modules' memory (about 10 MB of their own each, against about 220 MB for a process that imports torch itself).

Only the server's own trainers run here, with their frozen configs: a student's code never does (it runs in the
sandbox, ``autodiff_core.grading``). Messages both ways are pickles over a socket that only the server holds.
Each process ends when its socket closes: when the server ends, however it ends.

Server to process: ``("start", id, stream, step_of, speed, lead)``, ``("speed", id, speed, t0, s0)``,
``("stop", id)``. Process to server: ``("ready", pid)``, ``("snaps", id, [snapshot, ...], anchor)``,
``("end", id, status, message)`` with status done, diverged or error.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

from .pace import Pace

log = logging.getLogger(__name__)
QUANTUM = 0.02  # seconds of steps one run computes before the process looks at its messages and other runs


@dataclass(eq=False)
class Job:
    """One run this process computes."""

    id: str
    steps: Iterator
    step_of: Callable
    pace: Pace
    lead: float
    newest: int | None = None  # the newest step computed
    anchored: bool = False  # the schedule's anchor has been sent

    def hungry(self, now: float) -> bool:
        return self.newest is None or self.pace.hungry(self.newest, now, self.lead)

    def wakes(self) -> float:
        """When a resting run computes again."""
        return self.pace.rest_until(self.newest, self.lead)


@dataclass
class Worker:
    """The process's runs and its end of the socket."""

    conn: Connection
    jobs: dict[str, Job] = field(default_factory=dict)

    def serve(self) -> None:
        while True:
            job = self._next()
            if not self.conn.poll(0 if job is not None else self._rest()):
                if job is not None:
                    self._burst(job)
                continue
            try:
                while self.conn.poll(0):
                    self._handle(self.conn.recv())
            except (EOFError, OSError):
                return  # the server is gone

    def _next(self) -> Job | None:
        """A paced run that is short of its lead, the one due soonest first; else a full-speed run, in turn."""
        now = time.perf_counter()
        paced = [j for j in self.jobs.values() if j.pace.speed is not None and j.hungry(now)]
        if paced:
            return min(paced, key=lambda j: j.pace.due(j.newest) if j.newest is not None else now)
        return next((j for j in self.jobs.values() if j.pace.speed is None), None)

    def _rest(self) -> float | None:
        """Seconds until a resting run computes again (None: no run, wait for the server)."""
        if not self.jobs:
            return None
        return max(0.0, min(j.wakes() for j in self.jobs.values()) - time.perf_counter())

    def _handle(self, message: tuple) -> None:
        kind, run_id, *rest = message
        if kind == "start":
            stream, step_of, speed, lead = rest
            self.jobs[run_id] = Job(run_id, stream(), step_of, Pace(speed), lead)
        elif kind == "speed" and run_id in self.jobs:
            speed, t0, s0 = rest
            pace = self.jobs[run_id].pace
            if t0 is None:
                pace.speed = speed
            else:
                pace.change(speed, t0, s0)
        elif kind == "stop" and run_id in self.jobs:
            self.jobs.pop(run_id).steps.close()

    def _burst(self, job: Job) -> None:
        """Compute ``job`` for up to ``QUANTUM`` s, or until it is ``lead`` ahead; send what it made."""
        until, snaps, end = time.perf_counter() + QUANTUM, [], None
        try:
            while True:
                snap = next(job.steps, None)
                if snap is None:
                    end = ("done", "")
                    break
                now = time.perf_counter()
                job.newest = job.step_of(snap)
                job.pace.start(now, job.newest)
                snaps.append(snap)
                if getattr(snap, "diverged", False):
                    end = ("diverged", snap.message)
                    break
                if now > until or not job.hungry(now):
                    break
        except Exception as exc:  # the server shows it as a sentence; the traceback stays in this log
            log.exception("training run %s failed", job.id)
            end = ("error", str(exc).strip() or type(exc).__name__)
        anchor = None if job.anchored else (job.pace.t0, job.pace.s0)
        job.anchored = job.pace.t0 is not None
        if snaps:
            self.conn.send(("snaps", job.id, snaps, anchor))
        if end is not None:
            self.jobs.pop(job.id, None)
            self.conn.send(("end", job.id, *end))
        elif job.pace.speed is None:  # full speed: the next full-speed run has its turn
            self.jobs[job.id] = self.jobs.pop(job.id)


def warm_up() -> None:
    """Pay the trainers' first-call costs (lazy imports, the optimizer's) before the first student's run."""
    from .logistic import LogisticConfig, train_logistic
    from .two_layer import TwoLayerConfig, train_two_layer

    for _ in train_logistic(LogisticConfig(n_per_class=4, max_iterations=3)):
        pass
    for _ in train_two_layer(TwoLayerConfig(N=4, D_in=3, H=2, D_out=2, steps=2)):
        pass


NICE = 10  # how much lower than the server's a trainer process's CPU priority is


def main(fds: list[int]) -> None:
    import gc
    import os
    import signal

    # Below the server: where the cores are short (the server's first pages while this imports torch, a teacher's
    # browser on the same laptop, a class's clicks), pages come first and runs train in what is left. With cores
    # to spare, it changes nothing.
    os.nice(NICE)
    import torch

    torch.set_num_threads(1)  # one core a process: the server starts one process per core
    warm_up()
    gc.collect()
    gc.freeze()  # what is imported stays shared with the forks: the collector never touches it
    mine = fds[0]
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # a fork that ends is reaped at once, never left a zombie
    for fd in fds[1:]:
        if os.fork() == 0:
            mine = fd
            break
    for fd in fds:
        if fd != mine:
            os.close(fd)
    conn = Connection(mine)
    try:
        conn.send(("ready", os.getpid()))
        Worker(conn).serve()
    except (EOFError, OSError):
        pass  # the server is gone: so is this process
    os._exit(0)  # a fork must not run its parent's exit handlers


if __name__ == "__main__":
    main([int(fd) for fd in sys.argv[1:]])
