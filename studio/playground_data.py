"""Lesson 5's classes and the class's own points, on the page: the number of classes, drawing on the plane (as
ConvNetJS's classify2d lets you), the eraser, a CSV file, and what the link holds.

A click on the live chart's plane (``studio/live_chart.js`` sends it) adds a point of the class picked, or with
Shift or the eraser removes the nearest. The points are the setting ``pg_points``: the config is built from it,
and ``PlaygroundSession.for_config`` gives a changed set to the model, which trains on (a run going is paused and
played on). Everything a file or a click brings is checked in ``autodiff_core.own_data``; what it says of a
file is shown as plain text.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import streamlit as st

from autodiff_core.data import OWN, OWN_REGRESSION, is_own, is_regression, takes_classes
from autodiff_core.own_data import (
    MAX_COORD,
    MAX_POINTS,
    MIN_POINTS,
    classes_in,
    extent,
    nearest,
    read_csv,
    require_points,
    starter,
)

from .lessons import widget
from .links import plain
from .own_points import link_note
from .state import drawn_at

DRAW, UPLOAD, NOTE, LABELS = "pg_draw", "pg_upload", "_pg_points_note", "_pg_labels"
ERASE = "erase"
TARGETS = (-1.0, -0.5, 0.0, 0.5, 1.0)  # what a click gives a regression's point
REACH = 0.04  # the eraser takes the nearest point within this share of the plane's width
UPLOAD_MB = 1  # st.file_uploader counts MiB; own_data reads at most 256 KB of it
MANY_INTRO = (
    "A small network whose activation is a custom autograd Function (the tutorial's `MyReLU` by default) learns to "
    "tell {k} classes apart. Its last layer has one output per class, and `MySoftmax`, a custom Function too, turns "
    "them into probabilities; the loss is the cross-entropy, -log of the probability given to each point's own "
    "class. The background takes the colour of the class the network picks at every point, stronger where it is "
    "surer; filled dots are training points, hollow ones test points.")
DRAW_INTRO = (" **Your points:** pick a class (a target, for a regression) over the plane, and click on the plane to "
              "add a point of it; Shift-click, or the eraser, removes the nearest. Training goes on meanwhile.")


def classes_chosen() -> int:
    """The network's classes from the widgets: 2 for the two-class sets, the slider's for the others, and for
    your own points at least as many as they use."""
    ss = st.session_state
    if not takes_classes(ss.pg_dataset):
        return 2
    points = ss.pg_points if is_own(ss.pg_dataset) and _fit(ss.pg_points, False) else ()
    return max(ss.pg_classes, classes_in(points)) if points else ss.pg_classes


def _fit(points: tuple, regression: bool) -> bool:
    try:
        require_points(points, regression)
    except ValueError:
        return False
    return True


def intro(default: str) -> str:
    """The lesson's explanation for the data chosen: ``default``, or the many-class one, and how to draw."""
    k, own = classes_chosen(), is_own(st.session_state.pg_dataset)
    return (MANY_INTRO.format(k=k) if k > 2 else default) + (DRAW_INTRO if own else "")


def _own_points() -> tuple:
    """The points to build the config from: the session's, or a few to start from (with a note saying why)."""
    ss = st.session_state
    regression, points = is_regression(ss.pg_dataset), ss.pg_points
    try:
        require_points(points, regression)
        return points
    except ValueError as exc:
        if points:  # from a link, or a file for the other kind: say what was wrong with them
            ss[NOTE] = (f"Those points do not fit {ss.pg_dataset} ({exc}); it starts from a few points of its own "
                        "instead.")
        ss.pg_points = starter(max(ss.pg_classes, 2), regression, ss.pg_data_seed)
        return ss.pg_points


def config_fields() -> dict:
    """The config's ``classes`` and ``points`` from the widgets (the points only for your own)."""
    points = _own_points() if is_own(st.session_state.pg_dataset) else ()
    return {"classes": classes_chosen(), "points": points}


def data_tools() -> None:
    """Under the data row: the classes slider where the set takes it, and for your own points the file, Start
    again, and what the link holds (the class a click adds is picked over the plane: ``draw_picker``)."""
    ss = st.session_state
    own, many = is_own(ss.pg_dataset), takes_classes(ss.pg_dataset)
    if own:
        _own_points()  # first: a note about points that do not fit shows now
    if many:
        widget("pg_classes", st.columns([2, 5])[0])
    if own:
        _file_and_notes()


