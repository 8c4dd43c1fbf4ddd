"""What a live run shows: the snapshots whose time has come on its paced schedule (``autodiff_core.pace``), out of
those computed ahead (here or in a trainer process), kept as ``studio.keeping`` says. ``LiveRun`` holds the state;
this is the part of it that every reader of a run (its page, the live feed, the class relay) goes through."""

from __future__ import annotations

import time

from .keeping import KEPT_BYTES, MAX_KEPT, MAX_TRAIL, evenly, size_of, spread


class Shown:
    """``LiveRun``'s screen side. It reads the run's ``snapshots``, ``trail``, ``shown_count``, ``_ahead``, ``_pace``,
    ``_kept``, ``_lock``, ``_stop``, ``step_of`` and ``light``."""

    @property
    def count(self) -> int:
        """Snapshots shown so far (some may have been thinned out of ``snapshots``)."""
        with self._lock:
            self._show_due()
            return self.shown_count

    @count.setter
    def count(self, value: int) -> None:
        self.shown_count = value

    def view(self) -> tuple[list, int]:
        """A consistent copy of the kept snapshots and the total shown."""
        with self._lock:
            self._show_due()
            return list(self.snapshots), self.shown_count

    def trail_view(self) -> list:
        """A consistent copy of the light records: one for every snapshot shown (see ``light``)."""
        with self._lock:
            self._show_due()
            return list(self.trail)

    @property
    def last(self):
        with self._lock:
            self._show_due()
            return self.snapshots[-1] if self.snapshots else None

    def computed(self, snaps: list, anchor: tuple[float, int] | None) -> None:
        """Snapshots the trainer process computed (its reader thread calls this); ``anchor``: the schedule's start."""
        with self._lock:
            if self._stop.is_set():
                return
            if anchor is not None and anchor[0] is not None:
                self._pace.start(*anchor)
            self._ahead.extend(snaps)
            self._show_due()

    def _produce(self, snap) -> None:
        """A snapshot computed: shown now, or kept until its time on the paced schedule comes."""
        with self._lock:
            if self._stop.is_set():  # stopped: what is shown stays as it was when Stop was pressed
                return
            self._pace.start(time.perf_counter(), self.step_of(snap))
            self._ahead.append(snap)
            self._show_due()

    def _show_due(self) -> None:
        """Show the snapshots computed ahead whose time has come (the caller holds the lock)."""
        if self._ahead:
            shown = self._pace.shown(time.perf_counter())
            while self._ahead and self.step_of(self._ahead[0]) <= shown:
                self._show(self._ahead.popleft())

    def _show(self, snap) -> None:
        if self.shown_count == 0:  # a run may start with snapshots it carries on from (the playground's)
            self._kept = max(100, min(MAX_KEPT, KEPT_BYTES // max(1, size_of(snap))))
        self.snapshots.append(snap)
        self.shown_count += 1
        if len(self.snapshots) > self._kept:  # half of them, spread over the whole run, its start included
            self.snapshots = spread(self.snapshots, self.step_of, self._kept // 2)
        if self.light is not None:
            self.trail.append(self.light(snap))
            if len(self.trail) > MAX_TRAIL:
                self.trail = evenly(self.trail, self.step_of, MAX_TRAIL // 2)

    def _newest_step(self) -> int | None:
        with self._lock:
            newest = self._ahead[-1] if self._ahead else (self.snapshots[-1] if self.snapshots else None)
            return None if newest is None else self.step_of(newest)
