"""One look for every chart: live, replay and static figures share these fonts, colours and margins.

Plain dicts only (no plotly import), so the live payloads and the ``go.Figure`` builders use the same
values. Streamlit's own chart theme would override the fonts, so the app draws every figure with
``theme=None`` (``studio.charts.plot``).
"""

from __future__ import annotations

FONT_FAMILY = '"Source Sans Pro", "Source Sans 3", Arial, sans-serif'
TEXT_COLOR = "#262730"
FONT_SIZE = 16  # ticks, legends and axis titles; readable on a laptop and a projector
TITLE_SIZE = 18
FONT = {"size": FONT_SIZE, "family": FONT_FAMILY, "color": TEXT_COLOR}
CLASS_COLORS = ("#d62728", "#1f77b4")  # class 0 red, class 1 blue, as in the tutorial


def base_layout(**overrides) -> dict:
    """The layout every figure starts from; ``overrides`` replace top-level keys."""
    layout = {
        "template": "plotly_white",
        "font": dict(FONT),
        "title": {"font": {"size": TITLE_SIZE}},
        "legend": {"font": {"size": FONT_SIZE}},
        "hoverlabel": {"font": {"size": FONT_SIZE}},
    }
    layout.update(overrides)
    return layout


def style(fig, **overrides):
    """Apply the house look to a ``go.Figure`` (in place) and return it."""
    fig.update_layout(**base_layout(**overrides))
    fig.update_annotations(font_size=TITLE_SIZE)  # subplot titles
    return fig
