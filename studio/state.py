"""Widget state that survives page switches.

Streamlit forgets a widget's value when its page is not shown. Pages declare their widget defaults
with ``init_state``; values are kept in a private dict and restored when the page comes back.
Widgets then take their value from ``st.session_state`` only (never ``value=``), so each key is set
once, behind a guard.
"""

from __future__ import annotations

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
