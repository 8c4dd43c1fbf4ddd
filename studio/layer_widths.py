"""Lesson 5's network shape, TF Playground's way: how many hidden layers, and the neurons of each, with +/-
on every number.

One setting holds the shape, ``pg_hidden`` (a tuple of widths: the URL's "4,2", a preset's ``(4, 2)``); the
widgets only show and edit it. Before they are drawn they are set from it, so a preset or a link that changed
it shows at once, and each one's ``on_change`` writes it back.
"""

from __future__ import annotations

import streamlit as st

from .state import drawn_at

KEY = "pg_hidden"
DEPTH_KEY = "pg_layers"  # the "Hidden layers" widget (also what links made before per-layer widths held)


def width_key(layer: int) -> str:
    """The widget key of hidden layer ``layer``'s width (layers counted from 1)."""
    return f"pg_width_{layer}"


def layer_widths(max_depth: int, max_width: int) -> tuple[int, ...]:
    """Draw the depth and one width per hidden layer, in a row that wraps on a narrow screen; returns the shape."""
    ss = st.session_state
    hidden = ss[KEY]
    ss[DEPTH_KEY] = len(hidden)
    for layer, width in enumerate(hidden, 1):
        ss[width_key(layer)] = width
    # widths in px: Streamlit hides a number input's -/+ when it is under 120 px wide
    with st.container(horizontal=True, gap="small", vertical_alignment="bottom"):
        st.number_input("Hidden layers", 1, max_depth, key=DEPTH_KEY, on_change=_depth_changed, width=136,
                        **drawn_at("number_input", DEPTH_KEY, lo=1, hi=max_depth),
                        help=f"1 to {max_depth}. A new layer starts as wide as the one before it.")
        for layer in range(1, len(hidden) + 1):
            st.number_input(f"Layer {layer}", 1, max_width, key=width_key(layer), on_change=_width_changed,
                            **drawn_at("number_input", width_key(layer), lo=1, hi=max_width),
                            args=(layer,), width=128, help=f"Neurons in hidden layer {layer} (1 to {max_width}).")
    return ss[KEY]


def _depth_changed() -> None:
    ss = st.session_state
    depth, hidden = ss[DEPTH_KEY], ss[KEY]
    if depth is not None:
        ss[KEY] = hidden[:depth] + (hidden[-1],) * (depth - len(hidden))


def _width_changed(layer: int) -> None:
    ss = st.session_state
    width, hidden = ss[width_key(layer)], ss[KEY]
    if width is not None and layer <= len(hidden):
        ss[KEY] = (*hidden[:layer - 1], width, *hidden[layer:])
