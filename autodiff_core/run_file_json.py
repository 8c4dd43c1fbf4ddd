"""A run file's JSON, read as text from outside: its size, nesting and number of values are counted before it
is parsed, so no file can make the parser take much time or memory; tokens no run file writes (Infinity, NaN,
a number too long to be one) are kept as ``Odd`` for the check that finds them to say where they are."""

from __future__ import annotations

import json
import math
import re

import numpy as np

MAX_JSON_BYTES = 8_000_000  # a larger file is refused unread
MAX_NESTING = 8  # a run file nests 5 deep: the record, its states, a state, its surface, a row
MAX_CONTAINERS = 100_000  # lists and objects, counted before parsing
MAX_VALUES = 800_000  # numbers, texts, lists and objects, counted before parsing

# A JSON string, for counting what lies outside strings. One left open runs to the end of the text, so every
# match succeeds from its quote: the scan stays linear (retrying from each quote of an open string was not).
_STRING = re.compile(r'"(?:[^"\\]++|\\.?)*+(?:"|\Z)', re.S)
_BRACKETS = np.zeros(256, np.int8)
_BRACKETS[[ord("["), ord("{")]], _BRACKETS[[ord("]"), ord("}")]] = 1, -1
_CHUNK = 1 << 20

class Odd:
    """A token no run file writes (Infinity, NaN, a number too long to be one): kept in place of the value, so
    the check that finds it can say where it is."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _int(text: str):
    return int(text) if len(text) <= 20 else Odd(f"a {len(text.lstrip('-')):,}-digit number")


def _float(text: str):
    value = float(text)
    return value if math.isfinite(value) else Odd(text if len(text) <= 24 else "a number too large to hold")


def shape(text: str) -> tuple[int, int, int]:
    """(deepest nesting, lists and objects, values) of JSON text, counted outside its strings, unparsed."""
    bare = _STRING.sub("0", text).encode("ascii", "replace")
    depth = deepest = containers = commas = 0
    for start in range(0, len(bare), _CHUNK):  # in chunks: the counts cost a few MB at most
        chunk = np.frombuffer(bare, np.uint8, min(_CHUNK, len(bare) - start), start)
        marks = _BRACKETS[chunk]
        if marks.any():
            levels = np.cumsum(marks, dtype=np.int32) + depth
            deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
            containers += int(np.count_nonzero(marks == 1))
        commas += int(np.count_nonzero(chunk == ord(",")))
    return deepest, containers, commas + containers + 1


def parse(data: str | bytes):
    """The file's JSON, parsed only once its size and shape are within a run file's."""
    if len(data) > MAX_JSON_BYTES:
        raise ValueError(f"This file is {len(data) / 1e6:,.1f} MB; a run file is at most {MAX_JSON_BYTES // 10**6} MB.")
    if isinstance(data, (bytes, bytearray)):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"This file is not UTF-8 text (its byte {exc.start + 1:,} is 0x{data[exc.start]:02x}), "
                             "so it is not a run file exported by this app.") from None
    text = data.removeprefix("\N{ZERO WIDTH NO-BREAK SPACE}")  # a byte order mark, as some editors save
    if text.startswith("\N{ZERO WIDTH NO-BREAK SPACE}"):
        raise ValueError("This file starts with two byte order marks, so it is not a run file exported by this app.")
    if not text.strip():
        raise ValueError("This file is empty; a run file is the JSON that a lesson's JSON button saves.")
    deepest, containers, values = shape(text)
    if deepest > MAX_NESTING:
        raise ValueError(f"This file is nested {deepest:,} levels deep; a run file is at most {MAX_NESTING} levels.")
    if containers > MAX_CONTAINERS:
        raise ValueError(f"This file holds {containers:,} lists and objects; a run file holds at most "
                         f"{MAX_CONTAINERS:,}.")
    if values > MAX_VALUES:
        raise ValueError(f"This file holds {values:,} values; a run file holds at most {MAX_VALUES:,}.")
    try:
        return json.loads(text, parse_int=_int, parse_float=_float, parse_constant=Odd)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno:,}, column {exc.colno:,}"
        if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
            raise ValueError(f"This file's JSON ends before it is complete ({exc.msg.removesuffix(' at')} at "
                             f"{where}); the file may have been cut short.") from None
        raise ValueError(f"This file is not valid JSON ({exc.msg.removesuffix(' at')} at {where}), so it is not a "
                         "run file exported by this app.") from None
    except (RecursionError, ValueError):  # not expected after the checks above; still one sentence
        raise ValueError("This file is not valid JSON, so it is not a run file exported by this app.") from None
