"""Draw a finished figure the one way every page does: the house theme, not Streamlit's."""

from __future__ import annotations

import copy

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
    plot_spec(recolor(fig.to_plotly_json()), key=key, fit=fit, on_select=on_select, selection_mode=selection_mode)


def plot_spec(spec: dict, *, key: str, fit: bool = False, on_select="ignore",
              selection_mode=("points", "box", "lasso")) -> None:
    """``plot`` for a figure already made into its recoloured spec (``panel_specs``), which may be shared: it is
    never changed here (the presenter view draws a copy)."""
    if presenting():
        spec = present_spec(copy.deepcopy(spec), fit=fit)
    st.plotly_chart(_Checked(spec), theme=None, key=key, width="stretch", on_select=on_select,
                    selection_mode=selection_mode, config={**PLOT_CONFIG,
                                                                        "toImageButtonOptions": {
                                                                            **PLOT_CONFIG["toImageButtonOptions"],
                                                                            "filename": key}})


def plot_panels(fig, *, key: str, height: int = 340) -> None:
    """A one-row subplot figure as a row of panels, one chart each (``figures.xray.panels``), in columns: side by
    side on a laptop, one under another on a phone, where one figure crammed the panels' titles together.
    ``fig`` may also be the panels' specs already made (``panel_specs``), as a page keeps them for runs that
    do not change."""
    specs = panel_specs(fig, height) if isinstance(fig, go.Figure) else fig
    for i, (column, spec) in enumerate(zip(st.columns(len(specs)), specs, strict=True)):
        with column:
            plot_spec(spec, key=f"{key}_{i}")


def panel_specs(fig, height: int = 340) -> tuple[dict, ...]:
    """The panels of a one-row subplot figure (``figures.xray.panels``), each as its recoloured spec: what
    ``plot_panels`` draws. Building and styling the panels is most of what a page of them costs."""
    return tuple(recolor(panel.to_plotly_json()) for panel in panels(fig, height))


class _Checked(go.Figure):
    """A spec made by a ``go.Figure`` (so already checked by plotly's validators), for ``st.plotly_chart``
    as it is. Given a dict, Streamlit builds and checks a whole figure from it again: 0.15-0.25 s for a
    400-frame replay, which thirty students whose runs end together each paid."""

    def __init__(self, spec: dict) -> None:  # no figure is built: plotly's own __init__ is not called
        self._spec = spec

    def to_dict(self) -> dict:
        return self._spec
