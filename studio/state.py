"""Widget state that survives page switches.

Streamlit forgets a widget's value when its page is not shown. Pages declare their widget defaults
with ``init_state``; values are kept in a private dict and restored when the page comes back.
Widgets take their value from ``st.session_state``; each is also drawn with that value as its default
(``drawn_at``), so a browser that draws it without its own state shows it too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import streamlit as st

_MEMORY = "_studio_widget_memory"


def init_state(defaults: dict) -> None:
    """Give each widget key its remembered value, or its default on first sight."""
    memory = st.session_state.setdefault(_MEMORY, {})
    for key, default in defaults.items():
        if key not in st.session_state:
            st.session_state[key] = memory.get(key, default)
        memory.setdefault(key, st.session_state[key])


def remember() -> None:
    """Save the current value of every declared widget (called after each page run)."""
    memory = st.session_state.setdefault(_MEMORY, {})
    for key in list(memory):
        if key in st.session_state:
            memory[key] = st.session_state[key]


def put(key: str, value) -> None:
    """Set a widget's value from outside its page (a run loaded from the class board), before the widget is
    drawn: the page then shows it, as it shows a remembered value."""
    st.session_state[key] = value
    st.session_state.setdefault(_MEMORY, {})[key] = value


def drawn_at(kind: str, key: str, *, options: Sequence | None = None, lo: Any = None, hi: Any = None) -> dict:
    """The keyword argument (``value=``; ``index=`` for a selectbox or radio, ``default=`` for a segmented control)
    that draws the widget ``kind`` of ``key`` with the session's value as its default; ``{}`` when the session has
    none that the widget can take (not among ``options``, outside ``lo``..``hi``), and Streamlit's own default
    stands.

    Streamlit sends a value set through ``st.session_state`` to the browser as a one-shot instruction, which the
    browser's widget clears once it has read it; a widget the browser draws without its own state and without
    that instruction shows the widget's default. On a page whose first script run was slow, the browser drew
    lesson 2's D_in and H at Streamlit's default, their minimum 1, although that very run had sent 1000 and 100
    (its log said so), and sent 1 back with the next rerun: Train then trained a net of D_in 1. With the session's
    value as the default, a widget drawn that way still shows the value.
    (The key keeps it: a keyed widget's identity leaves its default out, so this never resets it.)"""
    ss = st.session_state
    if key not in ss:
        return {}
    value = ss[key]
    if kind in ("selectbox", "radio"):
        choices = list(options or ())
        return {"index": choices.index(value)} if value in choices else {}
    if kind == "select_slider":
        return {"value": value} if value in list(options or ()) else {}
    if kind in ("number_input", "slider"):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return {}
        bound = lo if lo is not None else hi
        if isinstance(bound, float):
            value = float(value)
        elif isinstance(bound, int) and isinstance(value, float):
            if not value.is_integer():
                return {}
            value = int(value)
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            return {}
        return {"value": value}
    if kind == "segmented_control":
        return {"default": value} if value in list(options or ()) else {}
    if kind in ("toggle", "checkbox"):
        return {"value": bool(value)} if isinstance(value, bool) else {}
    if kind in ("text_input", "text_area"):
        return {"value": value} if isinstance(value, str) else {}
    raise ValueError(f"no default for a {kind}")
