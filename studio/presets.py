"""A lesson page's link and preset calls: the URL sets the widgets on first sight, the address bar follows
them, and the settings box opens with the preset picker, which applies a named preset. Each lesson's settings
and presets are declared in ``studio/lessons.py``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import streamlit as st

from . import links
from .lessons import LEGACY, SETTINGS
from .lessons import lesson as _lesson
from .presenter import presenting
from .room.follow import bar as follow_bar
from .room.questions import question_bar
from .session_functions import ActivationSetting, link_consent  # a lesson 6 Function travels in links as code
from .sidebar import take_notes


def bind_lesson(key: str) -> None:
    """The one call a lesson page makes before its widgets: the URL sets the widgets on first sight (each
    setting starts at its declared default), and the address bar follows them."""
    lesson = _lesson(key)
    # in the presenter view, the sidebar's notes show here too: its warnings are not seen
    links.bind(key, list(lesson.settings), lesson.presets, lesson.legacy, shared=take_notes(), foreign=foreign(key),
               opens=lesson.preset_opens)
    follow_bar(key)  # in a class: following the teacher here, or working alone
    for setting in lesson.settings:
        if isinstance(setting, ActivationSetting):  # a Function the link carries waits for consent
            link_consent(setting.key)
    question_bar(key)  # the class's question, for a teacher or a student; nothing for anyone else


def foreign(key: str) -> frozenset[str]:
    """The other lessons' settings, and those of their older links: none of them belongs in this lesson's address
    bar (after Back, or a page switch that crossed a rerun, the address once held lesson 3's beside lesson 2's)."""
    return frozenset(s.key for other, settings in SETTINGS.items() if other != key for s in settings) | frozenset(
        s.key for other, legacy in LEGACY.items() if other != key for old in legacy for s in old.settings)


def preset_picker(key: str, *, fold: str | None = None) -> None:
    lesson = _lesson(key)
    links.preset_picker(key, list(lesson.settings), lesson.presets, fold=fold, opens=lesson.preset_opens)


def sync_url(key: str) -> None:
    """At the end of a page run: settings a button changed mid-run (Regenerate) reach the address bar."""
    lesson = _lesson(key)
    links.write_url(list(lesson.settings), lesson.legacy, foreign(key))


@contextlib.contextmanager
def settings_box(key: str) -> Iterator[None]:
    """Where a lesson draws its settings: in the presenter view, one folded expander, which a chosen preset
    folds again (its state is kept under ``<lesson>_settings_open`` for that); the preset picker comes first
    either way."""
    if not presenting():
        with st.container():
            preset_picker(key)
            yield
        return
    fold = f"{key}_settings_open"
    with st.expander("Settings and presets", expanded=False, key=fold, on_change="rerun"):
        preset_picker(key, fold=fold)
        yield
