"""The server's trainer processes (``autodiff_core.pool``): small runs on the CPU are computed there, off the GIL
that answers every page.

A server process runs its Python on one core at a time. A class of sixty pressing Train on lesson 3 needed more
than that core for the runs' steps alone, and the pages' clicks and live charts queued behind them
(bench/classroom.py). So the server starts one trainer process per core it may use, once, in the background
(``start``), and hands each run with small steps on the CPU to the least busy one (``take``); until they are
ready, or if none can start, runs train in the server as before. What comes back is the run's snapshots, which
the run shows as its schedule says (``LiveRun``), exactly as if it had computed them itself.

``STUDIO_TRAINERS`` sets how many processes a server starts (0: none, every run trains in the server).
``python -m studio.serve --workers K`` shares the cores among its K servers.
"""

from __future__ import annotations

import functools
import logging
import os
import pickle
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from .process import process_wide

log = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[1]
SMALL_STEP = 0.005  # estimated seconds a step: a run with steps up to this long on the CPU goes to a trainer
LOST = "The server's trainer process stopped in the middle of this run. Press Train to run it again."


def wanted() -> int:
    """How many trainer processes this server starts: ``STUDIO_TRAINERS``, else one per core it may use."""
    text = os.environ.get("STUDIO_TRAINERS", "").strip()
    if text:
        try:
            return max(0, int(text))
        except ValueError:
            log.warning("STUDIO_TRAINERS=%r is not a number; starting one trainer per core", text)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def launch(n: int) -> tuple[subprocess.Popen, list[socket.socket]]:
    """One process for ``n`` trainers (it forks the others once warm, ``autodiff_core.pool``); our sockets."""
    pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(n)]
    fds = [theirs.fileno() for _, theirs in pairs]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "OMP_NUM_THREADS": "1"}
    try:
        proc = subprocess.Popen([sys.executable, "-m", "autodiff_core.pool", *map(str, fds)], pass_fds=fds,
                                cwd=ROOT, env=env, stdin=subprocess.DEVNULL)
    finally:
        for _, theirs in pairs:
            theirs.close()
    return proc, [ours for ours, _ in pairs]


class Trainer:
    """One trainer process, the runs it computes, and the thread that reads what it sends."""

    def __init__(self, pool: Trainers, proc: subprocess.Popen, sock: socket.socket) -> None:
        self.pool, self.proc, self.runs, self.ready, self.lock = pool, proc, {}, threading.Event(), threading.Lock()
        self.pid: int | None = None  # the process's own (a fork's differs from ``proc``'s), once it is ready
        self.sock = sock  # kept to shut down: closing the descriptor would not wake the reader blocked on it
        self.conn = Connection(sock.fileno())
        threading.Thread(target=self._read, name="studio-trainer-reader", daemon=True).start()

    def send(self, message: tuple) -> bool:
        return self.send_bytes(pickle.dumps(message))

    def send_bytes(self, message: bytes) -> bool:
        try:
            with self.lock:
                self.conn.send_bytes(message)
            return True
        except OSError:
            return False

    def stop(self, run: Any) -> None:
        """Stop computing ``run`` (Stop, a new run, the tab closed)."""
        if self.runs.pop(run.run_id, None) is not None:
            self.send(("stop", run.run_id))

    def _read(self) -> None:
        try:
            while True:
                kind, run_id, *rest = self.conn.recv()
                run = self.runs.get(run_id)
                if kind == "ready":
                    self.pid = run_id
                    self.ready.set()
                elif kind == "snaps" and run is not None:
                    run.computed(*rest)
                elif kind == "end" and run is not None:
                    self.runs.pop(run_id, None)
                    run.trainer_ended(*rest)
        except (EOFError, OSError):
            pass
        self.sock.detach()  # the connection owns the descriptor
        self.conn.close()
        self.ready.clear()
        for run in list(self.runs.values()):
            run.trainer_ended("error", LOST)
        self.runs.clear()
        self.pool.lost(self)

    def close(self) -> None:
        self.ready.clear()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # the process reads the end and exits; the reader wakes
        except OSError:
            pass


class Trainers:
    """The server's trainer processes."""

    def __init__(self) -> None:
        self.trainers: list[Trainer] = []
        self.lock = threading.Lock()
        self.closing = False
        self.asked = False  # start() has been called: the warm-up's, or the first run that wanted a trainer
        self.on_demand = False  # a server's: the first run that wants a trainer starts them (studio.boot)

    def start(self, n: int | None = None) -> int:
        """Start trainers up to ``n`` (``wanted()`` by default), one process for all of them; returns how many
        there are."""
        with self.lock:
            self.asked = True
            more = (wanted() if n is None else n) - len(self.trainers)
            if more > 0:
                try:
                    proc, socks = launch(more)
                except OSError:
                    log.exception("the trainer processes could not start; runs train in the server")
                else:
                    self.trainers += [Trainer(self, proc, sock) for sock in socks]
            return len(self.trainers)

    def take(self, run: Any) -> Trainer | None:
        """Hand ``run`` to the least busy ready process; None when none is ready (the run trains in the server).
        In a server, the first run that finds them not started yet starts them (the warm-up waits for a lull)."""
        ready = [t for t in self.trainers if t.ready.is_set()]
        if not ready:
            if self.on_demand and not self.asked and not self.closing:
                self.start()
            return None
        try:  # what cannot be pickled (a lambda) trains in the server
            message = pickle.dumps(("start", run.run_id, run.stream, run.step_of, run.speed, run.lead))
        except (pickle.PicklingError, AttributeError, TypeError):
            log.warning("run %s of %s cannot go to a trainer process; it trains in the server", run.run_id, run.lesson)
            return None
        trainer = min(ready, key=lambda t: len(t.runs))
        trainer.runs[run.run_id] = run
        if trainer.send_bytes(message):
            return trainer
        trainer.runs.pop(run.run_id, None)
        return None

    def lost(self, trainer: Trainer) -> None:
        """A process ended (killed, out of memory): start another in its place."""
        with self.lock:
            if trainer in self.trainers:
                self.trainers.remove(trainer)
            closing = self.closing
        if not closing:
            log.warning("trainer process %s ended; starting another", trainer.pid)
            self.start(len(self.trainers) + 1)

    def close(self) -> None:
        with self.lock:
            self.closing, trainers, self.trainers = True, self.trainers, []
        for trainer in trainers:
            trainer.close()
        for proc in {t.proc for t in trainers}:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()


def portable(run: Any) -> bool:
    """Whether ``run`` can train in a trainer process: its trainer is an importable function of its config
    (``functools.partial``), its steps are small, on the CPU, with no student's Function (the sandbox's)."""
    cost = run.cost
    return (isinstance(run.stream, functools.partial) and cost is not None and cost.device == "cpu"
            and cost.step_seconds <= SMALL_STEP and run._worker is None)


TRAINERS: Trainers = process_wide("trainers", Trainers)
