"""Below a training lesson's chart: export the finished run, load a run file back (its replay, no
training), and compare runs: the last finished runs drawn as faint, labelled ghosts, one of them pinned."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import streamlit as st

from autodiff_core.figures.classroom import (
    RunFigures,
    difference_label,
    fit_ghosts,
    ghost_record,
    ghost_traces,
    replay_figure,
    show_ghost_legend,
    standalone_html,
)
from autodiff_core.figures.replay_layout import LEGEND_ROW
from autodiff_core.run_file_json import MAX_JSON_BYTES
from autodiff_core.runs_io import from_json, run_record, to_csv, to_json

from . import lessons, run_words
from .charts import plot
from .lessons import SETTINGS
from .links import current_values, echo, plain, to_params
from .png_button import png_button
from .presets import sync_url
from .room import board, board_view
from .room.follow import forget_teacher_ghost, teacher_ghost
from .runner import LiveRun

KEEP = 3  # finished runs kept as ghosts (besides the pinned one)
GHOST_ROW = LEGEND_ROW  # px of legend a ghost adds above a replay's plot (its own row, on a phone)
UPLOAD_MB = math.ceil(MAX_JSON_BYTES / 2**20)  # st.file_uploader counts MiB
FINISHED = ("done", "stopped", "diverged")


def _history(lesson: str) -> list[dict]:
    return list(st.session_state.get(f"_ghosts_{lesson}", []))


def _pin_key(lesson: str) -> str:
    return f"_ghost_pin_{lesson}"


def remember_finished(lesson: str, run: LiveRun | None) -> None:
    """Keep each finished run once (its config and loss curve), the newest last."""
    if run is None or run.running or run.status not in FINISHED:
        return
    history = _history(lesson)
    if any(h["run_id"] == run.run_id for h in history):
        return
    snaps = run.view()[0]
    if not snaps:
        return
    entry = {"run_id": run.run_id, "config": run.config, "ghost": ghost_record(_figures(lesson), "", snaps)}
    st.session_state[f"_ghosts_{lesson}"] = (history + [entry])[-(KEEP + 1):]  # the run on screen + KEEP before


def ghosts(lesson: str, run: LiveRun | None, reference=None) -> list[dict]:
    """The ghosts to draw beside ``run``: the last finished runs before it and the pinned one, each labelled
    by the settings in which it differs from ``reference`` (the run's config when not given)."""
    reference = reference if reference is not None else run.config if run is not None else None
    shown = [h for h in _history(lesson) if run is None or h["run_id"] != run.run_id][-KEEP:]
    pin = st.session_state.get(_pin_key(lesson))
    if pin is not None:
        shown = [h for h in shown if h["run_id"] != pin["run_id"]] + [pin]
    teacher = teacher_ghost(lesson)  # a student's copy of the teacher's run ("Try it yourself")
    if teacher is not None:
        shown.append(teacher)
    if _figures(lesson).decided_by_settings and reference is not None:  # the same settings draw the same curve
        shown = [h for h in shown if h.get("config") != reference or (pin is not None and h is pin)]
    out = []
    for h in shown:
        label = h.get("label") or (difference_label(h["config"], reference) if reference is not None
                                   else "earlier run")
        if label == "same settings":
            label = "same settings, earlier run"
        out.append({**h["ghost"], "label": label, "pinned": pin is not None and h["run_id"] == pin["run_id"]})
    return out


def ghost_adder(lesson: str, run: LiveRun | None, reference=None):
    """For ``presenter.payload(extra=...)``: appends the ghosts to a live payload's traces. Computed now, on
    the script thread; the returned function only copies them in. ``reference``: the config the labels
    compare with (the run's when not given)."""
    traces = _traces(lesson, run, reference)

    def add(data: dict) -> None:
        if traces:
            data["base"] = list(data["base"]) + [dict(t) for t in traces]
            fit_ghosts(_figures(lesson), data["layout"], traces)
            show_ghost_legend(data["layout"])

    return add


def add_ghosts(fig, lesson: str, run: LiveRun | None):
    """A finished figure with the ghosts appended after its own traces (frames keep their indices)."""
    traces = _traces(lesson, run)
    for trace in traces:
        fig.add_scatter(**{k: v for k, v in trace.items() if k != "type"})
    named = sum(1 for t in traces if t.get("showlegend", True))
    if named and fig.layout.legend.yanchor == "bottom" and fig.layout.margin.t is not None:
        # a legend that grows upward from the plot gets a row of room per ghost (on a phone each one wraps), and
        # the figure grows by as much: its plots keep their size and places
        fig.update_layout(margin_t=fig.layout.margin.t + GHOST_ROW * named,
                          **({"height": fig.layout.height + GHOST_ROW * named} if fig.layout.height else {}))
    return fig.update_layout(showlegend=True) if fig.layout.showlegend is False else fig


def add_ghosts_to_spec(spec: dict, lesson: str, run: LiveRun | None) -> dict:
    """``add_ghosts`` for a figure's JSON (``autodiff_core.figures.FigureSpec``), in place."""
    traces = _traces(lesson, run)
    spec["data"] = list(spec["data"]) + [dict(t) for t in traces]
    layout = spec["layout"]
    fit_ghosts(_figures(lesson), layout, traces)
    named = sum(1 for t in traces if t.get("showlegend", True))
    top = (layout.get("margin") or {}).get("t")
    if named and (layout.get("legend") or {}).get("yanchor") == "bottom" and top is not None:
        layout["margin"] = {**layout["margin"], "t": top + GHOST_ROW * named}  # as add_ghosts: a row per ghost
        if layout.get("height"):
            layout["height"] += GHOST_ROW * named
    if traces and layout.get("showlegend") is False:
        layout["showlegend"] = True
    return spec


def _figures(lesson: str) -> RunFigures:
    """How the lesson draws its finished runs and their ghosts (its registry entry says)."""
    return lessons.lesson(lesson).run_figures


def _traces(lesson: str, run: LiveRun | None, reference=None) -> list[dict]:
    found = ghosts(lesson, run, reference)
    if not found:
        return []
    figures = _figures(lesson)
    spans = figures.boundary_range(run.config) if figures.boundary_range and run is not None else None
    return ghost_traces(figures, found, spans)


def panel(lesson: str, run: LiveRun | None, *, live_png: bool = True, shown: tuple | None = None,
          state: Callable[[], dict] | None = None) -> None:
    """Export buttons for the finished run, the ghosts' Pin and Clear, and loading a run file.
    ``live_png``: a PNG button for the live chart (a lesson whose finished view is a ``charts.plot`` figure
    has the camera in that figure's toolbar instead). ``shown``: ``(config, states)`` the page shows, where that
    is more than the run (lesson 5's chart carries its history on, through Steps): the exports hold what is on
    screen, and the widgets' values now are its settings. ``state``: what "Send to class" sends when the lesson's
    state on screen is no finished run's end (lesson 5 after Step: ``board.state_entry``)."""
    if lesson in SETTINGS:
        sync_url(lesson)  # a button that changed a setting mid-run (Regenerate) reaches the address bar
    remember_finished(lesson, run)
    board.remember_settings(lesson, run)
    board_view.lesson_panel(lesson)  # the presenter's board of this lesson, right under its chart
    finished = run is not None and not run.running and run.status in FINISHED and run.view()[0]
    history = _history(lesson)
    c = iter(st.columns(6, vertical_alignment="bottom"))  # filled from the left: no empty slot between buttons
    if finished:
        _exports(lesson, run, c, shown)
    if live_png:
        with next(c):
            png_button(f"{lesson}-chart", key=f"{lesson}_png")
    if finished:
        next(c).button("Pin as reference", key=f"{lesson}_pin", width="stretch", on_click=_pin, args=(lesson, run),
                    help="Keep this run's curve as a ghost beside every later run.")
    next(c).button("Clear ghosts", key=f"{lesson}_clear_ghosts", width="stretch",
                disabled=not history and st.session_state.get(_pin_key(lesson)) is None and not teacher_ghost(lesson),
                on_click=_clear, args=(lesson, run))
    if state is not None:
        board.send_button(state, key=f"{lesson}_send")
    elif finished:
        board.send_button(lambda: board.run_entry(lesson, run), key=f"{lesson}_send")
    _load(lesson)


def _exports(lesson: str, run: LiveRun, c, shown: tuple | None) -> None:
    """CSV, JSON and HTML of the run on screen, made when a button is pressed."""
    config, states = shown if shown is not None else (run.config, None)
    widgets = list(lessons.lesson(lesson).settings)
    settings = board.settings_of(lesson, run) if shown is None else to_params(widgets, current_values(widgets))
    on_screen = (lambda: states) if states is not None else (lambda: run.view()[0])
    record = lambda: run_record(lesson, config, on_screen(), status=run.status,  # noqa: E731
                                message=run.message, settings=settings)
    name = f"{lesson}-{run.run_id}"
    title = run_words.heading(lesson, run_words.values_of(lesson, settings), config)
    next(c).download_button("CSV", lambda: to_csv(record()), f"{name}.csv", "text/csv", key=f"{lesson}_csv",
                            on_click="ignore", width="stretch", help="One row per recorded state.")
    next(c).download_button("JSON", lambda: to_json(record()), f"{name}.json", "application/json",
                            key=f"{lesson}_json", on_click="ignore", width="stretch",
                            help="Settings, every recorded state, and the torch/numpy/app versions. "
                                 "Load it back below to replay the run without training.")
    next(c).download_button("HTML", lambda: standalone_html(replay_figure(_figures(lesson), config, on_screen()), name,
                                                            heading=title),
                            f"{name}.html", "text/html", key=f"{lesson}_html", on_click="ignore", width="stretch",
                            help="The replay as one HTML file with Play/Pause and the slider; it plays offline.")


def _load(lesson: str) -> None:
    """A run file, loaded: its replay, and a caption that says what ran and where the widgets above differ."""
    upload = st.file_uploader("Open a run file (JSON) to watch it again", type=["json"], key=f"{lesson}_load",
                              help="A run exported from this lesson: its replay is shown, nothing is trained.",
                              max_upload_size=UPLOAD_MB)  # the browser refuses larger ones before sending them
    if upload is None:
        return
    try:
        loaded, config, snaps, record = from_json(upload.getvalue())
        if loaded != lesson:
            raise ValueError(f"This run file is a run of {lessons.lesson(loaded).nav_title}; open that lesson "
                             "to replay it.")
    except ValueError as exc:  # one sentence that may quote the file: shown as text, never as markdown
        st.error(plain(str(exc)))
        return
    st.caption(loaded_caption(lesson, config, snaps, record))
    replayed = dataclasses.replace(config, device="cpu")  # drawn here, wherever it trained
    plot(replay_figure(_figures(lesson), replayed, snaps), key=f"{lesson}_loaded_replay")


def loaded_caption(lesson: str, config, snaps: list, record: dict) -> str:
    """"Loaded run: 1,000 recorded states of Learning rate 0.01, Momentum 0.9, …, made with torch …": what ran, in
    the widgets' words, and which widgets above show other values now. Markdown; the file's text is data."""
    v = record.get("versions", {})
    made = ", ".join(f"{k} {echo(str(v.get(k)))}" for k in ("torch", "numpy", "app"))  # file text: data
    values = run_words.values_of(lesson, record.get("settings"))
    ran = (f"Its settings: {run_words.words(lesson, values, config)}." if values else
           "The file does not record its settings in the widgets' words (an older file).")
    text = f"Loaded run: {len(snaps):,} recorded states, made with {made}. Replayed, not trained. {ran}"
    if other := run_words.differences(lesson, values):
        text += f" The settings above are not the run's: {'; '.join(other)}."
    return text


def _pin(lesson: str, run: LiveRun) -> None:
    remember_finished(lesson, run)
    entry = next((h for h in _history(lesson) if h["run_id"] == run.run_id), None)
    st.session_state[_pin_key(lesson)] = entry


def _clear(lesson: str, run: LiveRun | None) -> None:
    keep = [h for h in _history(lesson) if run is not None and h["run_id"] == run.run_id]
    st.session_state[f"_ghosts_{lesson}"] = keep
    st.session_state[_pin_key(lesson)] = None
    forget_teacher_ghost(lesson)
