"""Train / Stop / speed controls and the live section every training lesson shares.

The script run draws the page once; while a run is going, the live chart reads the run from the live
feed by itself (``studio.feed``), so nothing reruns the script until the run ends. Then the chart asks
for one rerun, which draws the finished view.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import streamlit as st

from . import lessons
from .first_paint import RUN_ROW
from .room.follow import following, view
from .room.keep import brought_back, save_run, saved_run
from .room.lead import trained
from .runner import LiveRun, current_session_id
from .session_functions import share_with_lessons


def _key(lesson: str) -> str:
    return f"{lesson}_run"


def current_run(lesson: str) -> LiveRun | None:
    return st.session_state.get(_key(lesson))


def keep_run(lesson: str, run: LiveRun) -> LiveRun:
    """Make ``run`` the lesson's current run (what ``current_run`` returns); returns it."""
    st.session_state[_key(lesson)] = run
    return run


def start_run(lesson: str, run: LiveRun) -> LiveRun:
    """Start ``run`` as the lesson's current run (Train's, or lesson 5's Play); returns it. On a teacher's page it is
    the run the class follows next (``room.lead.trained``)."""
    keep_run(lesson, run.start())
    trained(run)
    return run


def forget_run(lesson: str) -> LiveRun | None:
    """The lesson no longer has a current run; returns the one it had."""
    return st.session_state.pop(_key(lesson), None)


def speed_value(text: str) -> float | None:
    return None if text == "max" else float(text)


def controls(lesson: str, start: Callable[[], LiveRun | None] | None) -> LiveRun | None:
    """Train and Stop buttons and the speed slider (the lesson's setting ``<lesson>_speed``). ``start`` builds the
    run from the settings as the session holds them when it is called (None when they are invalid), or is None
    when the settings on screen are invalid.

    Train starts the run in the button's callback, before the page's script runs again: with a class pressing Train
    at once, the script runs queue for the server's GIL, and the run need not wait for its page's."""
    if following(lesson):
        view(lesson)  # the teacher's run, in place of the student's own: the page ends there
    run = current_run(lesson)
    if run is None and (back := saved_run(lesson)) is not None:  # a reload in a class: the student's last run
        run = keep_run(lesson, back)
    running = run is not None and run.running
    # keyed (its class ``st-key-<lesson>_run_row``): the page's first stylesheet keeps the row as tall as the
    # speed slider from its first paint (``first_paint.RUN_ROW``): Train and Stop never move in it
    c1, c2, c3 = st.container(key=f"{lesson}{RUN_ROW}").columns([1, 1, 3], vertical_alignment="bottom")
    lessons.widget(f"{lesson}_speed", c3)
    c1.button("Train", key=f"{lesson}_train", type="primary", disabled=start is None, width="stretch",
              on_click=_train, args=(lesson, start))
    c2.button("Stop", key=f"{lesson}_stop", disabled=not running, width="stretch",
              on_click=_stop, args=(lesson,))
    if run is not None:
        run.set_speed(speed_value(st.session_state[f"{lesson}_speed"]))
    save_run(lesson, run)  # in a class, a finished run is kept for this browser
    if brought_back(lesson, run):
        st.caption("Your last run, kept by the class: the reload brought it back.")
    return run


def _train(lesson: str, start: Callable[[], LiveRun | None] | None) -> None:
    """Train's callback: a new run from the settings as they are now, replacing the lesson's run."""
    share_with_lessons()  # a callback runs before app.py binds them: the session's own Functions, for the config
    try:
        new = start() if start is not None else None
    except KeyError:  # a rerun that sent no widget values (no browser does): Train stays for the next click
        return
    if new is None:  # the settings are invalid now: the page says why
        return
    old = current_run(lesson)
    if old is not None:
        old.stop("Replaced by a new run.")
    new.speed, new.session_id = speed_value(st.session_state[f"{lesson}_speed"]), current_session_id()
    start_run(lesson, new)


def _stop(lesson: str) -> None:
    run = current_run(lesson)
    if run is not None:
        run.stop()
        run.join(0.5)  # the worker ends within a step: this rerun already shows the stopped run
    st.rerun()  # the whole page: a stopped run's finished view reaches beyond the run's section


def train_section(lesson: str, start: Callable[[], LiveRun | None] | None, draw: Callable[[LiveRun | None], None],
                  config=None, after: Callable[[LiveRun | None], None] | None = None) -> None:
    """A lesson's run on the page: Train, Stop and the speed (``controls``), the live chart or the finished view
    (``live_section``), then ``after(run)`` (the exports' panel).

    It is one fragment: Train reruns this section alone, and the click's page update costs a few widgets and the
    chart instead of the whole page (with a class pressing Train at once, the script runs queue for the GIL).
    Stop and the run's end rerun the whole page: a finished run is drawn beyond this section (the class's
    question, what the reload keeps)."""
    st.fragment(_section)(lesson, start, draw, config, after)


def _section(lesson, start, draw, config, after) -> None:
    controls(lesson, start)
    live_section(lesson, draw, config)
    if after is not None:
        after(current_run(lesson))


def status_text(run: LiveRun | None, unit: str, total: int | None) -> str:
    """One line that says what the run is doing, in the student's words. ``total``: the planned number of
    steps (counted from 0, as the loops count), or None for an open-ended run."""
    if run is None:
        return ""
    last = run.last
    step = run.step_of(last) if last is not None else 0
    if run.status == "queued":  # its place and why (budget.Budget.admit)
        return run.message
    now = run.finished or time.perf_counter()
    elapsed = now - (now if run.began is None else run.began)  # time spent queued is not training time
    if run.running:  # the step is the chart's heading: the one painted, which trails the run by a few
        of = f" {total:,} {unit}s" if total else ""
        return f"Training{of}… {elapsed:.1f} s"
    if run.status == "done":
        if total and step >= total - 1:
            return f"Finished: all {total:,} {unit}s ({unit}s 0 to {total - 1:,}) in {elapsed:.1f} s."
        return f"Finished at {unit} {step:,} in {elapsed:.1f} s."
    if run.status == "stopped":
        why = "" if run.message in ("", "Stopped.") else f" {run.message}"
        return f"Stopped at {unit} {step:,}.{why}"
    if run.status == "diverged":
        return f"Diverged at {unit} {step:,}."
    return run.message


def live_section(lesson: str, draw: Callable[[LiveRun | None], None], config=None) -> None:
    """``draw(run)`` (the live chart, or the finished run's view), then what ended the run if it failed.

    ``config``: the settings on screen now. When they differ from the run's, what ended that run is
    said to be about the run on screen, not about the new settings."""
    run = current_run(lesson)
    draw(run)
    if run is None or run.running or run.status not in ("diverged", "error"):
        return
    if config is not None and config != run.config:
        st.info("The chart shows your last run, which used other settings: "
                f"{run.message} Press Train to run with the settings above.")
    else:
        (st.warning if run.status == "diverged" else st.error)(run.message)
