"""A class on screen: "Start a class" and its join code, link and QR code for the teacher; joining for a
student. The rules are ``studio.room.classes``; this module only draws them and keeps who this browser is
in the class in the session's state."""

from __future__ import annotations

import functools
import io
import logging
from urllib.parse import urlsplit

import segno
import streamlit as st

from ..links import echo
from . import classes as _rules
from . import memory
from .classes import KEEP, MAX_NAME, ClassError, Classes, clean_code
from .watch import watch

log = logging.getLogger(__name__)
UNAVAILABLE = "Classes are unavailable on this server just now: it cannot reach its class store (its log says why)."
_TEACHER, _STUDENT = "room_teacher", "room_student"  # session keys: (code, key) and Student
JOIN_PARAM = "join"  # ?join=CODE: the join link


def classes() -> Classes:
    """The process's classes (``classes.shared``)."""
    return _rules.shared()


def guarded(fn):
    """A class action whose refusal (ClassError) or failing store is one sentence on screen, never a traceback."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ClassError as exc:
            st.session_state["room_error"] = str(exc)
        except Exception:  # the store (Redis, the SQLite file) failed: the page goes on without classes
            log.exception("the class store failed")
            st.session_state["room_error"] = UNAVAILABLE
    return wrapper


def browser_id() -> str:
    return memory.browser_id()


def _remembered(key: str) -> str:
    return f"browser:{key}:class"


def restore() -> None:
    """Once per session: a reloaded browser is again the teacher of its class (its cookie holds the key), or
    again the student it was (the store keeps its class under the browser's id)."""
    ss = st.session_state
    if ss.get("room_restored"):
        return
    ss["room_restored"] = True
    held = memory.teacher_cookie()
    if held is not None and ss.get(_TEACHER) is None:
        try:
            classes().teacher_room(*held)
            ss[_TEACHER] = held
        except ClassError:
            pass  # the class ended, or the cookie is not this class's key: this browser is not its teacher
    if ss.get(_STUDENT) is not None or ss.get(_TEACHER) is not None or not memory.known_browser():
        return  # a browser without the cookie never joined a class: nothing to read from the store
    raw = classes().store.get(_remembered(browser_id()))
    if raw is not None:
        student = classes().student(raw.decode(), browser_id())
        room = classes().room(raw.decode())
        if student is not None and room is not None and not room.over:
            ss[_STUDENT] = student
            ss["room_rejoined"] = True


def restore_safely() -> None:
    """``restore``, or nothing when the store cannot be read (the sidebar says so)."""
    try:
        restore()
    except Exception:
        log.exception("the class store failed")


def _client() -> str:
    return st.context.ip_address or browser_id()


def join_link(code: str) -> str:
    """The address a student opens: this app's home page with the code, never the teacher key."""
    url = urlsplit(st.context.url or "http://localhost:8501/")
    return f"{url.scheme}://{url.netloc}/?{JOIN_PARAM}={code}"


def _local_only(link: str) -> bool:
    host = urlsplit(link).hostname or ""
    return host == "localhost" or host.startswith("127.") or host == "::1"


def qr_png(text: str, scale: int = 10) -> bytes:
    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="png", scale=scale, border=2)
    return out.getvalue()


def teaching() -> tuple[str, str] | None:
    """(code, teacher key) while this browser teaches a class that is still going."""
    held = st.session_state.get(_TEACHER)
    if held is None:
        return None
    room = classes().room(held[0])
    if room is None or room.over:
        st.session_state.pop(_TEACHER, None)
        return None
    return held


def rejoined() -> bool:
    """Whether this session's student came back to the class with a reload, rather than joining in it."""
    return bool(st.session_state.get("room_rejoined"))


def joined():
    """The ``Student`` this browser is in a class as, or None."""
    return st.session_state.get(_STUDENT)


def teaching_safely() -> tuple[str, str] | None:
    """``teaching()``, or None when the store cannot be read (the sidebar says so)."""
    try:
        return teaching()
    except Exception:
        return None


@guarded
def _start() -> None:
    room, key = classes().start()
    st.session_state[_TEACHER] = (room.code, key)
    st.session_state.pop(_STUDENT, None)


@guarded
def _end() -> None:
    held = st.session_state.pop(_TEACHER, None)
    if held is not None:
        classes().end(*held)


@guarded
def _delete() -> None:
    held = st.session_state.pop(_TEACHER, None)
    if held is not None:
        classes().delete(*held)
        st.session_state["room_note"] = "The class's data is deleted."


@guarded
def _leave() -> None:
    st.session_state.pop(_STUDENT, None)
    classes().store.drop(_remembered(browser_id()))


def _messages() -> None:
    for key, show in (("room_error", st.error), ("room_note", st.success)):
        text = st.session_state.pop(key, None)
        if text:
            show(text)


