"""Range checks shared by every config: each failure names the field and the allowed range."""

from __future__ import annotations

import math
import numbers

from .devices import DTYPES


def require_int(field: str, value: object, lo: int, hi: int) -> None:
    """``value`` must be an integer in [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not lo <= value <= hi:
        raise ValueError(f"{field} must be an integer from {lo:,} to {hi:,}; got {value!r}.")


def require_float(field: str, value: object, lo: float, hi: float, *, lo_open: bool = False,
                  hi_open: bool = False) -> None:
    """``value`` must be a finite real number in the interval lo..hi (ends open as asked)."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        ok = (value > lo if lo_open else value >= lo) and (value < hi if hi_open else value <= hi)
    if not ok:
        interval = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
        raise ValueError(f"{field} must be a number in {interval}; got {value!r}.")


def require_choice(field: str, value: object, choices) -> None:
    """``value`` must be one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{field} must be one of: {', '.join(map(str, choices))}; got {value!r}.")


def require_dtype(value: object) -> None:
    require_choice("dtype", value, list(DTYPES))


def require_device_name(value: object) -> None:
    """Only the form is checked here; whether the device exists is checked when training starts."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"device must be a device name such as 'cpu' or 'cuda:0'; got {value!r}.")
