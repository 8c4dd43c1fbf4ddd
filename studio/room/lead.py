"""The teacher's side of following: every script run of a teaching browser names its lesson and settings to the
class (``Classes.lead``, written only when one changed), and its live run is relayed to the class
(``mirror.mirror``) while it goes. Students' pages follow (``studio.room.follow``)."""

from __future__ import annotations

import logging
from collections.abc import Callable

import streamlit as st

from .. import links
from ..lessons import lesson as _lesson
from ..lessons import lessons
from . import panel
from .mirror import mirror

log = logging.getLogger(__name__)
HOME = "home"  # the home page, as a followed lesson
MAX_SETTING = 200  # characters: a longer value (a lesson 6 Function's code) is not followed
_MIRRORED = "room_mirrored"  # session: the run id last relayed to the class
_TRAINED = "room_trained"  # session: the run id last started while this browser taught a class


def lesson_at(path: str) -> str | None:
    """The lesson a page's URL path shows (``HOME`` for the home page); None for a page no student follows to
    (the class board)."""
    if path == "":
        return HOME
    return path if path in {x.key for x in lessons()} else None


def page_of(lesson: str) -> str:
    return "pages/home.py" if lesson == HOME else _lesson(lesson).page


def settings_now(lesson: str) -> dict[str, str]:
    """The lesson's settings and the sidebar's dtype and seed, as a link gives them."""
    ss = st.session_state
    params = {}
    if lesson != HOME:
        settings = list(_lesson(lesson).settings)
        params = links.to_params(settings, links.current_values(settings))
    if "dtype" in ss:
        params["dtype"] = str(ss["dtype"])
    if ss.get("seed_tutorial") is False:
        params["seed"] = str(ss["seed_value"])
    return {k: v for k, v in params.items() if len(v) <= MAX_SETTING}


def lead(path: str) -> None:
    """On a teacher's page: tell the class where the teacher is and with which settings (the run the class
    follows stays the one the teacher last trained)."""
    held = panel.teaching_safely()
    lesson = lesson_at(path)
    if held is None or lesson is None:
        return
    try:
        # no run named: the class goes on following its run, also one that the relay (mirror) named meanwhile
        panel.classes().lead(*held, lesson, settings_now(lesson))
    except Exception:  # the sidebar's class box says the store is unavailable
        log.exception("leading class %s failed", held[0])


def trained(run) -> None:
    """On a teacher's page, Train (or lesson 5's Play) started ``run``: it is the run the class follows next, also
    when it ends before the page draws it live (``relay_ended``). A run started before the class began is not."""
    if panel.teaching_safely() is not None:
        st.session_state[_TRAINED] = run.run_id


def was_trained(run) -> bool:
    """Whether ``run`` is the run this teacher's browser last started while teaching."""
    return st.session_state.get(_TRAINED) == run.run_id


def relay_run(run, publish: Callable[[], object] | None = None) -> None:
    """On a teacher's page whose live chart publishes ``run``: relay it to the class, once per run. ``publish``:
    for a run the page has not published (it ended before its live chart was drawn), publishes it first."""
    if st.session_state.get(_MIRRORED) == run.run_id:  # first: a finished view asks on every rerun of its page
        return
    held = panel.teaching_safely()  # reads the class store
    if held is None:
        return
    st.session_state[_MIRRORED] = run.run_id
    if publish is not None:
        publish()
    mirror(*held, run.lesson, settings_now(run.lesson), run)
