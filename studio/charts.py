"""Draw a finished figure the one way every page does: the house theme, not Streamlit's."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from autodiff_core.figures.theme import recolor
from autodiff_core.figures.xray import panels

from .presenter import present_spec, presenting

# The camera button saves the chart at the projector's size, whatever the window's. The toolbar keeps what a
# class uses (PNG, zoom, pan, reset, full screen): five buttons, 140 px, not nine across a phone's chart.
PLOT_CONFIG = {"displaylogo": False, "responsive": True,
               "modeBarButtonsToRemove": ["zoomIn2d", "zoomOut2d", "autoScale2d", "select2d", "lasso2d",
                                          "toggleSpikelines", "hoverClosestCartesian", "hoverCompareCartesian"],
               "toImageButtonOptions": {"format": "png", "width": 1280, "height": 720, "scale": 1}}


def plot(fig, *, key: str, fit: bool = False, on_select="ignore",
         selection_mode=("points", "box", "lasso")) -> None:
    """``st.plotly_chart`` with ``theme=None``: Streamlit's theme would shrink fonts to 12 px grey. The
    colour-blind-safe palette always; the presenter scale in the presenter view, where ``fit`` also fits a
    replay that is the lesson's main chart under its controls, Play and slider included. ``on_select`` and
    ``selection_mode`` are ``st.plotly_chart``'s: a callback makes a click on a point an event."""
    spec = recolor(fig.to_plotly_json())
    if presenting():
        spec = present_spec(spec, fit=fit)
    st.plotly_chart(_Checked(spec), theme=None, key=key, width="stretch", on_select=on_select,
                    selection_mode=selection_mode, config={**PLOT_CONFIG,
                                                                        "toImageButtonOptions": {
                                                                            **PLOT_CONFIG["toImageButtonOptions"],
                                                                            "filename": key}})


def plot_panels(fig, *, key: str, height: int = 340) -> None:
    """A one-row subplot figure as a row of panels, one chart each (``figures.xray.panels``), in columns: side by
    side on a laptop, one under another on a phone, where one figure crammed the panels' titles together."""
    for i, (column, panel) in enumerate(zip(st.columns(len(fig.layout.annotations)), panels(fig, height), strict=True)):
        with column:
            plot(panel, key=f"{key}_{i}")


class _Checked(go.Figure):
    """A spec made by a ``go.Figure`` (so already checked by plotly's validators), for ``st.plotly_chart``
    as it is. Given a dict, Streamlit builds and checks a whole figure from it again: 0.15-0.25 s for a
    400-frame replay, which thirty students whose runs end together each paid."""

    def __init__(self, spec: dict) -> None:  # no figure is built: plotly's own __init__ is not called
        self._spec = spec

    def to_dict(self) -> dict:
        return self._spec
