"""A student's side of following the teacher: the page goes where the teacher goes, takes the teacher's
settings, and its live chart paints the teacher's run (``studio.room.relay``) at its own pace.

Once joined, a student follows until they press "Try it yourself" or open another page themselves; "Follow
the teacher" starts again. A small component in the sidebar (``watch``) waits on the class and reruns the page
only when what it shows changed: for a student, the room's version (the teacher's lesson, settings, run,
question); for the teacher, the class's news (submissions, answers), see ``studio.room.watch``."""

from __future__ import annotations

import dataclasses
import logging

import streamlit as st

from .. import links
from ..charts import plot
from ..feed import PLAIN, layout_id
from ..lessons import lesson as _lesson
from ..live_chart import follow_chart
from ..presenter import presented, presenting
from ..sidebar import DTYPE, SEED
from . import panel, relay
from .classes import KEEP
from .lead import HOME, lead, lesson_at, page_of

log = logging.getLogger(__name__)
FOLLOW = "room_follow"  # session: this student follows the teacher (on when they join)
_APPLIED = "room_applied"  # the room version whose lesson and settings this session took
_AT = "room_at"  # the lesson this session showed while following


def following(lesson: str) -> bool:
    """Whether this page shows the teacher's ``lesson`` (settings and run) rather than the student's own."""
    ss = st.session_state
    return panel.joined() is not None and ss.get(FOLLOW, True) and ss.get(_AT) == lesson


def lead_or_follow(path: str) -> None:
    """app.py, before the sidebar draws: a teacher's page tells the class where it is; a student's follows."""
    panel.restore_safely()
    lead(path)
    follow(path)


def follow(path: str) -> None:
    """Before the sidebar draws: a following student's page goes to the teacher's lesson and takes the teacher's
    settings. A student who opened another page themselves stops following (a note says so)."""
    ss = st.session_state
    student = panel.joined()
    if student is None:
        return
    try:
        room = panel.classes().room(student.code)
    except Exception:
        log.exception("the class store failed")
        return
    if room is None or room.over:
        ss.pop("room_student", None)
        ss["room_note"] = f"Class {student.code} has ended."
        return
    here = lesson_at(path)
    if FOLLOW not in ss and panel.rejoined():  # a reload: following or working alone, as before it
        ss[FOLLOW] = _was_following(student)
    if not ss.get(FOLLOW, True) or not room.lesson:
        ss.pop(_AT, None)
        return
    new = room.version != ss.get(_APPLIED)
    if here != room.lesson:
        if not new and ss.get(_AT) == room.lesson:  # the student went elsewhere by themselves
            _set_following(False)
            ss.pop(_AT, None)
            ss["room_note"] = "You left the teacher's lesson, so you no longer follow it."
            return
        st.switch_page(page_of(room.lesson))
    if new:
        _take(room.lesson, room.settings)
        ss[_APPLIED] = room.version
    ss[_AT] = here


def _following_key(student) -> str:
    return f"class:{student.code}:following:{student.id}"


def _set_following(on: bool) -> None:
    """Follow the teacher or not, in this session and for this browser's next one (a reload)."""
    st.session_state[FOLLOW] = on
    student = panel.joined()
    if student is not None:
        try:
            panel.classes().store.put(_following_key(student), b"1" if on else b"0", KEEP)
        except Exception:
            log.exception("the class store failed")


def _was_following(student) -> bool:
    try:
        return panel.classes().store.get(_following_key(student)) != b"0"
    except Exception:
        return True


def _take(lesson: str, given: dict) -> None:
    """The teacher's settings into this session's widgets, checked as a link's are (before any widget draws)."""
    ss = st.session_state
    if lesson != HOME:
        settings = list(_lesson(lesson).settings)
        keys = {s.key for s in settings}
        found, _ = links.read_params(settings, {k: [v] for k, v in given.items() if k in keys})
        links.take(lesson, found)  # the page's own URL no longer sets them
    dtype, _ = DTYPE.parse(given.get("dtype", "")) if "dtype" in given else (None, "")
    if dtype is not None:
        ss["dtype"] = dtype
    seed, _ = SEED.parse(given["seed"]) if "seed" in given else (None, "")
    ss["seed_tutorial"] = seed is None
    if seed is not None:
        ss["seed_value"] = seed


_GHOST = "room_teacher_ghost"  # session: lesson -> the teacher's last finished run there, as a ghost


def teacher_ghost(lesson: str) -> dict | None:
    """The teacher's finished run this student took with "Try it yourself", as ``classroom``'s ghosts keep one.
    Taken mid-run, it is the run's end: read from the class once the teacher's run has ended."""
    ghosts = st.session_state.get(_GHOST, {})
    if ghosts.get(lesson, True) is None and (student := panel.joined()) is not None:
        try:
            got = relay.teacher_ghost(student.code, lesson)
        except Exception:
            got = None
        if got is not None and got["run_id"] == st.session_state.get(_FORK, {}).get(lesson, {}).get("run"):
            ghosts[lesson] = _ghost_entry(got)
    return ghosts.get(lesson) or None


def _ghost_entry(got: dict) -> dict:
    return {"run_id": f"teacher-{got['run_id']}", "config": None, "label": "the teacher's run", "ghost": got["ghost"]}


def forget_teacher_ghost(lesson: str) -> None:
    st.session_state.get(_GHOST, {}).pop(lesson, None)


GOING = ("queued", "starting", "running")
_FORK = "room_fork"  # session: lesson -> the teacher's state a student forked mid-run ({"step", "run", and
# "weights" where the live states carry them, or "shared": a network's whole state, see mirror.share)


