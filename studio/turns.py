"""Turns: runs that compute on the server's cores take turns, so that many small runs do not spend their time
handing the GIL to one another. ``LiveRun`` takes one before a step and gives it back after (``studio.runner``)."""

from __future__ import annotations

import os
import threading
import time
from collections import deque

from .process import process_wide


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


class Turn:
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
