"""The class board: what students send, and what the teacher's board makes of it (``board_view`` draws it).

A student in a class presses "Send to class" under a finished run (its settings, as the lesson's URL parameters,
and its final figures) or under lesson 6's verdict (the challenge, whether it passed, the mistake the judge
named). The teacher's board (``pages/board.py``, and an expander of a lesson's page in the presenter view) shows
every submission on each script run, so a rerun on news (``Classes.news``) keeps it live: a scatter of one
setting against a final score, a table sorted by score, nicknames hidden until the teacher shows them, and a
click on a point that loads that run's settings as the teacher's next run. Nicknames and what students send
are data: shown in dataframe cells and plot hovers as text, never as markdown.
"""

from __future__ import annotations

import hashlib
import re

import streamlit as st

from autodiff_core.grading.challenges import CHALLENGES

from .. import lessons
from ..links import Setting, current_values, read_params, take, to_params
from . import panel

SCORES = ("loss", "test_loss", "train_loss", "accuracy", "test_accuracy", "train_accuracy")  # a snapshot's, if it has
NAMES = {"loss": "final loss", "test_loss": "test loss", "train_loss": "train loss", "accuracy": "accuracy",
         "test_accuracy": "test accuracy", "train_accuracy": "train accuracy", "steps": "last step"}
HIDDEN = "hidden"  # who sent a run, until the teacher shows the nicknames
SENT = "Sent to the class board."
KEEP = 8  # runs whose settings a session keeps for sending
_SETTINGS = "_board_run_settings"  # session key: {run_id: the lesson's URL parameters when the run started}
PICK = "board_pick"  # session key: (lesson, submission index) a click on the board chose, loaded before the page
_LOADED = "_board_loaded"  # session key: the sentence that says a run's settings were loaded
NAMES_KEY = "board_names"
TAB = "board_tab"  # session: the board's open tab (a lesson's title)
SHOWN_SETTING = 60  # characters of a setting the table shows (a Function from lesson 6 by its name, not its code)


# ---- sending ----

def remember_settings(lesson: str, run) -> None:
    """Keep a run's settings (the lesson's URL parameters) at first sight: that is the script run that started
    it, whose widgets hold the values its config was built from. Later changes to the widgets are not the run's."""
    if run is not None:
        remember(lesson, run.run_id)


def remember(lesson: str, run_id: str) -> None:
    """Keep the settings on screen now as those of ``run_id`` (a run, or a state a step made), once."""
    kept = st.session_state.setdefault(_SETTINGS, {})
    if run_id not in kept:
        kept[run_id] = _now(lesson)
        for old in list(kept)[:-KEEP]:
            del kept[old]


def _now(lesson: str) -> dict[str, str]:
    settings = list(lessons.lesson(lesson).settings)
    return to_params(settings, current_values(settings))


def settings_of(lesson: str, run) -> dict[str, str]:
    """The lesson's URL parameters that made ``run`` (kept at its first sight), else the widgets' now."""
    kept = st.session_state.get(_SETTINGS, {}).get(run.run_id)
    return dict(kept) if kept is not None else _now(lesson)


def _figures(last) -> dict:
    return {name: getattr(last, name) for name in SCORES if isinstance(getattr(last, name, None), (int, float))}


def run_entry(lesson: str, run) -> dict:
    """What a finished run sends: its settings and its final figures (scores, and the last step)."""
    last = run.view()[0][-1]
    figures = {**_figures(last), "steps": run.step_of(last)}
    return {"lesson": lesson, "run_id": run.run_id, "settings": st.session_state.get(_SETTINGS, {}).get(run.run_id, {}),
            "figures": figures, "notes": {"status": run.status}}


def state_entry(lesson: str, state_id: str, last, step: int) -> dict:
    """What a state that is no run's end sends (lesson 5 after Step): the settings of the step that made it
    (``remember``), else those on screen, and its figures."""
    settings = st.session_state.get(_SETTINGS, {}).get(state_id) or _now(lesson)
    return {"lesson": lesson, "run_id": state_id, "settings": settings, "figures": {**_figures(last), "steps": step},
            "notes": {"status": "stepped"}}


