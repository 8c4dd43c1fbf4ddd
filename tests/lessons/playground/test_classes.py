"""Lesson 5 with 3 to 6 classes and the class's own points, through AppTest: the link, the drawing, a file."""

import json
import re
import time

from autodiff_core.data import OWN, OWN_REGRESSION
from autodiff_core.figures.playground import region_color
from autodiff_core.own_data import LINK_CHARS, link_text
from studio import playground_data
from tests.conftest import wait_for_run
from tests.lessons.playground.test_layer_links import open_playground


def payload(at):
    [el] = [e for e in at.get("bidi_component") if e.proto.id.endswith("playground_live")]
    return json.loads(el.proto.json)


def texts(at) -> str:
    """Every text on the page, as read (a backslash that escapes a character is not read)."""
    return " ".join(str(e.value) for kind in ("markdown", "caption", "info", "warning", "error")
                    for e in getattr(at, kind)).replace("\\", "")


def test_a_link_opens_four_classes_of_a_pie_and_the_page_shows_mysoftmax(new_app):
    at = open_playground(new_app, pg_dataset="Pie slices", pg_classes="4")
    pg = at.session_state["pg_session"].model
    assert pg.config.classes == 4 and pg.model.layers[-1].out_features == 4
    slider = at.slider(key="pg_classes")  # drawn from its declaration, for the sets that take it
    assert (slider.label, slider.min, slider.max, slider.value) == ("Classes", 2, 6, 4)
    assert at.query_params["pg_classes"] in ("4", ["4"])
    data = payload(at)
    assert data["surface"]["classes"] == [[int(c[i:i + 2], 16) for i in (1, 3, 5)] for c in map(region_color, range(4))]
    assert "tell 4 classes apart" in texts(at) and "MySoftmax" in texts(at)
    at.button(key="pg_step").click().run()
    said = texts(at)
    assert "Inside MySoftmax" in " ".join(h.value for h in at.subheader)
    gap, formula = (float(v) for v in re.search(r"between the two: (\S+); between MySoftmax's and diag\(y\) − y yᵀ: "
                                                r"(\S+)\.", said).groups())
    assert gap < 1e-12 and formula < 1e-12
    assert any("class MySoftmax(Function)" in c.value for c in at.code)
    tables = [t.value for t in at.dataframe]
    assert any(list(t.columns) == ["", "/dz0", "/dz1", "/dz2", "/dz3"] for t in tables)
    assert not at.exception


def test_two_class_sets_ignore_the_classes_and_keep_the_sigmoid(new_app):
    at = open_playground(new_app, pg_dataset="XOR", pg_classes="5")
    pg = at.session_state["pg_session"].model
    assert pg.config.classes == 2 and pg.model.layers[-1].out_features == 1
    assert "colors" in payload(at)["surface"] and "Inside MySoftmax" not in texts(at)
    assert not [w for w in at.slider if w.key == "pg_classes"]  # XOR has two: no slider to suggest otherwise


def test_your_points_start_from_a_few_and_a_click_adds_one_while_training_goes_on(new_app):
    at = open_playground(new_app, pg_dataset=OWN, pg_classes="3")
    start = at.session_state["pg_points"]
    assert len(start) == 15 and payload(at).get("draw") is True
    assert payload(at)["layout"]["dragmode"] is False
    at.select_slider(key="pg_speed").set_value("50").run()
    at.button(key="pg_play").click().run()
    time.sleep(0.5)
    old = at.session_state["playground_run"]
    at.session_state["pg_draw"] = 2
    playground_data.apply_click(at.session_state, {"x": 1.234, "y": -4.5, "erase": False})
    at.run()
    assert at.session_state["pg_points"] == (*start, (1.23, -4.5, 2.0))
    run = at.session_state["playground_run"]
    assert run is not old and run.running and not old.running  # paused, given the point, played on
    pg = at.session_state["pg_session"].model
    assert pg.steps_done >= old.last.step and len(pg.y_train) + len(pg.y_test) == 16
    playground_data.apply_click(at.session_state, {"x": 1.25, "y": -4.45, "erase": True})  # Shift: the nearest goes
    at.run()
    assert at.session_state["pg_points"] == start
    at.button(key="pg_pause").click().run()
    wait_for_run(at, "playground", timeout=10)
    assert not at.exception


