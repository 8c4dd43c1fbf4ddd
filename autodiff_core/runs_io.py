"""A finished run as files: CSV (one row per recorded state), JSON (config, snapshots, versions) that loads
back into the same config and snapshots. The replay as one standalone HTML file that needs no network is
``figures.classroom.standalone_html``.

Engine side: torch and numpy only, never plotly or streamlit.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import platform
import re
from importlib import metadata

import numpy as np
import torch

from .own_data import MAX_POINTS
from .run_file_json import Odd, parse

FORMAT = "autograd-studio-run/1"
# What a run file may hold, checked before anything is built from it. The largest files the app saves
# (tests/engine/test_run_file_fuzz.py makes them) weigh under 1 MB: a lesson's run keeps at most 4,000 states
# (studio.keeping.MAX_KEPT), lesson 5's about 120 whole ones with their 32 x 32 surfaces.
_SURROGATE = re.compile("[\ud800-\udfff]")  # a lone surrogate (from a \u escape) cannot be shown or sent
MAX_STATES = 10_000
MAX_SURFACE_POINTS = 600_000  # all states' surfaces together: the replay draws up to 400 of them
MAX_STEP = 10**9
MAX_LIST = 16  # items of a setting's or a state's list: layer widths, features, gradient norms
MAX_SETTING_TEXT = 200  # characters of a setting's text (a dataset, an activation, a device)
MAX_MESSAGE = 10_000  # characters of a run's or a state's message
POINTS = "tuple[tuple[float, float, float], ...]"  # lesson 5's own points: up to MAX_POINTS (x1, x2, value)
# The lessons with run files: lesson -> (its config class, its snapshot class). Each lesson registers its own
# (studio/lessons.py does, for the app's); a script that writes run files of its own trainer registers it too.
KINDS: dict[str, tuple[type, type]] = {}


def register_kind(lesson: str, config_cls: type, snapshot_cls: type) -> None:
    """Run files of ``lesson`` hold a ``config_cls`` (a frozen dataclass) and ``snapshot_cls`` states."""
    if not (dataclasses.is_dataclass(config_cls) and dataclasses.is_dataclass(snapshot_cls)):
        raise TypeError("A run file's config and snapshot are dataclasses.")
    KINDS[lesson] = (config_cls, snapshot_cls)


def unregister_kind(lesson: str) -> None:
    KINDS.pop(lesson, None)


def app_version() -> str:
    try:
        return metadata.version("autograd-studio")
    except metadata.PackageNotFoundError:
        import tomllib
        from pathlib import Path

        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        try:
            return tomllib.loads(pyproject.read_text())["project"]["version"]
        except (OSError, KeyError, ValueError):
            return "unknown"


def versions() -> dict[str, str]:
    return {"app": app_version(), "torch": torch.__version__, "numpy": np.__version__,
            "python": platform.python_version()}


def _plain(value):
    """JSON-safe: tuples become lists, non-finite floats become null (strict JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def run_record(lesson: str, config, snapshots, *, status: str = "done", message: str = "",
               settings: dict[str, str] | None = None) -> dict:
    """Everything a run file holds, as plain data. ``settings``: the lesson's widgets that made the run, as its
    link writes them (``{key: text}``), so the file can say what ran in the widgets' words."""
    if lesson not in KINDS:
        raise ValueError(f"Lesson {lesson!r} has no run files.")
    return {"format": FORMAT, "lesson": lesson, "status": status, "message": message, "versions": versions(),
            **({"settings": dict(settings)} if settings else {}),
            "config": {k: _plain(v) for k, v in dataclasses.asdict(config).items()},
            "snapshots": [{f.name: _plain(getattr(s, f.name)) for f in dataclasses.fields(s)} for s in snapshots]}


def to_json(record: dict) -> str:
    return json.dumps(record, separators=(",", ":"), allow_nan=False)


def to_csv(record: dict) -> str:
    """One row per recorded state; the playground's probability grid is left to the JSON."""
    rows = record["snapshots"]
    columns = [k for k in (rows[0] if rows else {}) if k != "surface"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row[k] is None else row[k] for k in columns])
    return out.getvalue()


def _field_value(field: dataclasses.Field, value):
    """A checked value from the file as the dataclass holds it: lists become tuples, null a float's NaN."""
    if value is None and field.type == "float":
        return math.nan
    if field.name == "surface":
        return tuple(tuple(math.nan if v is None else float(v) for v in row) for row in value)
    if field.type == "tuple[float, ...]":
        return tuple(math.nan if v is None else float(v) for v in value)
    if field.type == POINTS:
        return tuple(tuple(float(v) for v in point) for point in value)
    return tuple(value) if isinstance(value, list) else value


