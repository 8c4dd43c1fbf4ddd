"""Presenter view: a toggle in the sidebar (also ``?present=1``) for projecting a lesson at 1280x720.

In it the lesson's explanation is hidden, its settings fold into one expander, the sidebar starts
collapsed, Streamlit's top padding is gone, and every chart (finished or live) uses the presenter scale of
the one theme (``autodiff_core.figures.theme.present_layout``): ticks 18 px, titles 22 px.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import streamlit as st

from autodiff_core.figures.theme import PRESENT_FONT, PRESENT_TITLE, present_layout, recolor

from .feed import PLAIN
from .links import Setting
from .state import drawn_at

KEY = "present"
PLOT_HEIGHT = 430  # a live chart that starts under the title and the controls still ends above 720 px
# A finished run's replay, caption to slider, in the room under a lesson's title, controls and status line
# (lesson 3's chart starts about 290 px down a 720 px screen, under controls at the presenter's 18 px): margins
# above for the caption and the legend, below for the x-axis and one row of Play and the slider.
REPLAY_HEIGHT, REPLAY_TOP, REPLAY_BOTTOM, REPLAY_AXIS = 424, 68, 118, 62
SETTING = Setting(KEY, bool, False)
_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 2.25rem !important; padding-bottom: 1rem !important;
  padding-left: 1.5rem !important; padding-right: 1.5rem !important; max-width: 100% !important; }
[data-testid="stHeader"], [data-testid="stToolbar"] { height: 2.25rem !important; min-height: 0 !important; }
[data-testid="stHeader"] { background: #fff !important; }  /* text scrolls under the band, not under the » button */
[data-testid="stToolbar"] { align-items: center !important; }
[data-testid="stToolbar"] > div { height: 100% !important; align-items: center !important; }
[data-testid="stGraphVizChart"] svg text { font-size: 14px !important; }  /* 14 units: about 18.7 px on screen */
/* Streamlit shrinks a graph to its wrapper's width; once (a full test run) that wrapper was narrower than the page
   and lesson 4's graph drew at 0.68 of its size, its text 12.8 px: on the projector only the screen bounds it */
[data-testid="stGraphVizChart"] svg { max-width: calc(100vw - 3rem) !important; }
.studio-live .studio-status { font-size: 1.15rem !important; }
.studio-live .studio-caption { font-size: 1.45rem !important; }
.studio-live .studio-metric span { font-size: 1.1rem !important; }
.studio-live .studio-metric b { font-size: 1.7rem !important; }
[data-testid="stMainBlockContainer"] [data-testid="stTable"] table { font-size: 1.3rem !important; }
[data-testid="stMainBlockContainer"] [data-testid="stTable"] :is(th, td) { padding: 0.3rem 0.6rem !important; }
[data-testid="stMainBlockContainer"] [data-testid="stTable"] td:not(:first-child) { text-align: right !important;
  font-variant-numeric: tabular-nums; }  /* numbers given as text (each dtype's shortest form) still line up */
/* status lines and captions: read from the back row (Streamlit's are 14 px at 60% opacity) */
[data-testid="stMainBlockContainer"] [data-testid="stCaptionContainer"] { font-size: 1.15rem !important;
  opacity: 1 !important; }
[data-testid="stMainBlockContainer"] h1 { font-size: 2rem !important; padding: 0 0 0.25rem 0 !important; }
/* tabs, the settings box's title, widget labels, the slider's value and the buttons (Train, Stop, Play, Step) */
[data-testid="stMainBlockContainer"] :is([data-testid="stTab"], [data-testid="stExpander"] summary,
  [data-testid="stWidgetLabel"], [data-testid="stCheckbox"], [data-testid="stRadio"], [data-baseweb="button"],
  button[kind]) p,
[data-testid="stMainBlockContainer"] :is([data-testid="stSliderThumbValue"], [data-testid="stSliderTickBarMin"],
  [data-testid="stSliderTickBarMax"]) { font-size: 1.15rem !important; }
[data-testid="stMainBlockContainer"] :is([data-testid="stSelectbox"], [data-testid="stNumberInput"],
  [data-testid="stTextInput"]) input { font-size: 1.15rem !important; }  /* a setting's value */
[data-testid="stMainBlockContainer"] [data-testid="stAlert"] p { font-size: 1.15rem !important; }
[class*="st-key-present_"] :is(p, li, code) { font-size: 1.3rem !important; }  /* presenter.lead: a task */
</style>"""


def presenting() -> bool:
    """Whether the presenter view is on (from the toggle, or from the link before the toggle is drawn)."""
    if KEY in st.session_state:
        return bool(st.session_state[KEY])
    value, _ = SETTING.parse(st.query_params.get(KEY, "0"))
    return bool(value)


def sidebar_state() -> str:
    """For ``st.set_page_config``: a presenter starts with the sidebar collapsed."""
    return "collapsed" if presenting() else "auto"


def presenter_toggle() -> None:
    """The sidebar's toggle; reads ``?present=`` once per session and keeps it in the address bar."""
    ss = st.session_state
    if KEY not in ss:
        ss[KEY] = presenting()
    with st.sidebar:
        st.toggle("Presenter view", key=KEY, **drawn_at("toggle", KEY),
                  help="Big text, a chart that fills the projector, settings folded away. A link with ?present=1 "
                       "opens in it.")
    if ss[KEY]:
        st.html(_CSS)
        if st.query_params.get(KEY) != "1":
            st.query_params[KEY] = "1"
    elif KEY in st.query_params:
        del st.query_params[KEY]


