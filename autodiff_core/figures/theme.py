"""One look for every chart: live, replay and static figures share these fonts, colours and margins.

Plain dicts only (no plotly import), so the live payloads and the ``go.Figure`` builders use the same
values. Streamlit's own chart theme would override the fonts, so the app draws every figure with
``theme=None`` (``studio.charts.plot``).
"""

from __future__ import annotations

FONT_FAMILY = '"Source Sans", "Source Sans Pro", "Source Sans 3", Arial, sans-serif'  # as Streamlit serves it
TEXT_COLOR = "#262730"
FONT_SIZE = 16  # ticks, legends and axis titles; readable on a laptop and a projector
TITLE_SIZE = 18
FONT = {"size": FONT_SIZE, "family": FONT_FAMILY, "color": TEXT_COLOR}
# Okabe & Ito's colour-blind-safe palette: every chart picks its colours from it.
OKABE_ITO = {"orange": "#E69F00", "sky blue": "#56B4E9", "bluish green": "#009E73", "yellow": "#F0E442",
             "blue": "#0072B2", "vermillion": "#D55E00", "reddish purple": "#CC79A7", "grey": "#7f7f7f"}
CLASS_COLORS = (OKABE_ITO["vermillion"], OKABE_ITO["blue"])  # class 0 red, class 1 blue, in every lesson
# Lesson 5's 3 to 6 classes: the same two first, then four more of the palette (its yellow is too pale on white)
MANY_CLASS_COLORS = (*CLASS_COLORS, OKABE_ITO["bluish green"], OKABE_ITO["reddish purple"], OKABE_ITO["sky blue"],
                     OKABE_ITO["orange"])
# The D3 colours the figure builders were written with, mapped to the palette by meaning (red stays red,
# green stays green). ``recolor`` applies it to a finished figure or payload.
RECOLOR = {"#d62728": OKABE_ITO["vermillion"], "#1f77b4": OKABE_ITO["blue"], "#2ca02c": OKABE_ITO["bluish green"],
           "#ff7f0e": OKABE_ITO["orange"], "#9467bd": OKABE_ITO["reddish purple"], "#7f7f7f": "#666666"}
RECOLOR_RGB = {(214, 39, 40): (213, 94, 0), (31, 119, 180): (0, 114, 178)}

# Presenter view: read from the back row of a classroom at 1280x720.
PRESENT_FONT = 18  # tick labels, legends, hover
PRESENT_TITLE = 22  # chart, subplot and axis titles
PRESENT_HEIGHT = 720  # a replay's whole figure, title, plot, Play and slider, at the projector's height


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


def without_template(layout: dict) -> dict:
    """``layout`` (a ``base_layout``) for a ``go.Figure`` that ``style`` then finishes: without the template's
    name, which would cost a deep copy of the template that ``style`` replaces at once; in place."""
    layout.pop("template", None)
    return layout


def style(fig, **overrides):
    """Apply the house look to a ``go.Figure`` (in place) and return it."""
    layout = base_layout(**overrides)
    use_template(fig, layout.pop("template"))
    fig.update_layout(**layout)
    fig.update_annotations(font_size=TITLE_SIZE)  # subplot titles
    return fig


def use_template(fig, name: str):
    """Give ``fig`` Plotly's registered template ``name`` (in place) as plotly gives every new figure its
    default template: the registered object, not checked again. Named in ``update_layout``, the whole template
    is deep-copied and checked: 6-8 ms a figure, on pages that draw a dozen. The figure's JSON is the same."""
    import plotly.io as pio

    layout = fig.layout
    layout._validate = False  # plotly's own _initialize_layout_template does the same
    try:
        layout.template = pio.templates[name]
    finally:
        layout._validate = fig._validate
    return fig


