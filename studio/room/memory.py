"""What the browser remembers of a class across a reload, which gives it a new Streamlit session: its own id
(a student's place in the class is kept under it, server-side) and, in the teacher's browser only, the
teacher key. Both are first-party cookies, written by a component that draws nothing and read back from
``st.context.cookies`` when the next session starts. The join link never holds either."""

from __future__ import annotations

import json
import re
import secrets

import streamlit as st

BROWSER, TEACHER = "studio_browser", "studio_teacher"
AGE = 14 * 86400  # seconds a cookie is kept: longer than a class and its data
_BROWSER_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")
_TEACHER_HELD = re.compile(r"([A-Z0-9]{5})\.([A-Za-z0-9_-]{16,64})")

_JS = """
export default function ({ data }) {
  for (const [name, value] of Object.entries(JSON.parse((data && data.cookies) || "{}"))) {
    const keep = value ? `${encodeURIComponent(value)}; max-age=${data.age}` : "; max-age=0";
    document.cookie = `${name}=${keep}; path=/; SameSite=Strict`;
  }
}
"""

_component = st.components.v2.component("autograd_studio.class_memory", html="<span hidden></span>", js=_JS)


def _cookie(name: str) -> str:
    try:
        return str(st.context.cookies.get(name) or "")
    except Exception:  # outside a browser session (AppTest): no cookies
        return ""


def browser_id() -> str:
    """This browser's id: the one its cookie holds, else a new one (written by ``write``)."""
    ss = st.session_state
    if "room_browser" not in ss:
        held = _cookie(BROWSER)
        ss["room_browser"] = held if _BROWSER_ID.fullmatch(held) else secrets.token_urlsafe(18)
    return ss["room_browser"]


def known_browser() -> bool:
    """Whether this browser came with its id cookie (it was here before), so the store may know it."""
    return bool(_BROWSER_ID.fullmatch(_cookie(BROWSER)))


def teacher_cookie() -> tuple[str, str] | None:
    """(code, teacher key) as this browser's cookie holds them, if it holds a well-formed pair."""
    m = _TEACHER_HELD.fullmatch(_cookie(TEACHER))
    return (m.group(1), m.group(2)) if m else None


def write(teacher: tuple[str, str] | None) -> None:
    """Make the browser's cookies say this browser's id and ``teacher`` (None: not teaching)."""
    wanted = {BROWSER: browser_id(), TEACHER: f"{teacher[0]}.{teacher[1]}" if teacher else ""}
    if all(_cookie(k) == v for k, v in wanted.items()):
        return
    # The cookies as JSON text: Streamlit checks every other kind of value in a component's data for a dataframe,
    # and its check imports pandas, 0.4 s of a new browser's first page.
    _component(key="studio_class_memory", data={"cookies": json.dumps(wanted), "age": AGE}, height=0)