def _quote(text: str, limit: int = 40) -> str:
    """File text as a message shows it: printable characters only, at most ``limit`` of them, in quotes."""
    shown = "".join(c if c.isprintable() else "\N{REPLACEMENT CHARACTER}" for c in text[:limit])
    return f'"{shown}{"…" if len(text) > limit else ""}"'


def _what(value) -> str:
    """What a value from the file is, in a few words (short values themselves)."""
    if isinstance(value, Odd):
        return value.text
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return f"{value:,}" if isinstance(value, int) else f"{value:g}"
    if isinstance(value, str):
        return f"the text {_quote(value)}"
    n, kind = len(value), "item" if isinstance(value, list) else "field"
    return f"{'a list' if kind == 'item' else 'an object'} of {n:,} {kind}{'s' * (n != 1)}"


_NOUN = {"int": "a whole number", "float": "a number (or null)", "bool": "true or false", "str": "text"}
_NOUNS = {"int": "whole numbers", "float": "numbers (or null)", "str": "texts"}


def _fits(kind: str, value, limit: int) -> bool:
    """``value`` is of the annotation ``kind`` (``int``, ``float``, ``bool``, ``str``, ``tuple[X, ...]`` or
    ``POINTS``)."""
    if kind == POINTS:
        return type(value) is list and len(value) <= MAX_POINTS and all(
            type(p) is list and len(p) == 3 and all(type(v) in (int, float) for v in p) for p in value)
    if kind.startswith("tuple["):
        inner = kind[6:-6]
        return type(value) is list and len(value) <= MAX_LIST and all(_fits(inner, v, limit) for v in value)
    if kind == "float":
        return value is None or type(value) in (int, float)
    if kind == "str":
        return type(value) is str and len(value) <= limit and not _SURROGATE.search(value)
    return type(value) is {"int": int, "bool": bool}[kind]


def _a(name: str) -> str:
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _expected(kind: str, limit: int, steps: bool = False) -> str:
    if kind == POINTS:
        return f"a list of at most {MAX_POINTS:,} points, each a list of three numbers (x1, x2, class or target)"
    if kind.startswith("tuple["):
        return f"a list of at most {MAX_LIST} {_NOUNS[kind[6:-6]]}"
    if kind == "int" and steps:
        return f"a whole number from 0 to {MAX_STEP:,}"
    return f"text of at most {limit:,} characters" if kind == "str" else _NOUN[kind]


def _check_header(record) -> str:
    """The run file's lesson, once its format, lesson, status, message and versions are as the app writes them."""
    if not isinstance(record, dict):
        raise ValueError(f"This file holds {_what(record)} where a run file holds one object, so it is not a run "
                         "file exported by this app.")
    if "format" not in record:
        raise ValueError('This JSON file has no "format", so it is not a run file exported by this app.')
    if record["format"] != FORMAT:
        raise ValueError(f'This file\'s format is {_what(record["format"])}; this app reads run files of format '
                         f'"{FORMAT}".')
    lesson = record.get("lesson")
    if type(lesson) is not str or lesson not in KINDS:
        raise ValueError(f"This run file's lesson is {_what(lesson)}; the lessons with run files are "
                         f"{', '.join(KINDS)}.")
    for name, limit in (("status", 40), ("message", MAX_MESSAGE)):
        if name in record and not _fits("str", record[name], limit):
            raise ValueError(f'This run file\'s "{name}" is {_what(record[name])}; it must be text of at most '
                             f"{limit:,} characters.")
    versions = record.get("versions", {})
    if not isinstance(versions, dict) or len(versions) > MAX_LIST or not all(
            _fits("str", v, 100) and len(k) <= 40 for k, v in versions.items()):
        raise ValueError(f'This run file\'s "versions" are {_what(versions)}; they must be an object of at most '
                         f"{MAX_LIST} names, each with its version as text of at most 100 characters.")
    settings = record.get("settings", {})
    if not isinstance(settings, dict) or len(settings) > 4 * MAX_LIST or not all(
            _fits("str", v, MAX_SETTING_TEXT) and _fits("str", k, 40) for k, v in settings.items()):
        raise ValueError(f'This run file\'s "settings" are {_what(settings)}; they must be an object of at most '
                         f"{4 * MAX_LIST} names, each with its value as text of at most {MAX_SETTING_TEXT} characters.")
    return lesson


