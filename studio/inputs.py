"""Parsing what students type, with messages instead of exceptions."""

from __future__ import annotations

import math
import re

_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&])")


def shown(text: str) -> str:
    """Student text, cut to 20 characters and escaped, so an error message (markdown) shows it as typed."""
    return _MARKDOWN.sub(r"\\\1", text.strip()[:20])


MAX_VALUES = 32


def parse_vector(text: str, *, name: str, max_values: int = MAX_VALUES) -> tuple[list[float] | None, str]:
    """``"-1, 0.5, 2"`` -> ``[-1.0, 0.5, 2.0]``; on bad input, ``(None, message)``.

    ``name`` is how the message refers to the field, mid-sentence ("the input"): a message never starts with it,
    so it needs no capital and no verb agreeing with it."""
    parts = [p for p in text.replace(";", ",").replace(" ", ",").split(",") if p.strip()]
    if not parts:
        return None, f"Type some numbers for {name}, separated by commas, e.g. -1, 0.5, 2."
    if len(parts) > max_values:
        return None, f"Too many numbers in {name}: at most {max_values}, and you typed {len(parts)}."
    values = []
    for p in parts:
        try:
            v = float(p)
        except ValueError:
            return None, f"'{shown(p)}' in {name} is not a number."
        if not math.isfinite(v) or abs(v) > 1e6:
            return None, f"Every number in {name} must be finite and between -1e6 and 1e6; got {shown(p)}."
        values.append(v)
    return values, ""
