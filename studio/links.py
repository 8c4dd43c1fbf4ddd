"""A link is the lesson: every setting's widget key is also its query parameter and its preset field.

``bind(lesson)`` runs once per page run, after the page's ``init_state`` and before its widgets:
- the first time a lesson is shown in a session, the URL sets its widgets (``?preset=`` first, then each
  setting), and every parameter that cannot be used falls back to the current value with a warning that
  names it;
- on every run, the address bar is rewritten to hold the lesson's current settings, so copying it at any
  moment gives a link that reproduces the lesson.

Everything in a URL is data from whoever wrote the link: it is parsed with ASCII-only patterns, never
passed to ``int()``/``float()`` unchecked, cut to ``ECHO`` characters when shown back, and shown only inside
a code span (no link, image or emphasis can come through).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

from .state import drawn_at, init_state, put

ECHO = 40  # characters of a URL value that a message shows back
MAX_TEXT = 200  # longest free-text value a link may set (longer ones fall back)
_INT = re.compile(r"[+-]?[0-9]{1,12}")  # ASCII digits only: '²' and '٣' are not numbers here
_FLOAT = re.compile(r"[+-]?(?:[0-9]{1,20}(?:\.[0-9]{0,20})?|\.[0-9]{1,20})(?:[eE][+-]?[0-9]{1,3})?")
_TRUE, _FALSE = ("1", "true", "on", "yes"), ("0", "false", "off", "no")
PRESET_PARAM = "preset"


@dataclass(frozen=True)
class Setting:
    """One setting of a lesson: ``key`` is the widget key, the query parameter and the preset field.

    ``kind`` is int, float, bool, str, or tuple: 1 to ``items`` whole numbers, each within ``lo``..``hi``,
    written "4,2" (TF Playground's ``networkShape``). ``choices`` limits the values (strings, or numbers for a
    select_slider); ``lo``/``hi`` bound numbers; ``pattern`` limits free text."""

    key: str
    kind: type
    default: Any
    lo: float | None = None
    hi: float | None = None
    choices: tuple | None = None
    label: str = ""  # what its widget shows, and what a warning about a link names ("Learning rate", not lr_lr)
    pattern: str | None = None  # free text or a number: the whole value must match this (ASCII) regular expression
    items: int = 0  # a tuple: at most this many numbers
    # How its widget is drawn (``draw``): a number_input, slider, select_slider, selectbox, radio, toggle, checkbox
    # or text_input ("" picks by kind: a toggle, a selectbox or select_slider of the choices, a text box, a number)
    widget: str = ""
    step: float | None = None
    fmt: str | None = None  # a number_input's format, e.g. "%.2e"
    help: str = ""
    preset: bool = True  # False: picking a preset leaves it as it is (the points a class drew are not a setting's)

    def options(self) -> list:
        """What a choice widget offers now (a setting whose choices change per session says so itself)."""
        return list(self.choices or ())

    def draw(self, where: Any = st, **extra: Any) -> Any:
        """Its widget, in ``where`` (``st``, a column or the sidebar), from this declaration alone: label,
        bounds, step, format, help and key. ``extra`` passes on (``on_change``, ``disabled``, ``horizontal``...)."""
        kind = self.widget or ("toggle" if self.kind is bool else "text_input" if self.kind is str and not self.choices
                               else "selectbox" if self.kind is str else "select_slider" if self.choices
                               else "number_input")
        kw = {"key": self.key, "help": self.help or None, **extra}
        if kind in ("number_input", "slider"):
            step = {} if self.step is None else {"step": self.step}
            fmt = {} if self.fmt is None else {"format": self.fmt}
            return getattr(where, kind)(self.label, self.lo, self.hi,
                                        **{**step, **fmt, **drawn_at(kind, self.key, lo=self.lo, hi=self.hi), **kw})
        if kind in ("selectbox", "select_slider", "radio"):
            options = self.options()
            return getattr(where, kind)(self.label, options, **{**drawn_at(kind, self.key, options=options), **kw})
        return getattr(where, kind)(self.label, **{**drawn_at(kind, self.key), **kw})

    def parse(self, text: str) -> tuple[Any, str]:
        """``(value, "")`` or ``(None, why)``: why the text is not a value of this setting (``(None, "")``: the
        setting keeps its value, and the page says why itself)."""
        if len(text) > (MAX_TEXT if self.kind is str and self.choices is None else 64):
            return None, "is too long"
        if self.kind is bool:
            low = text.lower()
            return (True, "") if low in _TRUE else (False, "") if low in _FALSE else (None, "is not 1 or 0")
        if self.kind is str:
            if self.choices is not None and text not in self.choices:
                return None, "is not one of the choices"
            if not text.isprintable():
                return None, "holds control characters"
            if self.pattern is not None and not re.fullmatch(self.pattern, text):
                return None, "holds characters other than numbers and commas"
            return text, ""
        if self.kind is tuple:
            return self._parse_tuple(text)
        pattern = _INT if self.kind is int else _FLOAT
        if not pattern.fullmatch(text) or (self.pattern is not None and not re.fullmatch(self.pattern, text)):
            return None, f"is not {'a whole number' if self.kind is int else 'a number'}"
        value = self.kind(text)
        if not math.isfinite(value):
            return None, "is not a finite number"
        if self.choices is not None and value not in self.choices:
            return None, "is not one of the choices"
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            return None, f"is outside {self.lo:g} to {self.hi:g}"
        return value, ""

    def _parse_tuple(self, text: str) -> tuple[Any, str]:
        parts = text.split(",")
        if not 1 <= len(parts) <= self.items or not all(_INT.fullmatch(p.strip(" ")) for p in parts):
            return None, f"is not 1 to {self.items} whole numbers separated by commas"
        value = tuple(int(p) for p in parts)
        if any(not self.lo <= v <= self.hi for v in value):
            return None, f"holds a number outside {self.lo:g} to {self.hi:g}"
        return value, ""

    def format(self, value: Any) -> str:
        """The value as the URL holds it; ``parse(format(v)) == v`` for every valid value."""
        if self.kind is bool:
            return "1" if value else "0"
        if self.kind is tuple:
            return ",".join(str(v) for v in value)
        if self.kind is float:
            return repr(float(value))
        return str(value)


@dataclass(frozen=True)
class Legacy:
    """Parameters of older links, checked as they were then and folded into the setting that replaced them,
    so an old link still opens the lesson it was made for. ``fold(given, current)``: the old parameters'
    values (those the link gives) and every setting's value so far -> the new settings' values."""

    settings: tuple[Setting, ...]
    fold: Callable[[dict, dict], dict]


def echo(value: str) -> str:
    """Markdown that shows ``value`` as plain text: printable characters only, at most ``ECHO`` of them,
    in a code span (where markdown draws no link, image or emphasis)."""
    text = "".join(c if c.isprintable() else "\N{REPLACEMENT CHARACTER}" for c in value[:ECHO])
    text = text.replace("`", "\N{MODIFIER LETTER PRIME}") + ("…" if len(value) > ECHO else "")
    return f"`{text}`" if text.strip() else "(blank)"


_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation mark: each can be escaped in markdown


def plain(text: str) -> str:
    """``text`` as markdown that shows it as it is: each punctuation mark escaped, so no emphasis, link, image,
    code, directive or HTML forms: text from outside is data, never markup); one line."""
    return _PUNCTUATION.sub(r"\\\1", " ".join(str(text).split()))


def read_params(settings: list[Setting], params: dict[str, list[str]],
                presets: dict[str, dict] | None = None, legacy: tuple[Legacy, ...] = ()) -> tuple[dict, list[str]]:
    """What a URL's parameters (each key: all its values) set, and a warning for each one that falls back.

    Pure: the page's machinery and the tests both call it. ``?preset=`` is applied first (by its name or
    its slug), then the parameters of older links (``legacy``), then each setting given explicitly."""
    found, notes = {}, []
    by_key = {s.key: s for s in settings}
    values = params.get(PRESET_PARAM)
    if values and presets is not None:
        name = preset_by_slug(presets, values[-1])
        if name is None:
            notes.append(f"preset {echo(values[-1])} in the link is not a preset of this lesson; it was ignored.")
        else:
            found.update(preset_values(settings, presets[name]))
    for old in legacy:
        given = {s.key: v for s in old.settings if (v := _param(s, params.get(s.key), notes)) is not None}
        if given:
            found.update(old.fold(given, {**{s.key: s.default for s in settings}, **found}))
    for key, values in params.items():
        if key in by_key and (value := _param(by_key[key], values, notes)) is not None:
            found[key] = value
    return found, notes


def _param(setting: Setting, values: list[str] | None, notes: list[str]) -> Any:
    """The value of one parameter (its last), or None, with a note when it falls back or repeats."""
    if not values:
        return None
    key, name = setting.key, setting.label or setting.key  # the label a teacher sees, then the parameter to mend
    value, why = setting.parse(values[-1])
    repeat = f" (the link gives {key} {len(values)} times; the last one counts)" if len(set(values)) > 1 else ""
    if value is None and why:
        notes.append(f"{'' if name == key else name + ': '}{key} {echo(values[-1])} in the link {why}; "
                     f"it was ignored{repeat}.")
    elif repeat:
        notes.append(f"The link gives {key if name == key else f'{name} ({key})'} {len(values)} times; "
                     "the last one counts.")
    return value


def slug(name: str) -> str:
    """'Forget zero_grad' -> 'forget-zero_grad': a preset name as a URL value."""
    return re.sub(r"[^a-z0-9_]+", "-", name.lower()).strip("-")


def preset_by_slug(presets: dict[str, dict], text: str) -> str | None:
    return next((name for name in presets if text in (name, slug(name))), None)


def preset_values(settings: list[Setting], preset: dict) -> dict:
    """A preset is the defaults with a few settings changed: every setting gets a value."""
    return {s.key: preset.get(s.key, s.default) for s in settings}


def matching_preset(settings: list[Setting], presets: dict[str, dict], current: dict) -> str | None:
    """The preset whose values equal the current settings, if any. The speed slider only paces how a run is
    shown, never what it computes, so moving it keeps the preset's name."""
    keys = [s.key for s in settings if not s.key.endswith("_speed") and s.preset]

    def same(preset: dict) -> bool:
        values = preset_values(settings, preset)
        return all(values[k] == current.get(k) for k in keys)

    return next((name for name, p in presets.items() if same(p)), None)


