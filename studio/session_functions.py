"""A student's passing Function as an activation in lessons 2 and 5: their session's own, carried by their links.

Each browser session holds its own Functions (``st.session_state``): a ``remote.StudentActivation`` per name,
which computes in a sandboxed worker of that session's, so nobody's Function evicts or slows another's, and
the server process never runs a student's code. A name says whose challenge it solves and which code it is,
``yours: ReLU (8c6793ab)``, the id being a hash of the *validated* syntax tree (comments and spacing do not
change it): the same code gets the same name in any browser.

A Function becomes an activation only after it passed Check in the sandbox (gradcheck, and a run at training
size in float32 and float64), and only as the very code that was checked. A lesson's link carries the code
itself, ``?tl_activation=yours: ReLU (8c6793ab) eNpLz…`` (zlib, base64url). Such a link runs nothing when it
opens: the code is shown as text ("This link carries a Function someone wrote"), and it is checked and used
only when the person who opened the link presses the button.
"""

from __future__ import annotations

import ast
import base64
import binascii
import hashlib
import re
import zlib
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from autodiff_core.functions import activation_names, bind_student_activations
from autodiff_core.grading.challenges import CHALLENGES, Challenge
from autodiff_core.grading.judge import check
from autodiff_core.grading.remote import StudentActivation
from autodiff_core.grading.validator import MAX_CHARS, Refused, validate

from .links import Setting
from .runner import current_session_id
from .state import _MEMORY as MEMORY

KEY = "wf_activations"  # this session's names, in st.session_state (in the order they were added)
FUNCTIONS = "wf_functions"  # this session's name -> StudentActivation
PENDING = "wf_link_functions"  # setting key -> (name, challenge key, code) a link brought, not yet checked
ACTIVATION_KEYS = ("tl_activation", "pg_activation")  # lessons 2 and 5's activation settings
PREFIX = "yours: "
ID_CHARS = 8  # a hash's first 8 hex digits name it
MAX_LINK_CODE = 8000  # characters of packed code a link may carry (the longest allowed code packs to ~3,000)
_LINKED = re.compile(r"yours: (?P<title>.{1,60}?) \((?P<id>[0-9a-f]{6,64})\)(?: (?P<code>[A-Za-z0-9_-]+))?")
_BY_TITLE = {c.title: c for c in CHALLENGES.values() if c.n_inputs == 1}
MISSING = ("is a Function written in lesson 6 in another browser, and this browser does not have it (to use it "
           "here, solve that challenge in 6 · Write your own Function and press Use my Function in lessons 2 and 5)")


def session_functions() -> dict[str, StudentActivation]:
    """The student Functions of the session running this script (none outside a script run)."""
    if get_script_run_ctx() is None:
        return {}
    return st.session_state.get(FUNCTIONS, {})


def share_with_lessons() -> None:
    """Hand this script run's thread its session's own Functions, so that the engine's activation_names() lists
    them (app.py, at the start of every run: a link may bring one to lesson 2 before lesson 6 was opened)."""
    bind_student_activations(session_functions())


def digest(challenge: Challenge, source: str) -> str:
    """The hash of ``source``'s validated syntax tree (raises ``Refused`` for code the allow-list refuses)."""
    return hashlib.sha256(ast.dump(validate(source, challenge.n_inputs).tree).encode()).hexdigest()


def name_of(challenge: Challenge, source: str) -> str:
    """The content-addressed name of ``source``: the same for the same code in every browser."""
    return f"{PREFIX}{challenge.title} ({digest(challenge, source)[:ID_CHARS]})"


def adopt(challenge: Challenge, source: str, cost: tuple[float, float] | None = None) -> str:
    """Make ``source``, which passed Check exactly as it is, an activation of this session; returns its name.
    The code is validated here (it is never compiled or run in the server) and runs in the sandbox."""
    submission = validate(source, challenge.n_inputs)
    canonical = ast.unparse(submission.tree)  # what the link carries: no comments, same tree
    try:
        validate(canonical, challenge.n_inputs)
    except Refused:  # spelled out longer than the limits allow: carry the code as typed
        canonical = source
    name = name_of(challenge, source)
    ss = st.session_state
    functions = dict(ss.get(FUNCTIONS, {}))
    old = [n for n in functions if n.startswith(f"{PREFIX}{challenge.title} (") and n != name]
    for n in old:  # one Function per challenge: a new version takes the old one's place
        functions.pop(n).close()
    if name not in functions:
        functions[name] = StudentActivation(name, canonical, challenge.key, **({"cost": cost} if cost else {}))
    ss[FUNCTIONS] = functions
    share_with_lessons()  # the rest of this run sees it too
    ss[KEY] = [*(n for n in ss.get(KEY, []) if n not in old and n != name), name]
    for values in (ss, ss.get(MEMORY, {})):  # lessons 2 and 5's activation, shown or remembered
        for key in ACTIVATION_KEYS:
            if values.get(key) in old:
                values[key] = name
    return name