def draw_picker() -> None:
    """Over the plane, for your own points: what a click adds (a class, or a regression's target), or the eraser."""
    ss = st.session_state
    if not is_own(ss.pg_dataset):
        return
    options = [*(TARGETS if is_regression(ss.pg_dataset) else range(classes_chosen())), ERASE]
    if ss.get(DRAW) not in options:
        ss[DRAW] = options[0]
    st.segmented_control(
        "A click on the plane adds", options, key=DRAW, required=True,
        **drawn_at("segmented_control", DRAW, options=options),
        format_func=lambda v: "eraser" if v == ERASE else f"target {v:+g}" if isinstance(v, float) else f"class {v}",
        help="Pick a class (a target, for a regression), then click on the plane. Shift-click, or the eraser, "
             "removes the point nearest the click.")


def _file_and_notes() -> None:
    ss = st.session_state
    c = st.columns([5, 2], vertical_alignment="bottom")
    c[0].file_uploader("Or upload a CSV: columns x1, x2 and label (or target, for a regression)", type=["csv"],
                       key=UPLOAD, on_change=_read_upload, max_upload_size=UPLOAD_MB,
                       help=f"At most {MAX_POINTS:,} points, each |x1|, |x2| ≤ {MAX_COORD:g}; 2 to 6 labels, or "
                            "targets from -1 to 1.")
    c[1].button("Start again", key="pg_points_reset", on_click=_start_again, width="stretch",
                help="Back to a few points of each class.")
    if note := ss.pop(NOTE, None):
        st.warning(plain(note))
    n = len(ss.pg_points)
    st.caption(f"{n:,} points of your own (at most {MAX_POINTS:,}). Noise and points per class do not apply to "
               "them; Regenerate splits them into train and test points afresh.")
    if labels := ss.get(LABELS):
        st.dataframe({"label in the file": labels, "class": list(range(len(labels)))}, hide_index=True)
    if note := link_note(ss.pg_points):
        st.info(note)


def _read_upload() -> None:
    upload = st.session_state.get(UPLOAD)
    if upload is not None:
        take_file(st.session_state, upload.name, upload.getvalue())


def take_file(ss, name: str, data: bytes) -> None:
    """A file, checked: its points become yours (``ss``: the session's state), or one sentence says which line
    is wrong, and nothing changes."""
    try:
        points, regression, labels = read_csv(data)
    except ValueError as exc:
        ss[NOTE] = f"{name[:60]}: {exc} Your points are as they were."
        return
    ss["pg_dataset"] = OWN_REGRESSION if regression else OWN
    if not regression:
        ss["pg_classes"] = len(labels)
    ss["pg_points"], ss[LABELS] = points, labels


def _start_again() -> None:
    ss = st.session_state
    ss.pg_points = starter(max(ss.pg_classes, 2), is_regression(ss.pg_dataset), ss.pg_data_seed)
    ss.pop(LABELS, None)


def plane_clicked(click: object) -> None:
    """The live chart's ``on_click``: a click on the plane, for this session."""
    apply_click(st.session_state, click)


def apply_click(ss, click: object) -> None:
    """A click on the plane (``{"x", "y", "erase"}``, data from the browser, checked) adds a point of the class
    picked, or with Shift or the eraser removes the nearest; ``ss``: the session's state."""
    if not (isinstance(click, dict) and is_own(ss["pg_dataset"])):
        return
    x, y = click.get("x"), click.get("y")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in (x, y)):
        return
    x, y = (round(min(max(v, -MAX_COORD), MAX_COORD), 2) for v in (x, y))
    points, drawing = ss["pg_points"], ss[DRAW] if DRAW in ss else 0
    if click.get("erase") is True or drawing == ERASE:
        ss["pg_points"] = _erased(ss, points, x, y)
    elif len(points) >= MAX_POINTS:
        ss[NOTE] = f"{MAX_POINTS:,} points is the most: erase some to add others."
    else:
        ss["pg_points"] = (*points, (x, y, float(drawing)))


def _erased(ss, points: tuple, x: float, y: float) -> tuple:
    x0, x1, _, _ = extent(points)
    i = nearest(points, x, y, REACH * (x1 - x0))
    if i is None:
        ss[NOTE] = "No point near there to erase."
        return points
    if len(points) <= MIN_POINTS:
        ss[NOTE] = f"At least {MIN_POINTS} points stay: something to train on and to test on."
        return points
    return points[:i] + points[i + 1:]


def with_drawing(payload: Callable[..., dict]) -> Callable[..., dict]:
    """The page's live payload, marked for drawing when the data are your own: the chart then sends clicks on
    the plane, and a drag no longer zooms (a click would start one)."""
    drawing = is_own(st.session_state.pg_dataset)  # read now: the live feed calls the wrapper off the script

    def marked(run) -> dict:
        data = payload(run)
        if drawing:
            data["draw"] = True
            data["layout"]["dragmode"] = False
        return data
    return marked
