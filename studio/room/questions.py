"""Predict, then run: before pressing Train the teacher asks the class a question (choices, or a number); the
students answer on their screens; when the run ends, the answers' histogram shows beside what the run did.

``question_bar(lesson)`` is the one call, at the top of every lesson page (``studio.presets.bind_lesson``). A
session that neither teaches nor is in a class reads nothing from the store. The rules (asking, answering,
closing when the teacher's run starts, recording what it did) are ``studio.room.classes``; this module draws
them. Question and choices are the teacher's text: shown as plain text, never as markdown.
"""

from __future__ import annotations

import logging
import statistics

import streamlit as st

from autodiff_core.figures.answers import choice_counts, choice_figure, number_figure

from .. import lessons
from ..charts import plot
from ..links import plain
from ..live_view import current_run
from ..presenter import presenting
from ..state import drawn_at
from . import panel
from .classes import MAX_QUESTION, ClassError, Question
from .outcome import STALL, judge, outcome_of  # noqa: F401 - what happened is the question's too

log = logging.getLogger(__name__)
# Ready-made for a lesson with runs (its registry entry has a config): each choice is one outcome a run can have
READY = {"down": "The loss goes down", "up": "It blows up (NaN)", "stall": "It stalls"}
CHOICE_TEXT, NUMBER_TEXT = "What will the loss do?", "What will the final loss be?"
KINDS = ("Choices", "A number")
_ERROR = "room_error"  # where panel.guarded leaves a refusal: moved here, by the question, to be seen on a phone
_SENT = "ask_sent"  # (question id, this student's answer)
def question_bar(lesson: str) -> None:
    """The class's question on this lesson page: the teacher's to ask and watch, a student's to answer, and,
    after the run, the answers beside what happened."""
    student = panel.joined()
    try:
        held = panel.teaching()  # reads the store only when this browser teaches a class
        if held is None and student is None:
            return
        room = panel.classes().room(held[0] if held else student.code)
    except Exception:  # the sidebar already says the store cannot be reached
        log.exception("the class store failed")
        return
    if room is None or room.over:
        return
    with st.container(key="ask_bar"):
        _said()
        try:
            if held is not None:
                _teacher(lesson, held, room.question)
            else:
                _student(lesson, student, room.question)
        except Exception:  # the store failed mid-way (the answers): one sentence, and the lesson goes on
            log.exception("the class store failed")
            st.caption(panel.UNAVAILABLE)


# ---- the teacher ----
def _teacher(lesson: str, held: tuple[str, str], q: Question | None) -> None:
    here = q is not None and q.lesson in ("", lesson)
    if here and q.open:
        _watch(held, q)
        return
    if here and q.run_id:
        _teacher_result(held, q, lesson)
    elif q is not None and q.open:
        st.caption(f"Your question is open in {_title(q.lesson)}; asking here replaces it.")
    _ask_form(lesson, held)


def _watch(held: tuple[str, str], q: Question) -> None:
    """An open question: how many answered, and closing it."""
    count, big = len(panel.classes().answers(held[0], q.id)), _big()  # on the projector, the class reads it
    with st.container(border=True):
        st.markdown(f"{big}**You asked the class:** {plain(q.text)}")
        st.caption(" · ".join(plain(c) for c in q.choices) if q.choices else "The answer is a number.")
        c1, c2 = st.columns([3, 1], vertical_alignment="center")
        c1.markdown(f"{big}**{count} answered.** The question closes when you press Train.")
        c2.button("Close the question", key="ask_close", on_click=_act, args=("close_question", *held),
                  width="stretch", help="Takes it off the students' screens without a run.")


def _ask_form(lesson: str, held: tuple[str, str]) -> None:
    ss, ready = st.session_state, lessons.lesson(lesson).config is not None  # a lesson with runs
    with st.expander("Ask the class before you train", expanded=False):
        kind = st.radio("The answer is", KINDS, key="ask_kind", horizontal=True, on_change=_kind_changed,
                        **drawn_at("radio", "ask_kind", options=list(KINDS)),
                        args=(ready,))
        if "ask_text" not in ss:
            ss["ask_text"] = _ready_text(kind, ready)
        st.text_input("Question", key="ask_text", max_chars=MAX_QUESTION, **drawn_at("text_input", "ask_text"))
        if kind == KINDS[0]:
            if "ask_choices" not in ss:
                ss["ask_choices"] = "\n".join(READY.values()) if ready else ""
            st.text_area("Choices, one a line (2 to 6)", key="ask_choices", height=110,
                         **drawn_at("text_area", "ask_choices"))
        st.button("Ask", key="ask_ask", type="primary", on_click=_act, args=("ask", lesson, *held))


def _ready_text(kind: str, ready: bool) -> str:
    return "" if not ready else CHOICE_TEXT if kind == KINDS[0] else NUMBER_TEXT


def _kind_changed(ready: bool) -> None:
    ss = st.session_state
    if ss.get("ask_text", "").strip() in ("", CHOICE_TEXT, NUMBER_TEXT):  # the teacher's own words stay
        ss["ask_text"] = _ready_text(ss["ask_kind"], ready)


def _teacher_result(held: tuple[str, str], q: Question, lesson: str) -> None:
    """After the run the question predicted: what it did (recorded for the students once), and the answers."""
    outcome = q.outcome
    if not outcome:
        run = current_run(q.lesson or lesson)
        if run is None or run.run_id != q.run_id or run.running:  # not on this page (a reload): the relay
            count = len(panel.classes().answers(held[0], q.id))  # records its outcome when it ends
            st.info(f"{count} answered before this run. Their answers show here when it ends.")
            return
        outcome = outcome_of(run)
        _act("settle", held[0], held[1], q.id, outcome)
        _said()
    _result(q, panel.classes().answers(held[0], q.id), outcome)


