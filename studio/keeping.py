"""What a run keeps of its snapshots: all of them up to a count and a size, then a spread over the whole run
(its start included), and a light record of each for its curves, thinned evenly past a count."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

MAX_KEPT = 4000  # snapshots kept per run; beyond it every other one is dropped (the newest stays)
KEPT_BYTES = 4 * 2**20  # and no more than about this much of them (a playground snapshot holds a surface)
MAX_TRAIL = 8000  # light records (a run's curves) kept per run; beyond it they are thinned to even steps


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


def spread(records: list, step_of: Callable[[Any], int], n: int) -> list:
    """About ``n`` of ``records`` (in step order): half evenly over the steps, half evenly over the steps' logarithm,
    so a replay keeps a run's first steps (where a boundary forms) and its whole length. Halving by index again
    and again kept the newest and starved the start: a 2,044-step run kept "0, 808, 928, ..."."""
    first = step_of(records[0])
    chosen = {id(r) for r in evenly(records, step_of, n // 2)}
    chosen |= {id(r) for r in evenly(records, lambda r: math.log1p(step_of(r) - first), n - n // 2)}
    return [r for r in records if id(r) in chosen]


def size_of(obj, depth: int = 0) -> int:
    """Roughly the bytes an object holds (its fields, and lists or tuples in them, two levels deep)."""
    size = sys.getsizeof(obj)
    if depth > 2:
        return size
    if isinstance(obj, (list, tuple)):
        if obj:
            size += len(obj) * size_of(obj[0], depth + 1)
        return size
    slots = getattr(type(obj), "__slots__", ())
    fields = [getattr(obj, f, None) for f in slots] if slots else list(getattr(obj, "__dict__", {}).values())
    return size + sum(size_of(v, depth + 1) for v in fields if isinstance(v, (list, tuple, str, float, int)))
