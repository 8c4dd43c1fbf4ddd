"""Draw a finished figure the one way every page does: the house theme, not Streamlit's."""

from __future__ import annotations

import streamlit as st

PLOT_CONFIG = {"displaylogo": False, "responsive": True}


def plot(fig, *, key: str) -> None:
    """``st.plotly_chart`` with ``theme=None``: Streamlit's theme would shrink fonts to 12 px grey."""
    st.plotly_chart(fig, theme=None, key=key, width="stretch", config=PLOT_CONFIG)