def _config(lesson: str, given):
    """The run's config, each setting checked for its type first and then by the config's own range checks."""
    if not isinstance(given, dict):
        raise ValueError(f'This run file\'s settings ("config") are {_what(given)}; they must be an object of '
                         "setting names and values.")
    config_cls = KINDS[lesson][0]
    fields = {f.name: f for f in dataclasses.fields(config_cls)}
    for name, value in given.items():
        if name not in fields:
            raise ValueError(f"This run file has a setting {_quote(name)} that lesson {lesson} does not have.")
        if not _fits(fields[name].type, value, MAX_SETTING_TEXT):
            raise ValueError(f"This run file's setting {name} is {_what(value)}; {name} is "
                             f"{_expected(fields[name].type, MAX_SETTING_TEXT)}.")
    try:
        return config_cls(**{k: _field_value(fields[k], v) for k, v in given.items()})
    except (TypeError, ValueError) as exc:
        name = str(exc).split(" ", 1)[0]
        if name in given and " must be one of: " in str(exc):  # the choices can run long: the value is the news
            raise ValueError(f"This run file's setting {name} is {_what(given[name])}, which is not one of lesson "
                             f"{lesson}'s choices.") from None
        raise ValueError(f"This run file's settings do not fit lesson {lesson}: {_sentence(exc)}") from None


def _sentence(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:299] + "…"


def _check_states(lesson: str, config, states) -> None:
    """Every recorded state is an object of the snapshot's fields, each of its type; surfaces fit the grid."""
    if not isinstance(states, list):
        raise ValueError(f'This run file\'s states ("snapshots") are {_what(states)}; they must be a list of states.')
    if not states:
        raise ValueError("This run file holds no recorded states, so there is nothing to replay.")
    if len(states) > MAX_STATES:
        raise ValueError(f"This run file holds {len(states):,} states; a run file holds at most {MAX_STATES:,}.")
    fields = dataclasses.fields(KINDS[lesson][1])
    grid = getattr(config, "grid", 0)
    if any(f.name == "surface" for f in fields) and len(states) * grid * grid > MAX_SURFACE_POINTS:
        raise ValueError(f"This run file's {len(states):,} states on a {grid} x {grid} grid hold "
                         f"{len(states) * grid * grid:,} surface points; a run file holds at most "
                         f"{MAX_SURFACE_POINTS:,}.")
    for i, state in enumerate(states, 1):
        if not isinstance(state, dict):
            raise ValueError(f"This run file's state {i} is {_what(state)}; a state is an object of names and values.")
        for f in fields:
            if f.name not in state:
                if f.default is dataclasses.MISSING:
                    raise ValueError(f"This run file's state {i} has no {f.name}.")
                continue
            value = state[f.name]
            if f.name == "surface":
                _check_surface(i, value, grid)
            elif not _fits(f.type, value, MAX_MESSAGE) or (f.type == "int" and not 0 <= value <= MAX_STEP):
                raise ValueError(f"This run file's state {i} has {_a(f.name)} of {_what(value)}; {_a(f.name)} is "
                                 f"{_expected(f.type, MAX_MESSAGE, steps=True)}.")


def _check_surface(i: int, surface, grid: int) -> None:
    shape = f"on this run's {grid} x {grid} grid a surface is {grid} rows of {grid} numbers (or null)"
    if type(surface) is not list or len(surface) != grid:
        raise ValueError(f"This run file's state {i} has a surface of {_what(surface)}; {shape}.")
    for r, row in enumerate(surface, 1):
        if type(row) is not list or len(row) != grid:
            raise ValueError(f"This run file's state {i} has a surface whose row {r} is {_what(row)}; {shape}.")
        if bad := [v for v in row if v is not None and type(v) not in (int, float)]:
            raise ValueError(f"This run file's state {i} has a surface whose row {r} holds {_what(bad[0])}; {shape}.")


def from_json(text: str | bytes) -> tuple[str, object, list, dict]:
    """A run file back into (lesson, config, snapshots, record). Raises ValueError with one sentence a student
    can read when the file is not one of ours or was edited into nonsense. The file's size, nesting and number
    of values are checked before it is parsed, and every field it holds before anything is built from it."""
    record = parse(text)
    lesson = _check_header(record)
    for name, what in (("config", "settings"), ("snapshots", "recorded states")):
        if name not in record:
            raise ValueError(f'This run file has no {what} ("{name}"), so there is nothing to replay.')
    config = _config(lesson, record["config"])
    _check_states(lesson, config, record["snapshots"])
    snap_cls = KINDS[lesson][1]
    snap_fields = dataclasses.fields(snap_cls)
    try:
        snaps = [snap_cls(**{f.name: _field_value(f, s[f.name]) for f in snap_fields if f.name in s})
                 for s in record["snapshots"]]
    except (TypeError, ValueError) as exc:  # not expected once checked; still one sentence
        raise ValueError(f"This run file's states do not fit lesson {lesson}: {_sentence(exc)}") from None
    return lesson, config, snaps, record