def class_box() -> None:
    """The sidebar's Class section: start one, or what this browser is in."""
    st.subheader("Class")
    _messages()
    try:
        restore()
        held, student = teaching(), st.session_state.get(_STUDENT)
        count = classes().head_count(held[0]) if held is not None else 0
    except Exception:
        log.exception("the class store failed")
        st.caption(UNAVAILABLE)
        return
    memory.write(held)
    _watch(held, student)
    if held is not None:
        code = held[0]
        st.markdown(f"Teaching class **{code}** · {count} joined")
        st.code(join_link(code), language=None)
        st.button("Show the join code", key="room_show", type="primary", on_click=_show_code, args=(code,),
                  width="stretch", help="The code, the link and a QR code, large, for the projector.")
        st.button("End the class", key="room_end", on_click=_end, width="stretch")
        st.button("Delete this class's data", key="room_delete", on_click=_delete, type="tertiary",
                  help="Ends the class and deletes its students, submissions and answers from this server now.")
    elif student is not None:
        # a nickname is a student's text: shown as plain text in a code span, never as markdown
        st.markdown(f"In class **{student.code}** as {echo(student.shown)}")
        st.button("Leave the class", key="room_leave", on_click=_leave, width="stretch")
    else:
        st.button("Start a class", key="room_start", on_click=_start, width="stretch",
                  help="Gives a join code, a link and a QR code for your students.")
        st.caption("Students join from the home page, with the code or the link.")


def _watch(held, student) -> None:
    """Rerun the page when the class changes what it shows: the board's news for the teacher, the room for a
    student (the teacher's lesson, settings, run and question)."""
    try:
        if held is not None:
            watch(held[0], "news", classes().news(held[0]))
        elif student is not None:
            room = classes().room(student.code)
            watch(student.code, "version", -1 if room is None or room.over else room.version)
    except Exception:
        log.exception("the class store failed")


@st.dialog("Join the class", width="large")
def _code_dialog(code: str) -> None:
    join_code_panel(code)


def _show_code(code: str) -> None:
    st.session_state["room_show_code"] = code


def show_code_if_asked() -> None:
    """The join code's dialog, when the teacher asked for it (a dialog opens from the script, not a callback)."""
    code = st.session_state.pop("room_show_code", None)
    if code is not None:
        _code_dialog(code)


def join_code_panel(code: str, size: str = "large") -> None:
    """The code, the link and the QR code, large enough to read and scan from the back of the room."""
    left, right = st.columns([3, 2], vertical_alignment="center")
    with left:
        st.markdown(f"<div style='font-size:{'5rem' if size == 'large' else '3rem'};font-weight:700;"
                    f"letter-spacing:0.3em;font-variant-numeric:tabular-nums'>{code}</div>",
                    unsafe_allow_html=True)  # the code is 5 characters of ALPHABET, never a student's text
        st.markdown("Open the link or scan the code, then pick a nickname:")
        st.code(join_link(code), language=None)
        if _local_only(join_link(code)):
            st.warning("This address only works on this computer. For students' devices, open the app by this "
                       "computer's address on the network (the Network URL that `streamlit run` prints).")
    right.image(qr_png(join_link(code)), caption="Scan to join", width=320, output_format="PNG")  # JPEG blurs it


def join_box() -> None:
    """The home page's "Join a class": the code (filled in from a join link) and a nickname."""
    if st.session_state.get(_STUDENT) is not None or st.session_state.get(_TEACHER) is not None:
        return
    if JOIN_PARAM in st.query_params and "room_code" not in st.session_state:
        st.session_state["room_code"] = clean_code(st.query_params.get(JOIN_PARAM, ""))
    with st.container(border=True):
        st.subheader("Join a class")
        c1, c2, c3 = st.columns([2, 3, 1], vertical_alignment="bottom")
        c1.text_input("Class code", key="room_code", max_chars=9, placeholder="ABCDE")
        c2.text_input("Nickname (or leave it empty)", key="room_name", max_chars=MAX_NAME,
                      placeholder="anonymous: Student 7")
        c3.button("Join", key="room_join", type="primary", on_click=_join, width="stretch")
        _messages()


@guarded
def _join() -> None:
    ss = st.session_state
    code = clean_code(ss.get("room_code", ""))
    if not code:
        raise ClassError("A class code is 5 letters and digits, as the board shows it.")
    ss[_STUDENT] = classes().join(code, browser_id(), _client(), ss.get("room_name", ""))
    classes().store.put(_remembered(browser_id()), ss[_STUDENT].code.encode(), KEEP)  # back after a reload
    if JOIN_PARAM in st.query_params:
        del st.query_params[JOIN_PARAM]