# ---- a student ----
def _student(lesson: str, student, q: Question | None) -> None:
    if q is None:
        return
    if q.lesson and q.lesson != lesson:
        if q.open:
            st.info(f"Your teacher asks the class a question in {_title(q.lesson)}.")
            if q.lesson in lessons.SETTINGS:
                st.page_link(lessons.lesson(q.lesson).page, label=f"Answer it: open {_title(q.lesson)}")
        return
    if q.open:
        _answer_form(student, q)
    elif q.outcome:
        _result(q, panel.classes().answers(student.code, q.id), q.outcome, mine=_mine(student, q))
    elif q.run_id:
        with st.container(border=True):
            st.markdown(f"**{plain(q.text)}**")
            _your_answer(_mine(student, q), "")
            st.info("The teacher's run has started. The class's answers show here when it ends.")


def _answer_form(student, q: Question) -> None:
    key = f"ask_pick_{q.id}"
    with st.container(border=True):
        st.markdown(f"**Your teacher asks:** {plain(q.text)}")
        if q.choices:
            st.radio("Your answer", q.choices, index=None, key=key, format_func=plain)
        else:
            st.number_input("Your answer (a number)", value=None, key=key, format="%g", step=0.01)
        st.button("Send", key="ask_send", type="primary", on_click=_act, args=("send", student, q, key))
        _your_answer(_mine(student, q), " You can change it until the teacher's run starts.")


def _mine(student, q: Question):
    """This student's answer to ``q``: remembered when sent, read from the store once after a reload."""
    ss = st.session_state
    sent = ss.get(_SENT)
    if sent is None or sent[0] != q.id:
        sent = ss[_SENT] = (q.id, panel.classes().answers(student.code, q.id).get(student.id))
    return sent[1]


def _shown(value) -> str:
    return f"{value:.4g}" if isinstance(value, (int, float)) else plain(value)


def _your_answer(value, more: str) -> None:
    if value is not None:
        st.success(f"Your answer: **{_shown(value)}**.{more}")


# ---- actions: a refusal is a sentence by the question ----
def _act(action: str, *args) -> None:
    panel.guarded(_ACTIONS[action])(*args)
    text = st.session_state.pop(_ERROR, None)
    if text:
        st.session_state["ask_error"] = text


def _said() -> None:
    text = st.session_state.pop("ask_error", None)
    if text:
        st.error(text)


def _ask(lesson: str, code: str, key: str) -> None:
    ss = st.session_state
    choices = []
    if ss.get("ask_kind", KINDS[0]) == KINDS[0]:
        choices = [c for c in ss.get("ask_choices", "").splitlines() if c.strip()]
        if not choices:
            raise ClassError("Write the choices, one a line, or ask for a number.")
    panel.classes().ask(code, key, ss.get("ask_text", ""), choices, lesson)


def _send(student, q: Question, key: str) -> None:
    value = st.session_state.get(key)
    if value is None:
        raise ClassError("Pick one of the choices first." if q.choices else "Type a number first.")
    panel.classes().answer(student, student.code, q.id, value)
    st.session_state[_SENT] = (q.id, value if q.choices else float(value))


_ACTIONS = {"ask": _ask, "send": _send,
            "close_question": lambda code, key: panel.classes().close_question(code, key),
            "settle": lambda code, key, qid, outcome: panel.classes().settle(code, key, qid, outcome)}


# ---- what happened ----
def happened(q: Question, outcome: dict) -> int | None:
    """The choice that came true: the ready-made one for the run's outcome, when the question offers it."""
    said = READY.get(outcome.get("kind", ""), "").casefold()
    return next((i for i, c in enumerate(q.choices) if said and c.casefold() == said), None)


def _result(q: Question, answers: dict, outcome: dict, mine=None) -> None:
    """The answers' histogram beside what happened (the presenter's size in the presenter view)."""
    big = _big()
    with st.container(border=True):
        st.markdown(f"{big}**Predict, then run:** {plain(q.text)}")
        left, right = st.columns([3, 2], vertical_alignment="center")
        with left:
            if q.choices:
                fig = choice_figure(q.choices, answers.values(), happened(q, outcome))
            else:
                fig = number_figure([v for v in answers.values() if isinstance(v, (int, float))], outcome.get("final"))
            plot(fig, key="ask_result")
        with right:
            for line in _story(q, answers, outcome, mine):
                st.markdown(big + line)


def _story(q: Question, answers: dict, outcome: dict, mine) -> list[str]:
    lines = [f"**What happened:** {plain(outcome.get('text', ''))}"]
    if q.choices:
        i = happened(q, outcome)
        if i is not None:
            right = choice_counts(q.choices, answers.values())[i]
            lines.append(f"{right} of {len(answers)} predicted “{plain(q.choices[i])}”.")
    else:
        numbers = [v for v in answers.values() if isinstance(v, (int, float))]
        if numbers:
            lines.append(f"The class's median guess: {statistics.median(numbers):.4g} ({len(numbers)} answered).")
    if mine is not None:
        lines.append(f"Your answer: **{_shown(mine)}**.")
    return lines


def _big() -> str:
    """A markdown line's prefix: in the presenter view, text at a size the back row reads."""
    return "#### " if presenting() else ""


def _title(lesson: str) -> str:
    return lessons.lesson(lesson).nav_title if lesson in lessons.SETTINGS else "another lesson"