def to_params(settings: list[Setting], current: dict) -> dict[str, str]:
    return {s.key: s.format(current[s.key]) for s in settings if s.key in current}


# ---- Streamlit side ----

def _notes_key(lesson: str) -> str:
    return f"_links_notes_{lesson}"


def bind(lesson: str, settings: list[Setting], presets: dict[str, dict] | None = None,
         legacy: tuple[Legacy, ...] = (), shared: tuple[list[str], Callable[[], None]] = ([], lambda: None),
         foreign: Collection[str] = (), opens: Mapping[str, Any] | None = None) -> None:
    """Read the URL once per session for this lesson, then keep the address bar in step with the widgets.
    Draws a warning for each parameter of the link that fell back, after ``shared``'s (notes the page shows for
    the sidebar, and how to dismiss them). ``foreign``: parameters that are not this lesson's (other lessons'
    settings): the address bar drops them. ``opens``: what a preset in the link also sets (``Lesson.preset_opens``)."""
    ss = st.session_state
    init_state({s.key: s.default for s in settings})
    if f"_links_read_{lesson}" not in ss:
        ss[f"_links_read_{lesson}"] = True
        params = {k: st.query_params.get_all(k) for k in st.query_params}
        found, notes = read_params(settings, params, presets, legacy)
        for key, value in found.items():
            ss[key] = value
        named = params.get(PRESET_PARAM)
        if opens and presets and named and preset_by_slug(presets, named[-1]) is not None:
            ss.update(opens)
        ss[_notes_key(lesson)] = notes
    notes = ss.get(_notes_key(lesson), [])
    shared, dismiss_shared = shared
    for message in shared + notes:
        st.warning(message)
    if shared or notes:
        st.button("Dismiss", key=f"{lesson}_links_dismiss", type="tertiary",
                  on_click=lambda: (notes.clear(), dismiss_shared()))
    write_url(settings, legacy, foreign)


