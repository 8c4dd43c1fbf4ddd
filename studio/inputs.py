"""Parsing what students type, with messages instead of exceptions."""

from __future__ import annotations

import math

MAX_VALUES = 32


def parse_vector(text: str, *, name: str, max_values: int = MAX_VALUES) -> tuple[list[float] | None, str]:
    """``"-1, 0.5, 2"`` -> ``[-1.0, 0.5, 2.0]``; on bad input, ``(None, message)``."""
    parts = [p for p in text.replace(";", ",").replace(" ", ",").split(",") if p.strip()]
    if not parts:
        return None, f"Type some numbers for {name}, separated by commas, e.g. -1, 0.5, 2."
    if len(parts) > max_values:
        return None, f"{name} takes at most {max_values} numbers; you typed {len(parts)}."
    values = []
    for p in parts:
        try:
            v = float(p)
        except ValueError:
            return None, f"{p.strip()[:20]!r} in {name} is not a number."
        if not math.isfinite(v) or abs(v) > 1e6:
            return None, f"{name} values must be finite and between -1e6 and 1e6; got {p.strip()[:20]}."
        values.append(v)
    return values, ""
