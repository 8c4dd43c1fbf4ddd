"""How often an open-ended run records its state: every step at first, then less and less often.

A replay wants every move of a short run, and a long run must not pile up snapshots without end (each
playground snapshot holds a whole decision surface). So the first ``cap`` steps are all recorded, the next
``2 * cap`` steps every 2nd, the next ``4 * cap`` every 4th, and so on: about ``cap`` snapshots per doubling
of the run's length, and a replay thinned to ``cap`` frames still shows every step of a run up to ``cap``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

REPLAY_CAP = 400  # frames a replay keeps; a run this long is recorded at every step


def every_step_then_sparser(run: Callable[[int, int], Iterator[Any]], *, total: int,
                            cap: int = REPLAY_CAP) -> Iterator[Any]:
    """Chain ``run(steps, record_every)`` calls (each yields the state it starts from, then every
    ``record_every``-th step) with strides 1, 2, 4, ...: ``cap * stride`` steps each, ``total`` in all.
    Stops after a snapshot marked ``diverged``."""
    stride, done = 1, 0
    while done < total:
        steps = min(cap * stride, total - done)
        for i, snap in enumerate(run(steps, stride)):
            if i == 0 and done > 0:
                continue  # the state this chunk starts from is the one the last chunk ended on
            yield snap
            if getattr(snap, "diverged", False):
                return
        done += steps
        stride *= 2