def take(lesson: str, found: dict, notes: list[str] | None = None) -> None:
    """Settings read by ``read_params`` elsewhere (a run sent to the class board, the teacher a student follows)
    become the lesson's, as a link's do on first sight: its widgets start from them, and its page shows ``notes``
    (what fell back; None leaves the page's notes as they are)."""
    for key, value in found.items():
        put(key, value)
    st.session_state[f"_links_read_{lesson}"] = True  # the address bar then follows them, not the other way
    if notes is not None:
        st.session_state[_notes_key(lesson)] = list(notes)


def current_values(settings: list[Setting]) -> dict:
    return {s.key: st.session_state[s.key] for s in settings if s.key in st.session_state}


def write_url(settings: list[Setting], legacy: tuple[Legacy, ...] = (), foreign: Collection[str] = ()) -> None:
    """The address bar holds every setting of the lesson, once each (and no parameter of an older link: the
    settings that replaced them are there; none of ``foreign``, another lesson's; no preset: the settings it chose
    are there)."""
    set_params(to_params(settings, current_values(settings)),
               drop=[*(s.key for old in legacy for s in old.settings), *foreign, PRESET_PARAM])


def set_params(wanted: dict[str, str], drop: Collection[str] = ()) -> None:
    """The address bar's parameters ``wanted`` set, once each, and those in ``drop`` gone; the others kept. One
    change of the address for all of them: each parameter written on its own was a step of the browser's history
    (a lesson's first run made eleven, and Back had to be pressed as often to leave the lesson)."""
    now = {key: st.query_params.get_all(key) for key in st.query_params}
    new = {key: values for key, values in now.items() if key not in wanted and key not in drop}
    new.update({key: [text] for key, text in wanted.items()})
    if new != now:
        st.query_params.from_dict(new)


def preset_picker(lesson: str, settings: list[Setting], presets: dict[str, dict], *, fold: str | None = None,
                  opens: Mapping[str, Any] | None = None) -> None:
    """The Preset box; ``fold``: the key of the expander that holds it, closed once a preset is chosen; ``opens``:
    what a chosen preset also sets (``Lesson.preset_opens``)."""
    key = f"{lesson}_preset"
    st.session_state[key] = matching_preset(settings, presets, current_values(settings))
    st.selectbox("Preset", list(presets), key=key, placeholder="Your own settings",
                 **{"index": None, **drawn_at("selectbox", key, options=list(presets))},
                 on_change=_apply_preset, args=(key, settings, presets, fold, opens),
                 help="Named settings a teacher can pick and share: the address bar then holds them all.")


def _apply_preset(key: str, settings: list[Setting], presets: dict[str, dict], fold: str | None,
                  opens: Mapping[str, Any] | None = None) -> None:
    name = st.session_state[key]
    if name is not None:
        kept = {s.key for s in settings if not s.preset}
        for k, value in preset_values(settings, presets[name]).items():
            if k not in kept:
                st.session_state[k] = value
        st.session_state.update(opens or {})
        if fold is not None:
            st.session_state[fold] = False