def mistake(verdict) -> str:
    """The mistake the judge named, in a few words ("Your backward forgot grad_output"); "" when it passed.
    Its first reason's first sentence, cut at its colon: what follows says how to mend it, or quotes numbers."""
    if verdict.passed:
        return ""
    if verdict.error_line is not None or not (verdict.reasons or verdict.notes):
        return verdict.headline.rstrip(".")  # "Your code was not run", "Your code raised an error"
    several = [r.split(": ")[1] for r in verdict.reasons if r.startswith("Mistake ") and r.count(": ") >= 2]
    if len(several) > 1:  # the judge named each of several mistakes: "2 mistakes: it forgot …; the sign is wrong"
        return f"{len(several)} mistakes: {'; '.join(m[0].lower() + m[1:] for m in several)}"[:120]
    first = re.split(r"(?<=[.;])\s", (verdict.reasons or verdict.notes)[0], maxsplit=1)[0].rstrip(".;")
    head = first.split(":")[0]
    return (head if len(head.split()) >= 3 else first)[:120]


def verdict_entry(lesson: str, challenge: str, source: str, verdict) -> dict:
    """What lesson 6 sends: the challenge, whether the checked code passed, and the mistake the judge named.
    The same code sent twice is the same run."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    return {"lesson": lesson, "run_id": f"{challenge}-{digest}", "settings": {"wf_challenge": challenge},
            "figures": {"passed": 1 if verdict.passed else 0},
            "notes": {"challenge": challenge, "mistake": mistake(verdict)}}


@panel.guarded
def _send(entry: dict) -> None:
    student = panel.joined()
    panel.classes().submit(student, student.code, entry)


def send_button(entry, key: str) -> None:
    """"Send to class" for a student in a class; ``entry()`` makes what it sends. One line says how it went."""
    if panel.joined() is None:
        return
    if st.button("Send to class", key=key, type="primary",
                 help="Your settings and final score go to your teacher's class board."):
        _send(entry())
        error = st.session_state.pop("room_error", None)  # guarded's sentence, shown here by the button
        if error:
            st.error(error)
        else:
            st.success(SENT)


# ---- loading a run from the board ----

def picked(selection) -> int | None:
    """The submission a click on the board's chart chose (its point's customdata), or None."""
    for point in ((selection or {}).get("selection") or {}).get("points") or []:
        index = point.get("customdata")
        if isinstance(index, int) and not isinstance(index, bool):
            return index
    return None


@panel.guarded
def take_pick(current: str) -> None:
    """Before the page draws (app.py): load the run a click on the board chose, as the teacher's next run, and
    open its lesson (``current``: the page's url path). Its settings are checked as a link's are."""
    if (said := st.session_state.pop(_LOADED, None)) is not None:
        st.toast(said, duration="long")  # the lesson just opened
    choice = st.session_state.pop(PICK, None)
    held = panel.teaching() if choice is not None else None
    if held is None:
        return
    key, index = choice
    subs = panel.classes().submissions(held[0])
    if key not in lessons.SETTINGS or not isinstance(index, int) or not 0 <= index < len(subs) \
            or subs[index].get("lesson") != key:
        return
    entry, lesson = subs[index], lessons.lesson(key)
    found, notes = read_params(list(lesson.settings), {k: [v] for k, v in entry["settings"].items()},
                               legacy=lesson.legacy)
    take(key, found, notes)
    score = _score([entry])
    value = entry["figures"].get(score) if score else None
    said = (f"Loaded the settings of the run with {NAMES.get(score, score)} {value:.4g}: train to run them."
            if value is not None else "Loaded the run's settings: train to run them.")
    if current == key:
        st.toast(said, duration="long")
    else:
        st.session_state[_LOADED] = said
        st.switch_page(lesson.page)


# ---- the board ----

def who(entry: dict, shown: bool) -> str:
    """Who sent ``entry``: the nickname (or "Student 7") once the teacher shows names, "hidden" until then."""
    return (entry.get("name") or f"Student {entry.get('number')}") if shown else HIDDEN


def numeric_settings(lesson: str, entries: list[dict]) -> dict[str, Setting]:
    """The lesson's number settings that the runs sent hold, by key (what the scatter can put on x)."""
    found = {}
    for s in lessons.lesson(lesson).settings:
        if s.kind in (int, float) and any(setting_value(s, e) is not None for e in entries):
            found[s.key] = s
    return found


def setting_value(setting: Setting, entry: dict) -> float | None:
    text = entry.get("settings", {}).get(setting.key)
    value = setting.parse(text)[0] if isinstance(text, str) else None
    return None if value is None else float(value)


def scores(entries: list[dict]) -> list[str]:
    present = {k for e in entries for k, v in e.get("figures", {}).items() if v is not None}
    return [k for k in (*SCORES, "steps") if k in present]


def _score(entries: list[dict]) -> str | None:
    found = scores(entries)
    return found[0] if found else None


def default_x(options: dict[str, Setting], entries: list[dict]) -> str:
    """The learning rate when the lesson has one, else the first setting whose value differs between runs."""
    for key, s in options.items():
        if s.label.startswith("Learning rate"):
            return key
    varied = [k for k, s in options.items() if len({setting_value(s, e) for e in entries}) > 1]
    return (varied or list(options))[0]


def run_table(lesson: str, entries: list[dict], score: str, shown: bool) -> list[dict]:
    """One row per run, best score first (lowest loss, highest accuracy); settings as the URL writes them."""
    settings = lessons.lesson(lesson).settings
    rows = []
    for e in entries:
        row = {"student": who(e, shown)}
        row.update({NAMES.get(k, k): e["figures"].get(k) for k in scores(entries)})
        row.update({s.label or s.key: cell(e["settings"].get(s.key, "")) for s in settings
                    if not s.key.endswith("_speed")})
        rows.append(row)
    col, high = NAMES.get(score, score), "accuracy" in score

    def order(row):
        v = row[col]
        return (v is None, -v if v is not None and high else v if v is not None else 0.0)

    return sorted(rows, key=order)


def cell(text: str) -> str:
    """A setting as the board's table shows it: whole up to ``SHOWN_SETTING`` characters, else up to its last space
    before them (a Function's name before its packed code) and an ellipsis. A click still loads it whole."""
    if len(text) <= SHOWN_SETTING:
        return text
    head = text[:SHOWN_SETTING]
    return (head.rsplit(" ", 1)[0] if " " in head else head[:-1]) + "…"


def indexed(subs: list[dict], lesson: str) -> list[tuple[int, dict]]:
    return [(i, e) for i, e in enumerate(subs) if e.get("lesson") == lesson]


def challenge_tables(entries: list[dict], shown: bool) -> tuple[list[dict], list[dict], list[dict]]:
    """Lesson 6's board: per challenge how many solved it (of those who sent one), each mistake the judge named
    with how many students made it, and who solved which. A student counts once per challenge and mistake."""
    tried, solved, mistakes, by_student = {}, {}, {}, {}
    for e in entries:
        key = e.get("notes", {}).get("challenge")
        if key not in CHALLENGES:
            continue
        student = e.get("student")
        tried.setdefault(key, set()).add(student)
        name = by_student.setdefault(student, [who(e, shown), set()])
        if e.get("figures", {}).get("passed"):
            solved.setdefault(key, set()).add(student)
            name[1].add(key)
        elif text := e.get("notes", {}).get("mistake"):
            mistakes.setdefault(text, set()).add(student)
    per_challenge = [{"challenge": c.title, "solved": len(solved.get(k, ())), "sent": len(tried[k])}
                     for k, c in CHALLENGES.items() if k in tried]
    per_mistake = sorted(({"mistake": m, "students": len(s)} for m, s in mistakes.items()),
                         key=lambda r: (-r["students"], r["mistake"]))
    per_student = [{"student": n, "solved": ", ".join(CHALLENGES[k].title for k in CHALLENGES if k in done) or "—"}
                   for n, done in by_student.values()]
    return per_challenge, per_mistake, per_student


def sent_line(entries: list[dict]) -> str:
    students = len({e.get("student") for e in entries})
    return (f"{len(entries)} {'run' if len(entries) == 1 else 'runs'} sent by {students} "
            f"{'student' if students == 1 else 'students'}.")


