"""Draw a finished figure the one way every page does: the house theme, not Streamlit's."""

from __future__ import annotations

import streamlit as st

from autodiff_core.theme import present_layout, recolor

# The camera button saves the chart at the projector's size, whatever the window's.
PLOT_CONFIG = {"displaylogo": False, "responsive": True,
               "toImageButtonOptions": {"format": "png", "width": 1280, "height": 720, "scale": 1}}


def plot(fig, *, key: str) -> None:
    """``st.plotly_chart`` with ``theme=None``: Streamlit's theme would shrink fonts to 12 px grey. The
    colour-blind-safe palette always; the presenter scale in the presenter view."""
    from .presenter import presenting

    spec = recolor(fig.to_plotly_json())
    if presenting():
        spec["layout"] = present_layout(spec.get("layout", {}))
        for frame in spec.get("frames") or []:
            title = (frame.get("layout") or {}).get("title")
            if isinstance(title, dict):
                title["font"] = {**title.get("font", {}), "size": 22}
    st.plotly_chart(spec, theme=None, key=key, width="stretch", config={**PLOT_CONFIG,
                                                                        "toImageButtonOptions": {
                                                                            **PLOT_CONFIG["toImageButtonOptions"],
                                                                            "filename": key}})
