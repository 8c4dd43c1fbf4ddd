"""A student's work, kept by the class under the browser's id: a reload or a Wi-Fi drop gives the student a new
Streamlit session, which rejoins the class (``panel.restore``) and gets back their last finished run of each
lesson with a Train button (lessons 2 and 3), their lesson 5 model where its last run left it (its history and
state, ``studio.playground_session``) and their lesson 6 code. Kept with the class's other data, and deleted
with it (``KEEP_DAYS`` after the class ends, or at once with "Delete this class's data")."""

from __future__ import annotations

import dataclasses
import json
import logging
import time

import streamlit as st

from . import panel
from .classes import KEEP

log = logging.getLogger(__name__)
FINISHED = ("done", "stopped", "diverged")
MAX_CODE = 20_000  # characters of lesson 6 code kept per challenge
MAX_STATE_BYTES = 4_000_000  # a lesson's kept state (lesson 5's history, curves and model): a larger one is not kept
_SAVED = "room_kept_runs"  # session: the run ids already kept
_BACK = "room_run_back"  # session: lesson -> the run id a reload brought back


def _key(student, what: str) -> str:
    return f"class:{student.code}:kept:{student.id}:{what}"


def save_run(lesson: str, run) -> None:
    """Keep ``run``, once it finished, as this student's last run of ``lesson`` (its run file)."""
    from autodiff_core.run_file_json import MAX_JSON_BYTES
    from autodiff_core.runs_io import run_record, to_json

    student = panel.joined()
    if student is None or run is None or run.running or run.status not in FINISHED:
        return
    saved = st.session_state.setdefault(_SAVED, set())
    if run.run_id in saved:
        return
    saved.add(run.run_id)
    snaps = run.view()[0]
    if not snaps:
        return
    body = to_json(run_record(lesson, run.config, snaps, status=run.status, message=run.message))
    if len(body) > MAX_JSON_BYTES:
        return  # as a run file, too large to keep
    elapsed = (run.finished or time.perf_counter()) - (run.began or run.started)
    try:
        panel.classes().store.put(_key(student, f"run:{lesson}"), json.dumps(
            {"run_id": run.run_id, "elapsed": elapsed, "file": body}).encode(), KEEP)
    except Exception:
        log.exception("the class store failed")


def saved_run(lesson: str):
    """This student's kept run of ``lesson`` as a finished ``LiveRun``, once per session (after a reload);
    None when there is none."""
    from autodiff_core.runs_io import from_json

    from ..runner import LiveRun

    ss, data = st.session_state, _once(f"run:{lesson}")
    if data is None:
        return None
    try:
        kind, config, snaps, record = from_json(data["file"])
    except Exception:  # what the store holds no longer reads: the page starts without it
        log.exception("a kept run could not be read back")
        return None
    if kind != lesson or not snaps:
        return None
    run = LiveRun.ended(lesson, dataclasses.replace(config, device="cpu"), snaps,  # drawn here, on the CPU
                        lambda s: getattr(s, "iteration", getattr(s, "step", 0)), run_id=str(data["run_id"]),
                        status=str(record.get("status", "done")), message=str(record.get("message", "")))
    run.began = run.finished - float(data.get("elapsed", 0.0))
    ss.setdefault(_BACK, {})[lesson] = run.run_id
    ss.setdefault(_SAVED, set()).add(run.run_id)
    return run


def brought_back(lesson: str, run) -> bool:
    """Whether ``run`` is the one a reload brought back (the page says so)."""
    return run is not None and st.session_state.get(_BACK, {}).get(lesson) == run.run_id


def in_class() -> bool:
    return panel.joined() is not None


def save_state(lesson: str, state: dict) -> None:
    """Keep ``state`` (plain data, as JSON) as this student's last work in ``lesson``, for a reload to give back."""
    student = panel.joined()
    if student is None:
        return
    try:
        body = json.dumps(state, separators=(",", ":"), allow_nan=False).encode()
        if len(body) <= MAX_STATE_BYTES:
            panel.classes().store.put(_key(student, f"state:{lesson}"), body, KEEP)
    except Exception:
        log.exception("a lesson's state could not be kept")


def saved_state(lesson: str) -> dict | None:
    """This student's kept state of ``lesson``, once per session (after a reload); None when there is none."""
    return _once(f"state:{lesson}")


def _once(what: str) -> dict | None:
    """What the class kept of this student's under ``what``, read once per session (after a reload); None when it
    kept nothing, or the store failed (the page starts without it)."""
    student, ss = panel.joined(), st.session_state
    if student is None or ss.get(f"room_kept_read_{what}"):
        return None
    ss[f"room_kept_read_{what}"] = True
    try:
        raw = panel.classes().store.get(_key(student, what))
        data = json.loads(raw) if raw is not None else None
    except Exception:
        log.exception("what the class kept could not be read back")
        return None
    return data if isinstance(data, dict) else None


def save_code(sources: dict[str, str]) -> None:
    """Keep this student's lesson 6 code (each challenge's), as it is after a check."""
    student = panel.joined()
    if student is None:
        return
    kept = {str(k)[:40]: str(v)[:MAX_CODE] for k, v in list(sources.items())[:40]}
    try:
        panel.classes().store.put(_key(student, "code"), json.dumps(kept).encode(), KEEP)
    except Exception:
        log.exception("the class store failed")


def saved_code() -> dict[str, str]:
    """This student's kept lesson 6 code, by challenge; empty outside a class or when none was kept."""
    student = panel.joined()
    if student is None:
        return {}
    try:
        raw = panel.classes().store.get(_key(student, "code"))
        data = json.loads(raw) if raw is not None else {}
    except Exception:
        log.exception("a kept lesson 6 code could not be read back")
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