def recolor(obj):
    """``obj`` (a figure dict or a payload, nested dicts and lists) with the old D3 colours mapped to the
    palette, in place; returns it."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, str) and v.lower() in RECOLOR:
                obj[k] = RECOLOR[v.lower()]
            elif isinstance(v, (dict, list)):
                recolor(v)
    elif isinstance(obj, list):
        if len(obj) > 3 and isinstance(obj[0], (int, float)):
            return obj  # a curve's numbers (a colour is a name, or a triple of them): nothing to look at
        for i, v in enumerate(obj):
            if isinstance(v, str) and v.lower() in RECOLOR:
                obj[i] = RECOLOR[v.lower()]
            elif isinstance(v, list) and len(v) == 3 and tuple(v) in RECOLOR_RGB:
                obj[i] = list(RECOLOR_RGB[tuple(v)])
            elif isinstance(v, (dict, list)):
                recolor(v)
    return obj


def present_layout(layout: dict) -> dict:
    """A layout dict scaled for the presenter view, in place: ticks and legends at ``PRESENT_FONT``, every
    title at ``PRESENT_TITLE``, and margins that make room for them."""
    layout["font"] = {**layout.get("font", FONT), "size": PRESENT_FONT}
    for legend in [k for k in layout if k.startswith("legend")] or ["legend"]:
        layout[legend] = {**layout.get(legend, {}), "font": {"size": PRESENT_FONT}}
    layout["hoverlabel"] = {"font": {"size": PRESENT_FONT}}
    title = layout.get("title")
    title = {"text": title} if isinstance(title, str) else dict(title or {})
    layout["title"] = {**title, "font": {**title.get("font", {}), "size": PRESENT_TITLE}}
    for key in list(layout):
        if key.startswith(("xaxis", "yaxis")):
            axis = layout[key] = dict(layout[key] or {})
            axis["tickfont"] = {**axis.get("tickfont", {}), "size": PRESENT_FONT}
            if axis.get("type") == "log":  # Plotly draws the 2..9 labels between decades at 3/4 size
                axis["dtick"] = 1
            t = axis.get("title")
            t = {"text": t} if isinstance(t, str) else dict(t or {})
            axis["title"] = {**t, "font": {**t.get("font", {}), "size": PRESENT_TITLE}}
    for item in layout.get("annotations") or []:  # subplot titles
        item["font"] = {**item.get("font", {}), "size": PRESENT_TITLE}
    for menu in list(layout.get("sliders") or []) + list(layout.get("updatemenus") or []):
        menu["font"] = {**menu.get("font", {}), "size": PRESENT_FONT}
        if "currentvalue" in menu:
            cv = menu["currentvalue"]
            cv["font"] = {**cv.get("font", {}), "size": PRESENT_FONT}
    margin = layout.get("margin") or {}
    layout["margin"] = {**margin, "l": max(margin.get("l", 80), 90), "b": max(margin.get("b", 80), 70)}
    landscape(layout)
    return layout


def landscape(layout: dict) -> dict:
    """Two subplots stacked for a phone (the points above, the curves below) put side by side, as a
    1280x720 projector wants them; in place. Layouts already side by side are left as they are."""
    top, bottom = layout.get("yaxis") or {}, layout.get("yaxis2") or {}
    if not (top.get("domain") and bottom.get("domain") and top["domain"][0] >= bottom["domain"][1]):
        return layout
    top["domain"], bottom["domain"] = [0, 1], [0, 1]
    top.setdefault("anchor", "x")  # an unanchored y-axis hangs on x: both would sit at the left plot's edge
    bottom.setdefault("anchor", "x2")
    layout["xaxis"] = {**(layout.get("xaxis") or {}), "domain": [0, 0.44]}
    layout["xaxis2"] = {**(layout.get("xaxis2") or {}), "domain": [0.56, 0.92]}  # room for the right axis
    top_x = layout["xaxis"]
    if top_x.get("showticklabels") is False:  # hidden when the plot below shared its steps: now each has its own
        top_x["showticklabels"] = True
        if not (top_x.get("title") or {}).get("text"):
            top_x["title"] = dict(layout["xaxis2"].get("title") or {})
    if layout.get("height", 0) > PRESENT_HEIGHT:  # a replay: title above, Play and slider below both plots
        margin = layout["margin"]
        layout["height"] = PRESENT_HEIGHT
        layout["margin"] = {**margin, "t": min(margin.get("t", 100), 150), "b": 200}
        for menu, y in [(m, -0.29) for m in layout.get("updatemenus") or []] + [(s, -0.36) for s in
                                                                                 layout.get("sliders") or []]:
            menu.update(y=y, yanchor="top")  # below the x-axis titles (a phone's replay has them between its plots)
        if "legend2" in layout:  # the curves' own legend, over the curves
            layout["legend2"] = {**layout["legend2"], "x": layout["xaxis2"]["domain"][0], "xanchor": "left",
                                 "y": 1.02, "yanchor": "bottom"}
    else:  # a live chart: the legend alone sits above the plot
        layout["margin"] = {**layout["margin"], "t": 60}
    legend = layout.get("legend") or {}  # one row across the projector, not columns sized for a phone
    layout["legend"] = {**legend, "orientation": "h", "entrywidthmode": "pixels", "entrywidth": 0,
                        "y": max(legend.get("y", 1.02), 1.02), "yanchor": "bottom"}
    return layout


def present_figure(fig):
    """A ``go.Figure`` scaled for the presenter view (a new figure); its frames keep their data."""
    import plotly.graph_objects as go

    spec = fig.to_plotly_json()
    spec["layout"] = present_layout(spec.get("layout", {}))
    for frame in spec.get("frames") or []:
        if isinstance(frame.get("layout"), dict) and "title" in frame["layout"]:
            t = frame["layout"]["title"]
            t = {"text": t} if isinstance(t, str) else dict(t)
            frame["layout"]["title"] = {**t, "font": {**t.get("font", {}), "size": PRESENT_TITLE}}
    return go.Figure(spec, skip_invalid=True)
