"""The code editor lessons 6 and 8 share: a student's Function typed in the browser, in the Ace editor (Apply, or
Ctrl+Enter, checks it) or in a plain text box (with a Check button), kept per exercise in the session.

Each lesson names its session keys by a prefix ("wf", "fa"): ``<prefix>_sources`` holds each exercise's text,
``<prefix>_versions`` counts how often it was replaced (a new Ace editor each time: the old one would keep its
own text), ``<prefix>_verdicts`` the last verdict (its error line is marked in the editor), and
``<prefix>_plain`` whether the plain text box is on. The code is only text here: checking it is the sandbox's.
"""

from __future__ import annotations

import streamlit as st

from .presenter import presenting
from .state import drawn_at, init_state

try:
    from streamlit_ace import st_ace
except ImportError:  # the plain text box still works
    st_ace = None


def init(prefix: str) -> None:
    """The lesson's session keys, each set once."""
    init_state({f"{prefix}_plain": st_ace is None})
    for name in ("sources", "verdicts", "versions"):
        if f"{prefix}_{name}" not in st.session_state:
            st.session_state[f"{prefix}_{name}"] = {}


def plain_toggle(prefix: str, where=st) -> None:
    key = f"{prefix}_plain"
    where.toggle("Plain text box", key=key, disabled=st_ace is None, on_change=_keep_typed, args=(prefix,),
                 help="A simple text box instead of the code editor.", **drawn_at("toggle", key))


def _keep_typed(prefix: str) -> None:
    """The toggle's callback, turning to the code editor: what the plain text box holds now is the exercise's code.
    Text typed just before the click comes with the click, and the run that follows draws no box to read it from
    (it was lost: the editor showed the code from before the typing)."""
    ss = st.session_state
    if ss[f"{prefix}_plain"]:
        return
    head = f"{prefix}_text_"
    for name in [k for k in ss if isinstance(k, str) and k.startswith(head)]:
        exercise, text = name.removeprefix(head), ss[name]
        if isinstance(text, str) and text != ss[f"{prefix}_sources"].get(exercise):
            replace(prefix, exercise, text)  # a new editor with it (Ace keeps the text it was made with)


def editor(prefix: str, key: str, start: str) -> tuple[str, bool]:
    """The editor of exercise ``key`` (its text, or ``start`` the first time); returns (the text, whether to
    check it now)."""
    ss = st.session_state
    source = ss[f"{prefix}_sources"].setdefault(key, start)
    if ss[f"{prefix}_plain"]:
        box = f"{prefix}_text_{key}"
        if box not in ss:
            ss[box] = source
        text = st.text_area("Your code", key=box, height=380, **drawn_at("text_area", box))
        ss[f"{prefix}_sources"][key] = text
        return text, st.button("Check", key=f"{prefix}_check", type="primary")
    last = ss[f"{prefix}_verdicts"].get(key)
    marks = [{"row": last.error_line - 1, "column": 0, "type": "error", "text": last.reasons[0]}] \
        if last is not None and last.error_line else []
    # wrap: a long line continues below, indented, instead of running off a narrow editor (a phone, a projector)
    size = 20 if presenting() else 16  # the code read from the back of the room
    text = st_ace(value=source, language="python", theme="chrome", font_size=size, min_lines=16, tab_size=4, wrap=True,
                  key=f"{prefix}_ace_{key}_{ss[f'{prefix}_versions'].get(key, 0)}", auto_update=False,
                  annotations=marks)
    st.caption("**Apply** (or Ctrl+Enter) checks your code. It stays grey until you change the code, so there is "
               "something new to check.")
    if isinstance(text, str) and text != source:
        ss[f"{prefix}_sources"][key] = text
        return text, True
    return source, False


def replace(prefix: str, key: str, source: str) -> None:
    """Put ``source`` in exercise ``key``'s editor (Start over, or another starting point); its verdict goes."""
    ss = st.session_state
    ss[f"{prefix}_sources"][key] = source
    ss[f"{prefix}_versions"][key] = ss[f"{prefix}_versions"].get(key, 0) + 1
    ss.pop(f"{prefix}_text_{key}", None)
    ss[f"{prefix}_verdicts"].pop(key, None)


def rerun_to_mark(prefix: str, key: str) -> None:
    """After a check that found an error line, once more, so the Ace editor marks it."""
    verdict = st.session_state[f"{prefix}_verdicts"].get(key)
    if verdict is not None and verdict.error_line and not st.session_state[f"{prefix}_plain"]:
        st.rerun()
