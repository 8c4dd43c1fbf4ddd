"""The class board on screen: a lesson's scatter and table (``pages/board.py``), lesson 6's counts, the "Show
nicknames" toggle, and the presenter view's folded board under a lesson's chart. What it shows is made by
``studio.room.board``; what students sent (nicknames, mistakes) is drawn in dataframe cells, plot hovers and code
spans (``links.echo``), never as markdown."""

from __future__ import annotations

import streamlit as st

from autodiff_core.figures.board import board_scatter

from ..charts import plot
from ..links import echo
from ..presenter import presenting
from ..state import drawn_at
from . import panel
from .board import (
    NAMES,
    NAMES_KEY,
    PICK,
    challenge_tables,
    default_x,
    indexed,
    numeric_settings,
    picked,
    run_table,
    scores,
    sent_line,
    setting_value,
    who,
)

TOP = 5  # runs the presenter's folded board lists


def _on_pick(lesson: str, chart: str) -> None:
    """The scatter's ``on_select``: the clicked run is loaded before the next page draws (``board.take_pick``)."""
    index = picked(st.session_state.get(chart))
    if index is not None:
        st.session_state[PICK] = (lesson, index)


def _axes(lesson: str, entries: list[dict], prefix: str) -> tuple[dict, str, str | None]:
    """The two pickers: a setting on x (when the runs hold one), a score on y. Returns (settings, x key, score)."""
    options, found = numeric_settings(lesson, entries), scores(entries)
    x_key, y_key = f"{prefix}_{lesson}_x", f"{prefix}_{lesson}_y"
    if not found:
        return options, x_key, None
    c = st.columns(2)
    if options:
        if st.session_state.get(x_key) not in options:
            st.session_state[x_key] = default_x(options, entries)
        c[0].selectbox("Setting (x)", list(options), key=x_key, format_func=lambda k: options[k].label or k)
    if st.session_state.get(y_key) not in found:
        st.session_state[y_key] = found[0]
    c[1].selectbox("Score (y)", found, key=y_key, format_func=lambda k: NAMES.get(k, k))
    return options, x_key, st.session_state[y_key]


def run_section(lesson: str, subs: list[dict], shown: bool, prefix: str = "board", compact: bool = False) -> None:
    """A run lesson's board: the scatter (a setting on x, a score on y) and the runs sorted by the score (the
    whole table; in the presenter's ``compact`` board, the best ``TOP`` as large text)."""
    runs = indexed(subs, lesson)
    entries = [e for _, e in runs]
    options, x_key, score = _axes(lesson, entries, prefix)
    if score is None:
        return
    if options:
        setting = options[st.session_state[x_key]]
        points = [(i, setting_value(setting, e), e["figures"].get(score), who(e, shown)) for i, e in runs]
        points = [p for p in points if p[1] is not None and p[2] is not None]
        chart = f"{prefix}_{lesson}_chart"
        plot(board_scatter([p[1] for p in points], [p[2] for p in points], [p[3] for p in points],
                           [p[0] for p in points], x_title=setting.label or setting.key,
                           y_title=NAMES.get(score, score)),
             key=chart, on_select=lambda: _on_pick(lesson, chart), selection_mode="points")
        st.caption("Click a point to load that run's settings as your next run.")
    rows = run_table(lesson, entries, score, shown)
    if compact:
        column = NAMES.get(score, score)
        lines = [f"{n}. {echo(r['student'])} · {column} **{_number(r[column])}**" for n, r in enumerate(rows[:TOP], 1)]
        st.markdown("\n".join(lines))
    else:
        st.dataframe(rows, hide_index=True, width="stretch")


def _number(value) -> str:
    return "—" if value is None else f"{value:.4g}"


def challenge_section(entries: list[dict], shown: bool, compact: bool = False) -> None:
    """Lesson 6's board: solved per challenge, each mistake the judge named and how many made it, and (on the
    page) who solved which."""
    per_challenge, per_mistake, per_student = challenge_tables(entries, shown)
    if compact:
        st.markdown("\n".join(f"- {r['challenge']}: **{r['solved']}** of {r['sent']} solved" for r in per_challenge))
        st.markdown("\n".join(f"- {echo(r['mistake'])}: **{r['students']}**" for r in per_mistake[:TOP]))
        return
    c = st.columns(2)
    c[0].markdown("**Solved, per challenge**")
    c[0].dataframe(per_challenge, hide_index=True, width="stretch")
    c[1].markdown("**Mistakes the judge named**")
    if per_mistake:
        c[1].dataframe(per_mistake, hide_index=True, width="stretch")
    else:
        c[1].caption("None sent yet.")
    st.markdown("**Who solved which**")
    st.dataframe(per_student, hide_index=True, width="stretch")


def section(lesson: str, subs: list[dict], shown: bool, prefix: str = "board", compact: bool = False) -> None:
    """One lesson's part of the board: its challenges (lesson 6's verdicts) or its runs."""
    entries = [e for e in subs if e.get("lesson") == lesson]
    if any("challenge" in e.get("notes", {}) for e in entries):
        challenge_section(entries, shown, compact)
    else:
        run_section(lesson, subs, shown, prefix, compact)


@panel.guarded
def _show_names(code: str, key: str) -> None:
    panel.classes().show_names(code, key, bool(st.session_state.get(NAMES_KEY)))


def names_toggle(code: str, key: str) -> bool:
    """"Show nicknames": the class's setting (``Classes.show_names``), which every board of it follows."""
    room = panel.classes().room(code)
    shown = room is not None and room.names_shown  # None: the class was deleted since this run began
    st.session_state[NAMES_KEY] = shown  # the class's, which another tab of the teacher's may have changed
    st.toggle("Show nicknames", key=NAMES_KEY, on_change=_show_names, args=(code, key), **drawn_at("toggle", NAMES_KEY),
              help="Hidden until you show them: each point and row then says who sent it.")
    return shown


def lesson_panel(lesson: str) -> None:
    """In the presenter view, under a lesson's chart: the teaching teacher's board of this lesson, folded."""
    if not presenting():
        return
    try:
        held = panel.teaching()
        subs = panel.classes().submissions(held[0]) if held is not None else []
        room = panel.classes().room(held[0]) if held is not None else None
        shown = room is not None and room.names_shown
    except Exception:
        return  # the sidebar says the store is unavailable
    if held is None:
        return
    entries = [e for e in subs if e.get("lesson") == lesson]
    with st.expander(f"Class board · {len(entries)} sent", expanded=False):
        if entries:
            st.caption(sent_line(entries))
            section(lesson, subs, shown, prefix="present", compact=True)
        else:
            st.caption("No student has sent anything from this lesson yet.")