def fork_point(lesson: str) -> dict | None:
    """The teacher's state this student took mid-run with "Try it yourself": its step and weights (the three of
    lesson 3's live states, or lesson 5's ``playground_state.shared_state``)."""
    return st.session_state.get(_FORK, {}).get(lesson)


def forget_fork(lesson: str) -> None:
    st.session_state.get(_FORK, {}).pop(lesson, None)


def _fork_at(code: str, lesson: str) -> dict | None:
    """The newest state of the teacher's run of ``lesson`` while it goes, where it carries weights."""
    got = relay.newest(code)
    if got is None or got[0] != lesson or got[1].get("status") not in ("starting", "running"):
        return None
    shared = relay.fork_state(code, lesson, got[1].get("run"))
    if shared is not None and type(shared.get("step")) is int:  # checked in full where it is used
        return {"step": shared["step"], "shared": shared, "run": got[1].get("run")}
    states = [s for s in got[1].get("states") or [] if isinstance(s.get("weights"), list)]
    if not states:
        return None
    return {"step": int(states[-1]["step"]), "weights": [float(w) for w in states[-1]["weights"]],
            "run": got[1].get("run")}


def _try_it(lesson: str) -> None:
    student = panel.joined()
    try:
        got = relay.teacher_ghost(student.code, lesson) if student is not None else None
        fork = _fork_at(student.code, lesson) if student is not None else None
    except Exception:
        log.exception("the class store failed")
        got = fork = None
    forks = st.session_state.setdefault(_FORK, {})
    forks.pop(lesson, None)
    if fork is not None:  # mid-run: the student goes on from the teacher's step and weights
        forks[lesson] = fork
    ghosts = st.session_state.setdefault(_GHOST, {})
    if fork is not None:  # the teacher's run is going: its ghost comes when it ends (None: wanted, not there yet)
        ghosts[lesson] = None
    elif got is not None:  # beside the student's own runs, to compare with
        ghosts[lesson] = _ghost_entry(got)
    else:
        ghosts.pop(lesson, None)
    _set_following(False)
    st.session_state["room_note"] = (
        f"Your own copy of the teacher's run as it was at step {fork['step']:,}: train it to go on from there." if fork
        else "Your own copy of the teacher's settings: change them, or press Train to run them yourself.")


def _follow_again() -> None:
    _set_following(True)
    st.session_state.pop(_APPLIED, None)  # take the teacher's lesson and settings now


def bar(lesson: str) -> None:
    """At the top of a lesson: what following means here, and the way out or back in."""
    student = panel.joined()
    if student is None:
        return
    with st.container(border=True):
        left, right = st.columns([4, 1], vertical_alignment="center")
        if following(lesson):
            left.markdown(f"**Following the teacher** of class **{student.code}**: the settings and the run on "
                          "this page are the teacher's.")
            right.button("Try it yourself", key="room_try", type="primary", on_click=_try_it, args=(lesson,),
                         width="stretch", help="Stop following and keep the teacher's settings, to change them or "
                                               "train them yourself; the teacher's last run stays as a ghost.")
        else:
            left.markdown(f"In class **{student.code}**, working on your own.")
            right.button("Follow the teacher", key="room_follow_again", on_click=_follow_again, width="stretch",
                         help="Go to the teacher's lesson and settings, and watch the teacher's run live.")


def view(lesson: str) -> None:
    """A following student's page from here on: the teacher's run in the lesson's live chart, and nothing of the
    student's own runs (their Train, exports and replays come back with "Try it yourself")."""
    chart(lesson, f"{lesson}_live")
    replay(lesson)
    st.stop()


def replay(lesson: str) -> None:
    """Under the teacher's finished run: its replay, to play and scrub at the student's own pace."""
    from autodiff_core.figures.classroom import replay_figure
    from autodiff_core.runs_io import from_json

    code = panel.joined().code
    try:
        got, shown = relay.teacher_run(code, lesson), relay.newest(code)
    except Exception:
        log.exception("the class store failed")
        return
    if got is None or shown is None or shown[1].get("run") != got[0] or shown[1].get("status") in GOING:
        return  # no finished run, or the teacher's newest run is going: the live chart shows it
    cache = st.session_state.setdefault("room_replay", {})
    if cache.get("run_id") != got[0]:
        kind, config, snaps, _ = from_json(got[1])
        cache.clear()
        cache.update(run_id=got[0], config=dataclasses.replace(config, device="cpu"), snaps=snaps)
    st.subheader("The teacher's run, replayed")
    st.caption("Play it, or drag the slider, at your own pace.")
    plot(replay_figure(_lesson(lesson).run_figures, cache["config"], cache["snaps"]), key=f"{lesson}_follow_replay")


def chart(lesson: str, key: str) -> None:
    """The teacher's run of ``lesson`` in the live chart under ``key`` (the lesson's own chart's key), painted
    from the class's relay; a sentence while the teacher has not trained this lesson."""
    code = panel.joined().code
    try:
        got = relay.newest(code)
    except Exception:
        log.exception("the class store failed")
        st.caption(panel.UNAVAILABLE)
        return
    if got is None or got[0] != lesson:
        st.info("The teacher's run shows here when the teacher presses Train.")
        return
    payload, feed = got[1], f"{relay.PREFIX}{code}/live?lesson={lesson}"
    if presenting():  # this view's scale, whatever the teacher's view is (the relay's copy has none)
        payload = presented(payload)
        payload.pop(PLAIN)
        payload["layout_id"] = layout_id(payload["layout"], payload.get("base"))
        feed += "&present=1"
    follow_chart({**payload, "feed": feed, "follow": True}, key=key)