def intro(text: str) -> None:
    """A lesson's explanation (markdown written by us): hidden in the presenter view, where the teacher
    says it."""
    if not presenting():
        st.markdown(text)


def lead(key: str):
    """A container for text the class reads while the teacher works (lesson 6's task and its formula): the
    presenter view sets it larger than the captions. ``key`` names it (Streamlit makes it a CSS class)."""
    return st.container(key=f"present_{key}")


def table(data: dict, *, width: str = "stretch") -> None:
    """A table of short texts (each column a list of strings), every row shown. In the presenter view an HTML
    table, which the presenter CSS enlarges; otherwise the interactive grid (it paints 14 px text on a canvas)."""
    if presenting():
        st.table(data, hide_index=True, width=width)
    else:
        st.dataframe(data, hide_index=True, width=width, height="content")


def dot_options() -> dict:
    """Keyword arguments for ``graph.to_dot``: in the presenter view, boxes sized for the 14-unit text the
    presenter CSS sets (Streamlit's own CSS shrinks Graphviz text to 0.6rem, under 13 px on screen)."""
    return {"fontsize": 14} if presenting() else {}


def present_spec(spec: dict, *, fit: bool = False) -> dict:
    """A finished figure's spec (``fig.to_plotly_json()``) at the presenter scale, in place. With ``fit``, a
    replay whose plots sit side by side (lesson 3's, right under its controls) is also fitted in the rest of
    a 1280x720 screen, Play and slider included: there the teacher presses Play."""
    layout = spec["layout"] = present_layout(spec.get("layout", {}))
    frames = spec.get("frames") or []
    for frame in frames:
        title = (frame.get("layout") or {}).get("title")
        if isinstance(title, dict):
            title["font"] = {**title.get("font", {}), "size": PRESENT_TITLE}
    if fit and layout.get("sliders") and ((layout.get("xaxis2") or {}).get("domain") or [0])[0] > 0.5:
        _fit_replay(layout, frames)
    return spec


def _one_line(title) -> None:
    """A replay's caption, three short lines for a phone, on one line: the projector is wide, not tall."""
    if isinstance(title, dict) and isinstance(title.get("text"), str):
        title["text"] = title["text"].replace("<br>", "   ·   ")


def _fit_replay(layout: dict, frames: list) -> None:
    row = -REPLAY_AXIS / (REPLAY_HEIGHT - REPLAY_TOP - REPLAY_BOTTOM)  # under the x-axis ticks and title
    layout.update(height=REPLAY_HEIGHT, margin={**layout.get("margin", {}), "t": REPLAY_TOP, "b": REPLAY_BOTTOM})
    title = layout["title"]
    title.update(y=1, yref="container", yanchor="top", pad={"t": 4})
    _one_line(title)
    for frame in frames:
        _one_line((frame.get("layout") or {}).get("title"))
    for menu in layout.get("updatemenus") or []:
        menu.update(x=0, y=row, xanchor="left", yanchor="top")
    for slider in layout.get("sliders") or []:  # beside Play; the caption above already names the iteration
        slider.update(x=0.2, len=0.8, y=row, yanchor="top", pad={"t": 0, "b": 0},
                      currentvalue={**slider.get("currentvalue", {}), "visible": False})


TEXT_ONLY = ("caption", "metrics", "surface")  # what a state holds besides its traces: text and numbers


def _recolor_payload(data: dict) -> None:
    """``recolor`` the payload's colours, in place, without walking each state's caption, metrics and surface,
    which never hold one (``recolor`` itself passes over a curve's numbers). The feed builds a payload several
    times a second a run, and the walk over sixty states' metrics cost more than the build itself."""
    for key, value in data.items():
        if key == "states" and isinstance(value, list):
            for state in value:
                if isinstance(state, dict):
                    for k, v in state.items():
                        if k not in TEXT_ONLY and isinstance(v, (dict, list)):
                            recolor(v)
        elif isinstance(value, (dict, list)):
            recolor(value)


SCALED = ("layout", "height", "diagram", "flow")  # what of a live payload the presenter scale changes


def presented(data: dict) -> dict:
    """A live payload at the presenter scale: its layout and height, and lesson 5's network diagram and gradient
    flow. A copy: ``data`` stays as it was, and the copy holds its parts under ``feed.PLAIN``, for the class relay
    (followers' charts take their own view's scale, not the teacher's)."""
    out = {**data, **{k: copy.deepcopy(data[k]) for k in SCALED if k in data}}
    present_layout(out["layout"])
    out["height"] = PLOT_HEIGHT
    if isinstance(out.get("diagram"), dict):
        out["diagram"]["font"] = {**out["diagram"].get("font", {}), "size": PRESENT_FONT}
    if isinstance(out.get("flow"), dict):
        present_layout(out["flow"]["layout"])
    out[PLAIN] = {k: data[k] for k in SCALED if k in data}
    return out


def payload(build: Callable, *, extra: Callable[[dict], None] | None = None) -> Callable:
    """Wrap a page's live ``payload(run)`` function: the palette, the presenter scale (decided now, on the
    script thread; the live feed calls the wrapper off it) and ``extra`` (the ghosts of earlier runs)."""
    scale = presenting()

    def wrapped(run) -> dict:
        data = build(run)
        if extra is not None:
            extra(data)
        _recolor_payload(data)
        return presented(data) if scale else data

    return wrapped
