"""A student's passing Function as an activation in lessons 2 and 5, for their session only.

The engine keeps student Functions by name (``functions.STUDENT_ACTIVATIONS``); each name carries a
token of the session that made it, and ``activation_names()`` lists only the names the running
session holds here, in ``st.session_state``. The training threads look a name up directly.
"""

from __future__ import annotations

import secrets

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from autodiff_core.challenges import Challenge
from autodiff_core.functions import register_student_activation, set_student_scope
from autodiff_core.student import load

KEY = "wf_activations"  # this session's names, in st.session_state
TOKEN = "wf_token"


def session_names() -> list[str]:
    """The student Functions of the session running this script (none outside a script run)."""
    if get_script_run_ctx() is None:
        return []
    return list(st.session_state.get(KEY, []))


def share_with_lessons() -> None:
    """Let activation_names() list the running session's own Functions (idempotent)."""
    set_student_scope(session_names)


def offer(challenge: Challenge, source: str) -> str:
    """Compile a source that passed (validated again: it is only ever compiled from its tree) and make it an
    activation of this session; returns its name."""
    fn = load(source, challenge.n_inputs)
    token = st.session_state.setdefault(TOKEN, secrets.token_hex(3))
    name = f"yours: {challenge.title} ({token})"
    register_student_activation(name, fn.apply)
    names = [n for n in st.session_state.get(KEY, []) if n != name]
    st.session_state[KEY] = [*names, name]
    return name