def close_session_functions(state) -> None:
    """End the workers of a session's Functions (its tab closed for good)."""
    for fn in state.get(FUNCTIONS, {}).values():
        fn.close()


def pack(code: str) -> str:
    return base64.urlsafe_b64encode(zlib.compress(code.encode(), 9)).decode().rstrip("=")


def unpack(text: str) -> str:
    """Packed code from a link -> the code; ValueError for anything that is not packed code of allowed size
    (a zip bomb stops at the size limit)."""
    if len(text) > MAX_LINK_CODE:
        raise ValueError("too long")
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        inflate = zlib.decompressobj()
        code = inflate.decompress(data, MAX_CHARS * 4 + 1)
        if inflate.unconsumed_tail or len(code) > MAX_CHARS * 4 or not inflate.eof:
            raise ValueError("too long or cut short")
        return code.decode("utf-8")
    except (binascii.Error, zlib.error, UnicodeDecodeError) as exc:
        raise ValueError("not packed code") from exc


class ActivationSetting(Setting):
    """Lessons 2 and 5's activation: one of the built-in choices, or a Function from lesson 6 with its code.
    Code from a link is validated (read, never run) and waits for consent (``link_consent``)."""

    def options(self) -> list:
        return activation_names()  # the built-in choices, then this session's own Functions from lesson 6

    def parse(self, text: str) -> tuple[Any, str]:
        if not text.startswith(PREFIX):
            return super().parse(text)
        if len(text) > MAX_LINK_CODE + 100:
            return None, "is too long"
        match = _LINKED.fullmatch(text)
        challenge = _BY_TITLE.get(match["title"]) if match else None
        if challenge is None:
            return None, "is not one of the choices"
        name = text[:match.start("code") - 1] if match["code"] else text
        if not match["code"]:
            return (name, "") if name in session_functions() else (None, MISSING)
        try:
            code = unpack(match["code"])
            hashed = digest(challenge, code)
        except Refused as exc:  # its words may quote the code: only the line is shown
            return None, "carries code that lesson 6 refuses" + (f" (line {exc.line})" if exc.line else "")
        except (ValueError, RecursionError, MemoryError):
            return None, "carries code that cannot be read"
        if not hashed.startswith(match["id"]):
            return None, "carries code that is not the Function it names (the link was changed)"
        found = name_of(challenge, code)
        if found in session_functions():
            return found, ""
        if get_script_run_ctx() is not None:
            st.session_state.setdefault(PENDING, {})[self.key] = (found, challenge.key, code)
        return None, ""  # nothing runs until the person who opened the link asks (link_consent)

    def format(self, value: Any) -> str:
        fn = session_functions().get(value) if isinstance(value, str) else None
        if fn is not None:
            return f"{value} {pack(fn.source)}"
        pending = st.session_state.get(PENDING, {}).get(self.key) if get_script_run_ctx() is not None else None
        if pending is not None and value == self.default:  # still waiting for consent: the link stays the link
            return f"{pending[0]} {pack(pending[2])}"
        return super().format(value)


CONSENT = ("**This link carries a Function someone wrote**, as the activation. None of it has run. Read it below; "
           "**Check and use it** runs lesson 6's Check on it in the sandbox (gradcheck, then a batch of the size "
           "training uses, in float32 and float64) and uses it only if it passes.")


def link_consent(key: str) -> None:
    """Where a link brought a Function for setting ``key``: show its code as text, and check and use it only
    when the person who opened the link asks. Draw before the setting's widget."""
    ss = st.session_state
    pending = ss.get(PENDING, {}).get(key)
    if pending is None:
        return
    name, challenge_key, code = pending[:3]
    with st.container(border=True):
        st.markdown(CONSENT)
        c = st.columns([2, 2, 5], vertical_alignment="center")  # the buttons above the code: on screen at once
        checked = c[0].button("Check and use it", key=f"{key}_consent", type="primary", width="stretch")
        c[2].text(name)
        if c[1].button("Ignore it", key=f"{key}_ignore", width="stretch"):
            ss[PENDING].pop(key, None)
            st.rerun()
        if checked:
            with st.spinner("Checking in the sandbox…"):
                verdict = check(code, challenge_key, owner=current_session_id())
            if verdict.passed:
                ss[key] = adopt(CHALLENGES[challenge_key], code, verdict.cost)
                ss[PENDING].pop(key, None)
                st.rerun()
            ss[PENDING][key] = pending = (name, challenge_key, code, verdict)
        if len(pending) > 3:
            verdict = pending[3]
            st.error(f"It was not used: {verdict.headline}")
            for line in verdict.reasons:
                st.text(line)
        st.code(code, language="python", height=min(300, 40 + 21 * code.count("\n")))