def test_a_click_from_anywhere_else_changes_nothing(new_app):
    at = open_playground(new_app, pg_dataset=OWN)
    start = at.session_state["pg_points"]
    for click in ({"x": "1", "y": 2}, {"x": float("nan"), "y": 0}, [1, 2], None, {"x": True, "y": 1}):
        playground_data.apply_click(at.session_state, click)
    at.run()
    assert at.session_state["pg_points"] == start
    at.session_state["pg_draw"] = playground_data.ERASE
    for _ in range(len(start)):  # the eraser stops at the last four
        playground_data.apply_click(at.session_state, {"x": start[0][0], "y": start[0][1]})
        at.run()
        start = at.session_state["pg_points"]
    assert len(at.session_state["pg_points"]) == 4 and "At least 4 points stay" in texts(at)


def test_the_link_holds_your_points_while_they_fit_and_says_so_when_not(new_app):
    points = tuple((float(i % 11 - 5), float(i // 11 - 5), float(i % 3)) for i in range(60))
    at = open_playground(new_app, pg_dataset=OWN, pg_points=link_text(points))
    assert at.session_state["pg_points"] == points and at.session_state["pg_session"].model.config.points == points
    assert at.query_params["pg_points"] in (link_text(points), [link_text(points)])
    many = tuple((i / 7 - 5.123456, (i % 13) / 3 - 2.0987654, float(i % 2)) for i in range(300))
    assert len(link_text(many)) > LINK_CHARS
    at.session_state["pg_points"] = many
    at.run()
    assert at.query_params["pg_points"] in ("", [""])
    assert f"The link holds the settings only: your 300 points take {len(link_text(many)):,} characters" in texts(at)


def test_points_a_link_gets_wrong_fall_back_with_a_sentence(new_app):
    at = open_playground(new_app, pg_dataset=OWN, pg_points="1,1,0;2,2,9;3,3,1;4,4,0")
    assert len(at.session_state["pg_points"]) == 15  # the few it starts from
    assert "point 2's class 9 is not a whole number from 0 to 5" in texts(at)
    at = open_playground(new_app, pg_dataset=OWN, pg_points="1,1,<b>x</b>")
    warned = " ".join(w.value for w in at.warning)
    assert "pg_points `1,1,<b>x</b>` in the link has a point (1) that is not three numbers" in warned


def test_a_file_becomes_your_points_or_a_plain_sentence_names_its_line(new_app):
    at = open_playground(new_app)
    playground_data.take_file(at.session_state, "**bold**.csv", b"x1,x2,label\n1,2,**x**\n2,3,<b>x</b>\n"
                                                                b"3,3,**x**\n4,4,<b>x</b>\n")
    at.run()
    assert at.session_state["pg_dataset"] == OWN and at.session_state["pg_classes"] == 2
    assert at.session_state["pg_points"] == ((1.0, 2.0, 0.0), (2.0, 3.0, 1.0), (3.0, 3.0, 0.0), (4.0, 4.0, 1.0))
    [labels] = [t.value for t in at.dataframe if "label in the file" in t.value.columns]
    assert labels["label in the file"].tolist() == ["**x**", "<b>x</b>"]
    playground_data.take_file(at.session_state, "<i>bad</i>.csv", b"x1,x2,label\n1,2,a\n2,x,b\n3,3,a\n4,4,b\n")
    at.run()
    [warning] = [w.value for w in at.warning if "Line 3" in w.value]
    assert "<i>" not in warning and warning.startswith("\\<i\\>bad")  # every mark escaped: plain text, no italics
    assert re.sub(r"\\(.)", r"\1", warning) == '<i>bad</i>.csv: Line 3: x2 is "x", not a number. Your points are as ' \
                                               "they were."
    assert len(at.session_state["pg_points"]) == 4 and not at.exception  # the points stay as they were


def test_a_regression_of_your_own_points_adds_the_target_picked(new_app):
    at = open_playground(new_app, pg_dataset=OWN_REGRESSION)
    start = at.session_state["pg_points"]
    assert len(start) == 15 and all(-1 <= p[2] <= 1 for p in start) and at.session_state["pg_draw"] == -1.0
    at.session_state["pg_draw"] = 0.5
    playground_data.apply_click(at.session_state, {"x": -2.0, "y": 5.5, "erase": False})
    at.run()
    assert at.session_state["pg_points"][-1] == (-2.0, 5.5, 0.5)
    assert at.session_state["pg_session"].model.config.regression and not at.exception
