"""Where a replay's parts go: its caption and legend, the picture (the points and the decision boundary or surface),
Play/Pause and the slider right under the picture, and the loss and accuracy curves after them.

Plotly cannot change a layout with the width, and the server never learns the width, so the parts are placed in
pixels that suit a 390 px phone and a 1280x720 laptop alike: the picture is as tall as a phone's width lets it
be (there it fills its box, with no empty band), and on a laptop the caption, the picture, Play and the slider
fit on one screen. Press Play and the boundary moves where you are looking.
"""

from __future__ import annotations

PHONE_WIDTH = 358  # a chart's width on a 390 px phone (Streamlit pads the page by 16 px on each side)
MAX_PICTURE = 290  # px: with the caption, Play and the slider, the picture fits a 720 px laptop screen
MIN_PICTURE = 180
TITLE_PAD = 50  # the caption's first line starts under Plotly's toolbar, which a phone shows above it
CAPTION_LINE = 21  # px a line of the caption takes
LEGEND_ROW = 28  # px a row of the legend takes (its groups 2 px apart: ``ROW_GAP``)
ROW_GAP = 2
AXIS = 58  # the picture's x-axis under it: tick labels and title
BUTTONS = 42  # the Play/Pause row and the gap under it
SLIDER = 84  # the slider: its current value, the rail, and the ticks' labels
GAP = 40  # between the slider and the curves
CURVES = 170  # the loss and accuracy plot
BOTTOM = 60  # the curves' x-axis under them
SIDE = 70  # px beside the curves for an axis's tick labels and title (the margins may give the picture less)


def picture_size(x_range: list[float], y_range: list[float], margin: dict) -> int:
    """The picture's height in px: as tall as a phone's plot width gives equal units on both axes, at most
    MAX_PICTURE (then the picture is narrower than a phone's plot, and nowhere a band above or below it)."""
    width = PHONE_WIDTH - margin["l"] - margin["r"]
    ratio = (y_range[1] - y_range[0]) / max(x_range[1] - x_range[0], 1e-12)
    return int(max(MIN_PICTURE, min(MAX_PICTURE, width * ratio)))


def picture_first(layout: dict, *, picture: int, caption_lines: int, legend_rows: int,
                  curves_legend_rows: int = 0) -> dict:
    """Lay out a replay (in place): the title (the caption), then the legend, then the picture (``xaxis``/``yaxis``,
    ``picture`` px tall), Play/Pause (``updatemenus``) and the slider right under it, and the curves (``xaxis2``/
    ``yaxis2``/``yaxis3``) after, with their own legend (``legend2``) over them where the layout has one.
    ``legend_rows``, ``curves_legend_rows``: how many rows each legend takes on a phone. Returns ``layout``."""
    top = TITLE_PAD + caption_lines * CAPTION_LINE + legend_rows * LEGEND_ROW
    gap = GAP + curves_legend_rows * LEGEND_ROW
    height = top + picture + AXIS + BUTTONS + SLIDER + gap + CURVES + BOTTOM
    plot = height - top - BOTTOM  # the plot area, in which Plotly places domains, buttons and sliders

    def y(px: float) -> float:  # px below the plot area's top, as Plotly's paper fraction
        return round(1 - px / plot, 4)

    margin = layout["margin"]
    layout.update(height=height, margin={**margin, "t": top, "b": BOTTOM})
    layout["yaxis"].update(domain=[y(picture), 1], constraintoward="top")
    layout["yaxis2"]["domain"] = [0, round(CURVES / plot, 4)]
    inner = PHONE_WIDTH - margin["l"] - margin["r"]  # the curves get room for their axes on a phone too
    left, right = max(0, SIDE - margin["l"]) / inner, max(0, SIDE - margin["r"]) / inner
    layout["xaxis2"]["domain"] = [round(left, 4), round(1 - right, 4)]
    for name in [k for k in layout if k.startswith(("xaxis", "yaxis"))]:  # the margins and domains above fit the
        layout[name]["automargin"] = False  # axes: automargin would move them, and the picture off its place
    layout["title"].update(y=1, yref="container", yanchor="top", pad={"t": TITLE_PAD})
    layout["legend"].update(y=1, yanchor="bottom", tracegroupgap=ROW_GAP)
    if "legend2" in layout:
        layout["legend2"].update(y=round(CURVES / plot, 4) + 0.005, yanchor="bottom", tracegroupgap=ROW_GAP)
    for menu in layout.get("updatemenus") or []:
        menu.update(y=y(picture + AXIS), yanchor="top")
    for slider in layout.get("sliders") or []:
        slider.update(y=y(picture + AXIS + BUTTONS), yanchor="top")
    return layout
