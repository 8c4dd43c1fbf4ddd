"""A finished run as files: CSV (one row per recorded state), JSON (config, snapshots, versions) that loads
back into the same config and snapshots, and the replay as one standalone HTML file that needs no network.

Engine side: torch, numpy and plotly (for the HTML) only, never streamlit.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import platform
from importlib import metadata

import numpy as np
import torch

from .logistic import LogisticConfig, LogisticSnapshot
from .playground import PlaygroundConfig, PlaygroundSnapshot
from .two_layer import TwoLayerConfig, TwoLayerSnapshot

FORMAT = "autograd-studio-run/1"
MAX_JSON_BYTES = 50_000_000  # a run file larger than this is refused unread
KINDS = {"two_layer": (TwoLayerConfig, TwoLayerSnapshot), "logistic": (LogisticConfig, LogisticSnapshot),
         "playground": (PlaygroundConfig, PlaygroundSnapshot)}


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


def run_record(lesson: str, config, snapshots, *, status: str = "done", message: str = "") -> dict:
    """Everything a run file holds, as plain data."""
    if lesson not in KINDS:
        raise ValueError(f"Lesson {lesson!r} has no run files.")
    return {"format": FORMAT, "lesson": lesson, "status": status, "message": message, "versions": versions(),
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
    if value is None and field.type in ("float", float):
        return math.nan
    if field.name == "surface" and isinstance(value, list):
        return tuple(tuple(float(v) for v in row) for row in value)
    if isinstance(value, list):
        return tuple(value)
    return value


def from_json(text: str | bytes) -> tuple[str, object, list, dict]:
    """A run file back into (lesson, config, snapshots, record). Raises ValueError with a message a
    student can read when the file is not one of ours or was edited into nonsense."""
    if len(text) > MAX_JSON_BYTES:
        raise ValueError(f"The file is larger than {MAX_JSON_BYTES // 1_000_000} MB; it is not a run file.")
    try:
        record = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError("The file is not JSON, so it is not a run file exported by this app.") from exc
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise ValueError("The file is JSON but not a run file exported by this app.")
    lesson = record.get("lesson")
    if lesson not in KINDS:
        raise ValueError("The run file names no lesson this app knows.")
    config_cls, snap_cls = KINDS[lesson]
    try:
        fields = {f.name: f for f in dataclasses.fields(config_cls)}
        config = config_cls(**{k: _field_value(fields[k], v) for k, v in record["config"].items()})
        snap_fields = dataclasses.fields(snap_cls)
        snaps = [snap_cls(**{f.name: _field_value(f, s[f.name]) for f in snap_fields if f.name in s})
                 for s in record["snapshots"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"The run file's settings or states do not fit lesson {lesson}: {str(exc)[:200]}") from exc
    return lesson, config, snaps, record


def standalone_html(fig, title: str) -> str:
    """The figure as one HTML file with plotly.js inside it: it plays with no network at all."""
    import html

    import plotly.io as pio

    from .theme import recolor

    spec = recolor(fig.to_plotly_json())  # the app's palette, as the chart on screen
    body = pio.to_html(spec, include_plotlyjs=True, full_html=False, auto_play=False, div_id="replay",
                       config={"displaylogo": False, "responsive": True})
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title></head>"
            f"<body style=\"margin:0;font-family:sans-serif\">{body}</body></html>\n")
