"""A student's passing Function as an activation in lessons 2 and 5, for their session, and in their links.

The engine keeps student Functions by name (``functions.STUDENT_ACTIVATIONS``). A name says whose challenge
it solves and which code it is: ``yours: ReLU (8c6793ab)``, the id being a hash of the *validated* code (its
syntax tree, so comments and spacing do not change it). The same code always gets the same name, in any
browser. ``activation_names()`` lists only the names the running session holds, in ``st.session_state``;
the training threads look a name up directly.

A link is the lesson (DESIGN §14), but a Function lives in the session that wrote it, so a lesson's link
carries the code itself: ``?tl_activation=yours: ReLU (8c6793ab) eNpLz…``, the name then the code (zlib,
base64url). Code from a link goes through ``student.load`` (the allow-list, then compiling the validated
tree) exactly as typed code does, and must hash to the id the name gives; it is never run as text.
"""

from __future__ import annotations

import ast
import base64
import binascii
import hashlib
import re
import threading
import zlib
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from autodiff_core.challenges import CHALLENGES, Challenge
from autodiff_core.functions import MAX_STUDENT_ACTIVATIONS, register_student_activation, set_student_scope
from autodiff_core.student import MAX_CHARS, Refused, compile_function, validate

from .links import Setting
from .state import _MEMORY as MEMORY

KEY = "wf_activations"  # this session's names, in st.session_state
ACTIVATION_KEYS = ("tl_activation", "pg_activation")  # lessons 2 and 5's activation settings
PREFIX = "yours: "
ID_CHARS = 8  # a hash's first 8 hex digits; a clash with other code gets 16 (then all 64)
MAX_LINK_CODE = 8000  # characters of packed code a link may carry (the longest allowed code packs to ~3,000)
_LINKED = re.compile(r"yours: (?P<title>.{1,60}?) \((?P<id>[0-9a-f]{6,64})\)(?: (?P<code>[A-Za-z0-9_-]+))?")
_BY_TITLE = {c.title: c for c in CHALLENGES.values() if c.n_inputs == 1}
_CODES: dict[str, str] = {}  # name -> the code a link carries (content-addressed: one name, one code)
_LOCK = threading.Lock()
MISSING = ("is a Function written in lesson 6 in another browser, and this browser does not have it (to use it "
           "here, solve that challenge in 6 · Write your own Function and press Use my Function in lessons 2 and 5)")


def session_names() -> list[str]:
    """The student Functions of the session running this script (none outside a script run)."""
    if get_script_run_ctx() is None:
        return []
    return list(st.session_state.get(KEY, []))


def share_with_lessons() -> None:
    """Let activation_names() list the running session's own Functions (idempotent)."""
    set_student_scope(session_names)


share_with_lessons()  # on import: a link may bring a Function to lesson 2 before lesson 6 was ever opened


def offer(challenge: Challenge, source: str) -> str:
    """Compile a source that passed (validated again: it is only ever compiled from its tree) and make it an
    activation of this session; returns its name, the same for the same code every time."""
    return adopt(challenge, source)


def adopt(challenge: Challenge, source: str) -> str:
    """Validate and compile ``source``, register it under its content-addressed name, and add it to the
    running session's activations. Raises ``Refused`` for code the allow-list refuses."""
    submission = validate(source, challenge.n_inputs)
    canonical = ast.unparse(submission.tree)  # what the link carries: no comments, same tree
    try:
        validate(canonical, challenge.n_inputs)
    except Refused:  # spelled out longer than the limits allow: carry the code as typed
        canonical = source
    digest = hashlib.sha256(ast.dump(submission.tree).encode()).hexdigest()
    apply = compile_function(submission).apply
    with _LOCK:  # every session's script thread registers here
        for n in (ID_CHARS, 16, 64):
            name = f"{PREFIX}{challenge.title} ({digest[:n]})"
            if _CODES.get(name, canonical) == canonical or same_tree(_CODES[name], submission.tree, challenge):
                break
        register_student_activation(name, apply)
        _CODES.pop(name, None)
        _CODES[name] = canonical
        while len(_CODES) > MAX_STUDENT_ACTIVATIONS:
            _CODES.pop(next(iter(_CODES)))
    if get_script_run_ctx() is not None:
        _replace_in_session(f"{PREFIX}{challenge.title} (", name)
    return name


def _replace_in_session(stem: str, name: str) -> None:
    """One Function per challenge in a session: a new version takes the old one's place in the list and in
    lessons 2 and 5's activation (shown or remembered for when the page comes back)."""
    ss = st.session_state
    old = [n for n in ss.get(KEY, []) if n.startswith(stem)]
    ss[KEY] = [*(n for n in ss.get(KEY, []) if n not in old), name]
    for values in (ss, ss.get(MEMORY, {})):
        for key in ACTIVATION_KEYS:
            if values.get(key) in old:
                values[key] = name


def same_tree(code: str, tree: ast.Module, challenge: Challenge) -> bool:
    return ast.dump(validate(code, challenge.n_inputs).tree) == ast.dump(tree)


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
    """Lessons 2 and 5's activation: one of the built-in choices, or a Function from lesson 6 with its code."""

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
            return (name, "") if name in session_names() and name in _CODES else (None, MISSING)
        try:
            found = adopt(challenge, unpack(match["code"]))
        except Refused as exc:  # its words may quote the code: only the line is shown
            return None, "carries code that lesson 6 refuses" + (f" (line {exc.line})" if exc.line else "")
        except (ValueError, RecursionError, MemoryError):
            return None, "carries code that cannot be read"
        if found != name:
            return None, "carries code that is not the Function it names (the link was changed)"
        return name, ""

    def format(self, value: Any) -> str:
        if isinstance(value, str) and value in _CODES:
            return f"{value} {pack(_CODES[value])}"
        return super().format(value)
