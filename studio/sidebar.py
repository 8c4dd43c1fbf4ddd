"""The sidebar every page shares: device, dtype and seed, also settable from the URL.

Everything in a URL is data from whoever wrote the link. It is validated here (the only place that reads
``st.query_params``), and any part of it shown back is cut short, stripped of control characters and put
in a code span, so a link can never make the page draw a link, an image or formatting of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from autodiff_core import DTYPES, available_devices
from autodiff_core.devices import DeviceUnavailableError, resolve_device

from .links import ECHO, Setting, echo, set_params
from .presenter import presenting
from .room.panel import class_box, show_code_if_asked
from .state import drawn_at, init_state


@dataclass(frozen=True)
class Settings:
    device: str
    dtype: str
    seed: int | None  # None: each lesson uses the tutorial's own seed


DEFAULTS = {"device": "cpu", "dtype": "float32", "seed_tutorial": True, "seed_value": 0}
SEED_MAX = 2**31 - 1
# Checked as a lesson's settings are (studio/links.py); the device, by whether it exists here.
DTYPE = Setting("dtype", str, "float32", choices=tuple(DTYPES))
SEED = Setting("seed", int, 0, 0, SEED_MAX, pattern=r"[0-9]{1,10}")  # plain digits: no sign, at most 10
_NOTES = "_url_notes"  # setting -> [message, the setting's widget values when it was shown]
_SLOT = "_url_notes_slot"  # in the presenter view, where this run drew them in the page
_WATCH = {"device": ("device",), "dtype": ("dtype",), "seed": ("seed_tutorial", "seed_value")}


def current_settings() -> Settings:
    """The settings as the sidebar holds them now."""
    ss = st.session_state
    return Settings(ss["device"], ss["dtype"], None if ss["seed_tutorial"] else int(ss["seed_value"]))


def _param(key: str) -> tuple[str, str]:
    """The value of ``?key=`` (the last one when repeated, as ``st.query_params`` reads it) and a note
    that says so when the link gives several different ones."""
    values = st.query_params.get_all(key)
    repeat = f" The link gives {key} {len(values)} times; the last one counts." if len(set(values)) > 1 else ""
    return values[-1], repeat


def _device(text: str) -> tuple[str | None, str]:
    ids = [d.id for d in available_devices()]
    if len(text) <= ECHO and text.isprintable():
        try:
            return str(resolve_device(text)), ""
        except DeviceUnavailableError:
            pass
    shown = ", ".join(f"`{i}`" for i in ids)
    return None, f"Device {echo(text)} in the link is not available here (available: {shown}). Using the CPU."


def _dtype(text: str) -> tuple[str | None, str]:
    value, _ = DTYPE.parse(text)
    return value, "" if value is not None else (
        f"dtype {echo(text)} in the link is not one of {', '.join(DTYPES)}; using float32.")


def _seed(text: str) -> tuple[int | None, str]:
    value, _ = SEED.parse(text)
    return value, "" if value is not None else (
        f"seed {echo(text)} in the link is not a whole number from 0 to {SEED_MAX:,}; using the tutorial's seeds.")


def _from_url() -> tuple[dict, dict[str, str]]:
    """Read ?device=&dtype=&seed= (once per session): the settings found, and a message for each setting
    the link got wrong. Nothing in a link raises."""
    found, notes = {}, {}
    for key, parse in (("device", _device), ("dtype", _dtype), ("seed", _seed)):
        if key not in st.query_params:
            continue
        text, repeat = _param(key)
        value, problem = parse(text)
        if value is None:
            notes[key] = problem + repeat
        elif key == "seed":
            found["seed_value"], found["seed_tutorial"] = value, False
        else:
            found[key] = value
        if value is not None and repeat:
            notes[key] = repeat.strip()
    return found, notes


def _url_notes(devices: dict) -> dict:
    """The messages about the link still worth showing: each stays until its setting is changed or the
    Dismiss button is pressed."""
    ss = st.session_state
    notes = ss.setdefault(_NOTES, {})
    if "_url_read" not in ss:
        ss["_url_read"] = True
        found, problems = _from_url()
        init_state(DEFAULTS | found)
        notes.update({key: [message, None] for key, message in problems.items()})
    init_state(DEFAULTS)
    if ss["device"] not in devices:  # a GPU that went away since it was chosen
        notes["device"] = [f"Device {echo(ss['device'])} is no longer available; using the CPU.", None]
        ss["device"] = "cpu"
    for setting, note in list(notes.items()):
        now = [ss[key] for key in _WATCH[setting]]
        if note[1] is None:
            note[1] = now
        elif note[1] != now:
            del notes[setting]
    return notes


def sidebar() -> Settings:
    """Draw the shared settings and return them; falls back to the CPU with a message when needed."""
    devices = {d.id: d.label for d in available_devices()}
    notes = _url_notes(devices)
    with st.sidebar:
        st.subheader("Run settings")
        st.selectbox("Device", list(devices), format_func=devices.get, key="device",
                     **drawn_at("selectbox", "device", options=list(devices)),
                     help="Where tensors live and training runs.")
        if len(devices) == 1:
            st.caption("No GPU was found on this machine, so everything runs on the CPU.")
        st.radio("dtype", list(DTYPES), key="dtype", horizontal=True,
                 **drawn_at("radio", "dtype", options=list(DTYPES)),
                 help="float64 is what gradcheck needs; float32 is what training usually uses.")
        st.toggle("Tutorial seeds (42 and 10)", key="seed_tutorial", **drawn_at("toggle", "seed_tutorial"),
                  help="On: each lesson uses the tutorial's seed. Off: every lesson uses the seed below.")
        st.number_input("Seed", min_value=0, max_value=SEED_MAX, step=1, key="seed_value",
                        **drawn_at("number_input", "seed_value", lo=0, hi=SEED_MAX),
                        disabled=st.session_state["seed_tutorial"])
        if not presenting():
            _draw_notes(notes)
        class_box()
    show_code_if_asked()
    st.session_state.pop(_SLOT, None)  # a slot of an earlier run is no place to draw in
    if presenting() and notes:  # the sidebar starts collapsed: the page shows them (a lesson, under its title)
        st.session_state[_SLOT] = st.empty()
        with st.session_state[_SLOT].container():
            _draw_notes(notes)
    settings = current_settings()
    _to_url(settings)
    return settings


def _draw_notes(notes: dict) -> None:
    for message, _ in notes.values():
        st.warning(message)
    if notes:
        st.button("Dismiss", key="url_notes_dismiss", type="tertiary", on_click=notes.clear)


def take_notes() -> tuple[list[str], Callable[[], None]]:
    """In the presenter view, the link's notes about device, dtype and seed, for a lesson to show beside its
    own under its title (they leave the top of the page), and how to dismiss them; elsewhere none."""
    slot = st.session_state.pop(_SLOT, None)
    if slot is None:
        return [], lambda: None
    slot.empty()
    notes = st.session_state.get(_NOTES, {})
    return [message for message, _ in notes.values()], notes.clear


def _to_url(settings: Settings) -> None:
    """Keep the address bar shareable: it always holds the current settings, once each."""
    wanted = {"device": settings.device, "dtype": settings.dtype}
    if settings.seed is not None:
        wanted["seed"] = str(settings.seed)
    set_params(wanted, drop=["seed"])  # kept when wanted: set_params drops only what it does not set
