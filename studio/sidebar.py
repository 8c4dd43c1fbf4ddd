"""The sidebar every page shares: device, dtype and seed, also settable from the URL."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from autodiff_core import DTYPES, available_devices
from autodiff_core.devices import DeviceUnavailableError, resolve_device

from .state import init_state


@dataclass(frozen=True)
class Settings:
    device: str
    dtype: str
    seed: int | None  # None: each lesson uses the tutorial's own seed


DEFAULTS = {"device": "cpu", "dtype": "float32", "seed_tutorial": True, "seed_value": 0}


def current_settings() -> Settings:
    """The settings as the sidebar holds them now."""
    ss = st.session_state
    return Settings(ss["device"], ss["dtype"], None if ss["seed_tutorial"] else int(ss["seed_value"]))


def _from_url(warnings: list[str]) -> dict:
    """Read ?device=&dtype=&seed= once per session; anything odd becomes a warning, never an error."""
    params, found = st.query_params, {}
    if "device" in params:
        try:
            found["device"] = str(resolve_device(params["device"]))
        except DeviceUnavailableError as exc:
            warnings.append(f"{exc} Using the CPU.")
    if "dtype" in params:
        if params["dtype"] in DTYPES:
            found["dtype"] = params["dtype"]
        else:
            warnings.append(f"dtype {params['dtype']!r} in the link is not one of {', '.join(DTYPES)}; "
                            "using float32.")
    if "seed" in params:
        text = params["seed"]
        if text.isdigit() and int(text) < 2**31:
            found["seed_value"], found["seed_tutorial"] = int(text), False
        else:
            warnings.append(f"seed {text[:40]!r} in the link is not a whole number from 0 to {2**31 - 1}; "
                            "using the tutorial's seeds.")
    return found


def sidebar() -> Settings:
    """Draw the shared settings and return them; falls back to the CPU with a message when needed."""
    devices = {d.id: d.label for d in available_devices()}
    warnings = st.session_state.setdefault("_url_warnings", [])
    if "_url_read" not in st.session_state:
        st.session_state["_url_read"] = True
        init_state(DEFAULTS | _from_url(warnings))
    init_state(DEFAULTS)
    if st.session_state["device"] not in devices:  # a GPU that went away since it was chosen
        warnings.append(f"Device {st.session_state['device']!r} is no longer available; using the CPU.")
        st.session_state["device"] = "cpu"
    with st.sidebar:
        st.subheader("Run settings")
        st.selectbox("Device", list(devices), format_func=devices.get, key="device",
                     help="Where tensors live and training runs.")
        if len(devices) == 1:
            st.caption("No GPU was found on this machine, so everything runs on the CPU.")
        st.radio("dtype", list(DTYPES), key="dtype", horizontal=True,
                 help="float64 is what gradcheck needs; float32 is what training usually uses.")
        st.toggle("Tutorial seeds (42 and 10)", key="seed_tutorial",
                  help="On: each lesson uses the tutorial's seed. Off: every lesson uses the seed below.")
        st.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key="seed_value",
                        disabled=st.session_state["seed_tutorial"])
        for text in warnings:
            st.warning(text)
    settings = current_settings()
    _to_url(settings)
    return settings


def _to_url(settings: Settings) -> None:
    """Keep the address bar shareable: it always holds the current settings."""
    wanted = {"device": settings.device, "dtype": settings.dtype}
    if settings.seed is not None:
        wanted["seed"] = str(settings.seed)
    for key in ("device", "dtype", "seed"):
        if key in wanted and st.query_params.get(key) != wanted[key]:
            st.query_params[key] = wanted[key]
        elif key not in wanted and key in st.query_params:
            del st.query_params[key]
