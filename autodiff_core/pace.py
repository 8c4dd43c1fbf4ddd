"""A paced run's schedule: which step the screen shows at a given moment, and how far ahead of it to compute.

A paced run shows ``speed`` steps a second from its first snapshot on. It need not compute them one by one at
that pace: a step of a small model takes a fraction of a millisecond, and a thread (or process) that wakes for
every step spends more on waking than on the step. So a paced run computes ahead of the screen, in bursts, by
up to ``LEAD`` seconds of its schedule, and its snapshots are shown when their time comes. What the screen shows
is the same; Stop keeps what was shown and drops what was computed ahead.

The moments are ``time.perf_counter()`` values, which on Linux and macOS are one clock for every process of the
machine: a trainer process and the server read the same schedule from the same anchor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

LEAD = 1.0  # seconds of the schedule a paced run computes ahead of what it shows


@dataclass
class Pace:
    """``speed`` steps a second, counted from ``(t0, s0)``: the moment the first snapshot (step ``s0``) showed,
    or the moment the speed last changed and the step shown then. ``speed`` None: as fast as it computes,
    everything shows as soon as it exists."""

    speed: float | None
    t0: float | None = None
    s0: int = 0

    def start(self, now: float, step: int) -> None:
        """Anchor the schedule at its first snapshot, unless it has an anchor already."""
        if self.t0 is None:
            self.t0, self.s0 = now, step

    def change(self, speed: float | None, now: float, step: int) -> None:
        """A new speed from now on, counted from ``step``, the step shown now."""
        self.speed, self.t0, self.s0 = speed, now, step

    def shown(self, now: float) -> float:
        """The last step the screen shows at ``now`` (inf: everything there is)."""
        if self.speed is None or self.t0 is None:
            return math.inf
        return self.s0 + (now - self.t0) * self.speed

    def due(self, step: int) -> float:
        """The moment ``step`` shows (-inf: at once)."""
        if self.speed is None or self.t0 is None:
            return -math.inf
        return self.t0 + (step - self.s0) / self.speed

    def hungry(self, step: int, now: float, lead: float = LEAD) -> bool:
        """Whether a run whose newest computed step is ``step`` should compute on: less than ``lead`` s ahead."""
        return self.due(step) < now + lead

    def rest_until(self, step: int, lead: float = LEAD) -> float:
        """When a run ``lead`` s ahead at ``step`` computes again: once it is only half as far ahead (a lead of 0:
        once ``step`` shows, as a run that computes each step on time)."""
        return self.due(step) - lead / 2
