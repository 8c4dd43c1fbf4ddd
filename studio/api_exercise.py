"""Lesson 8's editor: the part's Function to edit, break and check. It starts from the challenge (a skeleton or
a broken Function) or from the lesson's own Function (its real source), in lesson 6's editor
(``code_editor.py``); Check validates it here and judges it in the sandbox (``grading/api_judge.py``), never in
the server. Each check's verdict is shown as plain text.
"""

from __future__ import annotations

import streamlit as st

from autodiff_core.grading.api_challenges import API_CHALLENGES
from autodiff_core.grading.api_judge import check_api

from . import code_editor
from .links import plain
from .runner import current_session_id

PREFIX = "fa"


def exercise(part: str) -> None:
    """The editor of ``part``'s challenge, its buttons, and the last verdict."""
    if part not in API_CHALLENGES:
        return
    ch = API_CHALLENGES[part]
    code_editor.init(PREFIX)
    st.subheader("Edit it, break it, check it")
    left, right = st.columns([3, 2])
    with right:
        st.markdown(f"**{ch.title}**: {ch.task}")
        with st.expander("Hint"):
            st.markdown(ch.hint)
        st.button("Start from the challenge", key="fa_skeleton", on_click=code_editor.replace,
                  args=(PREFIX, part, ch.skeleton), width="stretch")
        st.button("Start from the lesson's Function", key="fa_solution", on_click=code_editor.replace,
                  args=(PREFIX, part, ch.solution), width="stretch",
                  help="Its real source: change it and see what breaks.")
        code_editor.plain_toggle(PREFIX)
        st.caption(allowed(ch.form))
    with left:
        source, wanted = code_editor.editor(PREFIX, part, ch.skeleton)
    if wanted:
        with st.spinner("Checking in the sandbox…"):
            st.session_state.fa_verdicts[part] = check_api(source, part, owner=current_session_id())
        code_editor.rerun_to_mark(PREFIX, part)
    verdict = st.session_state.fa_verdicts.get(part)
    if verdict is not None:
        show(verdict)


def allowed(form) -> str:
    methods = ", ".join(f"`{name}({', '.join(params)})`" for name, params in form.methods)
    ctx = ", ".join(f"`ctx.{c}`" for c in sorted(form.ctx_calls | form.ctx_attributes))
    flags = "".join(f", `{f} = True`" for f in sorted(form.flags))
    none = " `x is None`," if form.none_checks else ""
    return (f"The class: {methods}{flags}. Allowed: arithmetic, comparisons,{none} `if`, masked assignment, {ctx}, "
            f"`torch.` {', '.join(sorted(form.torch_functions))}; tensor methods "
            f"{', '.join(sorted(form.tensor_methods))}. No imports, loops or names starting with _.")


def show(v) -> None:
    """The verdict: its headline, each check with what it found (plain text), and what to do."""
    (st.success if v.passed else st.error)(v.headline)
    for name, ok, detail in v.checks:  # what the code or autograd said is text, never markup
        st.markdown(f"{'✓' if ok else '✕'} **{plain(name)}**: {plain(detail)}")
    if not v.checks:
        for reason in v.reasons:
            st.error(plain(reason))
    for note in v.notes:
        st.warning(plain(note))
