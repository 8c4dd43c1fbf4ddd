"""The class board (AppTest): a student's finished run, sent to the class, is on the teacher's board with its
settings and final loss; a second send is refused; nicknames stay hidden until shown, and plain text when
shown; a click on a point loads that run's settings into the teacher's lesson; lesson 6 counts who solved which
challenge and each mistake the judge named."""

from __future__ import annotations

import json
import time

import pytest

from autodiff_core import LogisticConfig, train_logistic
from autodiff_core.figures.board import board_scatter, log_axis
from autodiff_core.grading.challenges import CHALLENGES
from autodiff_core.grading.judge import judge
from studio.room import board, panel
from studio.room.classes import Classes
from studio.room.store import SQLiteStore
from tests.conftest import wait_for_run
from tests.studio.test_app import train_at_full_speed

SIGMOID = CHALLENGES["sigmoid"].solution
FORGOT = SIGMOID.replace("return grad_output * s * (1 - s)", "return s * (1 - s)")  # no grad_output
RELU = CHALLENGES["relu"].solution
FLIPPED = RELU.replace("input < 0] = 0", "input > 0] = 0")


@pytest.fixture
def room_store(tmp_path, monkeypatch):
    """Each test's classes on a store of its own."""
    c = Classes(SQLiteStore(tmp_path / "classes.sqlite3"))
    monkeypatch.setattr(panel, "classes", lambda: c)
    return c


def teacher(new_app):
    at = new_app()
    at.run()
    at.sidebar.button(key="room_start").click().run()
    return at, at.session_state["room_teacher"][0]


def student(new_app, code: str, name: str):
    at = new_app()
    at.run()
    at.text_input(key="room_code").input(code).run()
    at.text_input(key="room_name").input(name).run()
    at.button(key="room_join").click().run()
    assert at.session_state["room_student"].code == code
    return at


def trained(at, lr: float, iters: int = 40):
    """Lesson 3 with a few iterations and learning rate ``lr``, trained to its end; returns the run."""
    at.switch_page("pages/logistic.py").run()
    at.number_input(key="lr_lr").set_value(lr).run()
    at.number_input(key="lr_iters").set_value(iters).run()
    return train_at_full_speed(at, "logistic")


def reference_loss(lr: float, iters: int = 40) -> float:
    return list(train_logistic(LogisticConfig(learning_rate=lr, max_iterations=iters)))[-1].loss


def send(at) -> str:
    at.button(key="logistic_send").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return " ".join([*(s.value for s in at.success), *(e.value for e in at.error)])


def board_page(at):
    at.switch_page("pages/board.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def chart(at, lesson: str = "logistic") -> dict:
    [el] = [c for c in at.get("plotly_chart") if c.proto.id.endswith(f"board_{lesson}_chart")]
    return json.loads(el.proto.spec)


def table(at, n: int = 0) -> list[dict]:
    return at.dataframe[n].value.to_dict("records")


def test_a_sent_run_is_on_the_board_with_its_settings_and_final_loss(room_store, new_app):
    t, code = teacher(new_app)
    s = student(new_app, code, "Ada")
    run = trained(s, 0.3)
    s.number_input(key="lr_lr").set_value(0.05).run()  # changed after the run: not the run's setting
    assert send(s) == board.SENT
    [sub] = room_store.submissions(code)
    assert sub["settings"]["lr_lr"] == "0.3" and sub["settings"]["lr_iters"] == "40"
    assert sub["figures"]["loss"] == pytest.approx(reference_loss(0.3)) == pytest.approx(run.last.loss)
    assert sub["figures"]["accuracy"] == pytest.approx(run.last.accuracy)

    board_page(t)
    fig = chart(t)["data"][0]
    assert fig["x"] == [0.3] and fig["y"] == [pytest.approx(reference_loss(0.3))] and fig["customdata"] == [0]
    [row] = table(t)
    assert row["final loss"] == pytest.approx(reference_loss(0.3)) and row["Learning rate"] == "0.3"
    assert row["student"] == board.HIDDEN and fig["text"] == [board.HIDDEN]
    assert any("1 run sent by 1 student" in c.value for c in t.caption)


def test_a_second_send_of_the_same_run_is_refused_in_a_sentence(room_store, new_app):
    _, code = teacher(new_app)
    s = student(new_app, code, "Ada")
    trained(s, 0.3)
    assert send(s) == board.SENT
    assert send(s) == "You already sent this run to the class."
    assert len(room_store.submissions(code)) == 1


def test_the_table_is_sorted_by_score_and_names_show_only_when_the_teacher_shows_them(room_store, new_app):
    t, code = teacher(new_app)
    rates = (0.01, 0.3)
    for lr, name in zip(rates, ("Ada", "**B**[x](http://e.x)"), strict=True):
        s = student(new_app, code, name)
        trained(s, lr)
        assert send(s) == board.SENT
    board_page(t)
    losses = sorted(reference_loss(lr) for lr in rates)
    assert [r["final loss"] for r in table(t)] == [pytest.approx(v) for v in losses]
    assert {r["student"] for r in table(t)} == {board.HIDDEN}
    fig = chart(t)
    assert fig["layout"]["xaxis"]["type"] == "log"  # 0.01 to 0.3: more than a decade
    names = json.dumps([*fig["data"][0]["text"], *(m.value for m in t.markdown)])
    assert "Ada" not in names and "e.x" not in names
    t.toggle(key=board.NAMES_KEY).set_value(True).run()
    assert room_store.room(code).names_shown
    assert {r["student"] for r in table(t)} == {"Ada", "**B**[x](http://e.x)"}  # a cell: plain text
    assert "**B**[x](http://e.x)" in chart(t)["data"][0]["text"]
    assert not any("e.x" in m.value for m in [*t.markdown, *t.caption])  # never drawn as markdown


def test_clicking_a_point_loads_that_run_s_settings_into_the_lesson(room_store, new_app):
    t, code = teacher(new_app)
    s = student(new_app, code, "Ada")
    trained(s, 0.3, iters=25)
    send(s)
    board_page(t)
    selection = {"selection": {"points": [{"curve_number": 0, "point_index": 0, "x": 0.3,
                                           "customdata": chart(t)["data"][0]["customdata"][0]}]}}
    t.session_state[board.PICK] = ("logistic", board.picked(selection))
    t.run()
    assert not t.exception, [e.value for e in t.exception]
    assert t.title[0].value.startswith("3 · Logistic regression")
    assert [x.value for x in t.toast] == [f"Loaded the settings of the run with final loss "
                                          f"{reference_loss(0.3, iters=25):.4g}: train to run them."]
    assert t.number_input(key="lr_lr").value == 0.3 and t.number_input(key="lr_iters").value == 25
    t.switch_page("pages/logistic.py").run()  # where the browser now is (AppTest stays on its own page)
    assert t.number_input(key="lr_lr").value == 0.3 and t.number_input(key="lr_iters").value == 25
    assert t.query_params["lr_lr"] in ("0.3", ["0.3"])  # the address bar follows: a link to that run
    run = train_at_full_speed(t, "logistic")  # the teacher's next run is the student's
    assert run.last.loss == pytest.approx(reference_loss(0.3, iters=25))


def test_a_pick_that_is_no_run_of_the_lesson_loads_nothing(room_store, new_app):
    t, code = teacher(new_app)
    board_page(t)
    for pick in (("logistic", 5), ("playground", 0), ("nope", 0), ("logistic", "0")):
        t.session_state[board.PICK] = pick
        t.run()
        assert not t.exception and t.title[0].value == "Class board"
    assert board.picked({"selection": {"points": [{"customdata": True}]}}) is None
    assert board.picked(None) is None


def test_log_axes_only_for_positive_values_over_a_decade_and_a_hover_name_is_text():
    assert log_axis([1e-3, 0.5]) and not log_axis([0.1, 0.5]) and not log_axis([0.0, 10.0, 100.0])
    fig = board_scatter([1.0], [0.5], ["<b>Bo</b>"], [0], x_title="Learning rate", y_title="final loss")
    assert fig.data[0].text == ("&lt;b&gt;Bo&lt;/b&gt;",)  # plotly draws the tags' text, not bold
    assert fig.layout.xaxis.type == "linear" and "Learning rate" in fig.data[0].hovertemplate
    assert fig.layout.xaxis.rangemode == "nonnegative"  # a learning rate alone: no negative axis around it
    bias = board_scatter([-1.0, 2.0], [0.5, 0.4], ["a", "b"], [0, 1], x_title="Bias", y_title="final loss")
    assert bias.layout.xaxis.rangemode == "normal" and bias.layout.yaxis.rangemode == "nonnegative"


def verdict_sent(room_store, code: str, browser: str, name: str, challenge: str, source: str):
    who = room_store.join(code, browser, browser, name)
    room_store.submit(who, code, board.verdict_entry("write_function", challenge, source, judge(source, challenge)))


def test_lesson_6_counts_who_solved_which_challenge_and_each_mistake(room_store, new_app):
    t, code = teacher(new_app)
    s = student(new_app, code, "Ada")  # one student through the page, the others straight to the class
    s.switch_page("pages/write_function.py").run()
    s.toggle(key="wf_plain").set_value(True).run()
    s.text_area(key="wf_text_relu").input(RELU).run()
    s.button(key="wf_check").click().run()
    s.button(key="wf_send").click().run()
    assert [x.value for x in s.success][-1] == board.SENT
    for i, (challenge, source) in enumerate([("sigmoid", FORGOT), ("sigmoid", FORGOT), ("relu", FLIPPED),
                                             ("sigmoid", SIGMOID)]):
        verdict_sent(room_store, code, f"browser-of-student-{i}-xx", f"S{i}", challenge, source)
    forgot, flipped = board.mistake(judge(FORGOT, "sigmoid")), board.mistake(judge(FLIPPED, "relu"))
    assert "forgot grad_output" in forgot and "flipped" in flipped
    assert judge(FORGOT, "sigmoid").reasons[0].startswith(forgot)  # the judge's own words, shortened

    board_page(t)
    per_challenge, per_mistake, per_student = (table(t, n) for n in range(3))
    assert per_challenge == [{"challenge": CHALLENGES["relu"].title, "solved": 1, "sent": 2},
                             {"challenge": CHALLENGES["sigmoid"].title, "solved": 1, "sent": 3}]
    assert per_mistake == [{"mistake": forgot, "students": 2}, {"mistake": flipped, "students": 1}]
    assert len(per_student) == 5 and {r["student"] for r in per_student} == {board.HIDDEN}
    t.toggle(key=board.NAMES_KEY).set_value(True).run()
    solved = {r["student"]: r["solved"] for r in table(t, 2)}
    assert solved["Ada"] == CHALLENGES["relu"].title and solved["S3"] == CHALLENGES["sigmoid"].title
    assert solved["S0"] == "—"


def test_the_presenter_view_shows_the_lesson_s_board_under_its_chart(room_store, new_app):
    t, code = teacher(new_app)
    s = student(new_app, code, "Ada")
    trained(s, 0.3)
    send(s)
    t.switch_page("pages/logistic.py").run()
    assert not any(e.label.startswith("Class board") for e in t.expander)  # not outside the presenter view
    t.sidebar.toggle(key="present").set_value(True).run()
    [box] = [e for e in t.expander if e.label.startswith("Class board")]
    assert box.label == "Class board · 1 sent"
    [el] = [c for c in t.get("plotly_chart") if c.proto.id.endswith("present_logistic_chart")]
    spec = json.loads(el.proto.spec)
    assert spec["data"][0]["x"] == [0.3] and spec["layout"]["font"]["size"] >= 18  # the presenter's scale
    assert f"1. `hidden` · final loss **{reference_loss(0.3):.4g}**" in [m.value for m in t.markdown]
    t.session_state[board.PICK] = ("logistic", 0)  # a click on the folded board's point: loaded on this page
    t.run()
    assert not t.exception, [e.value for e in t.exception]
    assert t.number_input(key="lr_lr").value == 0.3 and t.number_input(key="lr_iters").value == 40


def test_a_student_outside_a_class_has_no_send_button(app):
    app.switch_page("pages/logistic.py").run()
    app.number_input(key="lr_iters").set_value(20).run()
    train_at_full_speed(app, "logistic")
    assert not [b for b in app.button if b.key == "logistic_send"]


def test_lessons_2_and_5_send_their_runs_too(room_store, new_app):
    """Lesson 2's final loss (the engine's, for the same settings), lesson 5's paused run with its test loss and
    accuracy: each with the settings it ran with, whatever the widgets say since."""
    from autodiff_core import TwoLayerConfig, train_two_layer

    _, code = teacher(new_app)
    s = student(new_app, code, "Ada")
    s.switch_page("pages/two_layer.py").run()
    s.number_input(key="tl_steps").set_value(30).run()
    run = train_at_full_speed(s, "two_layer")
    s.button(key="two_layer_send").click().run()
    [sub] = room_store.submissions(code)
    assert sub["settings"]["tl_steps"] == "30" and sub["figures"]["steps"] == run.last.step
    assert sub["figures"]["loss"] == pytest.approx(list(train_two_layer(TwoLayerConfig(steps=30)))[-1].loss, rel=1e-6)

    s.switch_page("pages/playground.py").run()
    s.number_input(key="pg_lr").set_value(0.1).run()
    s.select_slider(key="pg_speed").set_value("200").run()
    s.button(key="pg_play").click().run()
    time.sleep(0.5)
    s.button(key="pg_pause").click().run()
    run = wait_for_run(s, "playground", timeout=10)
    s.number_input(key="pg_lr").set_value(0.3).run()
    s.button(key="playground_send").click().run()
    assert not s.exception and [x.value for x in s.success][-1] == board.SENT
    sub = room_store.submissions(code)[-1]
    assert sub["lesson"] == "playground" and sub["settings"]["pg_lr"] == "0.1" and sub["settings"]["pg_hidden"]
    assert sub["figures"]["test_loss"] == pytest.approx(run.last.test_loss)
    assert sub["figures"]["test_accuracy"] == pytest.approx(run.last.test_accuracy)


def test_the_presenter_view_of_lesson_6_shows_its_counts(room_store, new_app):
    t, code = teacher(new_app)
    for i, source in enumerate((FORGOT, FORGOT, SIGMOID)):
        verdict_sent(room_store, code, f"browser-of-student-{i}-xx", f"S{i}", "sigmoid", source)
    t.sidebar.toggle(key="present").set_value(True).run()
    t.switch_page("pages/write_function.py").run()
    [box] = [e for e in t.expander if e.label.startswith("Class board")]
    assert box.label == "Class board · 3 sent"
    text = [m.value for m in t.markdown]
    assert f"- {CHALLENGES['sigmoid'].title}: **1** of 3 solved" in text
    assert f"- `{board.mistake(judge(FORGOT, 'sigmoid'))}`: **2**" in text


def test_a_store_that_fails_leaves_the_board_page_drawn_without_a_traceback(app, monkeypatch):
    class Down:
        def __getattr__(self, name):
            raise ConnectionError("Error 111 connecting to 10.0.0.10:6379. Connection refused.")

    monkeypatch.setattr(panel, "classes", lambda: Down())
    app.session_state["room_teacher"] = ("ABCDE", "key")  # a teacher whose store then went away
    board_page(app)
    assert app.title[0].value == "Class board" and panel.UNAVAILABLE in [c.value for c in app.sidebar.caption]
    app.session_state[board.PICK] = ("logistic", 0)
    app.run()
    assert not app.exception and app.title[0].value == "Class board"


def test_a_sent_lesson_6_function_keeps_its_code_and_a_click_on_the_board_brings_it_whole(room_store, new_app):
    """A run of lesson 5 with a student's Function as its activation: its setting is the Function's name and packed
    code, sent whole (it was cut at 80 characters, which no click could load); the table shows the name."""
    from studio.room.classes import MAX_SENT_SETTING
    from studio.session_functions import MAX_LINK_CODE, PENDING, name_of, pack

    assert MAX_SENT_SETTING >= MAX_LINK_CODE + 100  # the longest a link carries, with its name
    t, code = teacher(new_app)
    name = name_of(CHALLENGES["relu"], RELU)
    value = f"{name} {pack(RELU)}"
    assert len(value) > 200
    bo = room_store.join(code, "browser-of-bo-xxxxxxxxxx", "bo", "Bo")
    room_store.submit(bo, code, {"lesson": "playground", "run_id": "r1", "figures": {"test_loss": 0.2},
                                 "settings": {"pg_activation": value, "pg_lr": "0.03"}})
    [sub] = room_store.submissions(code)
    assert sub["settings"]["pg_activation"] == value
    board_page(t)
    [row] = table(t)
    assert row["Activation"] == f"{name}…"
    t.session_state[board.PICK] = ("playground", 0)
    t.run()
    assert not t.exception, [e.value for e in t.exception]
    assert t.title[0].value.startswith("5 ·")
    assert t.session_state[PENDING]["pg_activation"] == (name, "relu", RELU)  # waits for the teacher's consent


def _tab_container(at):
    def walk(node):
        if type(node).__name__ == "Block" and node.proto.WhichOneof("type") == "tab_container":
            yield node.proto.tab_container
        for child in getattr(node, "children", {}).values():
            yield from walk(child)

    [found] = walk(at._tree)
    return found


def test_the_tab_the_teacher_has_open_stays_open_when_a_lesson_gets_its_first_run(room_store, new_app):
    """A lesson's first run adds its tab before the others (in lesson order): the tabs are new, and they used to
    open on the first; they open on the one the teacher had open."""
    t, code = teacher(new_app)
    bo = room_store.join(code, "browser-of-bo-xxxxxxxxxx", "bo", "Bo")
    for lesson, run in (("logistic", "r1"), ("playground", "r2")):
        room_store.submit(bo, code, {"lesson": lesson, "run_id": run, "figures": {"loss": 0.2}, "settings": {}})
    board_page(t)
    assert [x.label for x in t.tabs] == ["3 · Logistic regression", "5 · Classification playground"]
    t.session_state[board.TAB] = "5 · Classification playground"  # the teacher clicks lesson 5's tab
    t.run()
    room_store.submit(bo, code, {"lesson": "two_layer", "run_id": "r3", "figures": {"loss": 0.3}, "settings": {}})
    t.run()  # the watch's rerun on the news
    assert not t.exception
    tabs = [x.label for x in t.tabs]
    assert tabs[0].startswith("2 ·") and tabs[_tab_container(t).default_tab_index] == "5 · Classification playground"


def test_a_playground_that_was_only_stepped_sends_its_state(room_store, new_app):
    """Lesson 5 trained with Step alone has no run, and had no Send button: it sends the model's state, with the
    settings of its last step; each state once. After a run and more steps, the state, not the run."""
    from autodiff_core.playground import Playground, PlaygroundConfig

    _, code = teacher(new_app)
    s = student(new_app, code, "Ada")
    s.switch_page("pages/playground.py").run()
    assert not [b for b in s.button if b.key == "playground_send"]  # step 0: nothing worth sending yet
    s.number_input(key="pg_lr").set_value(0.1).run()
    for _ in range(3):
        s.button(key="pg_step").click().run()
    s.number_input(key="pg_lr").set_value(0.3).run()  # after the steps: not what they were trained with
    s.button(key="playground_send").click().run()
    assert not s.exception and [x.value for x in s.success][-1] == board.SENT
    [sub] = room_store.submissions(code)
    reference = Playground(PlaygroundConfig(learning_rate=0.1))
    for _ in range(3):
        reference.step()
    assert sub["settings"]["pg_lr"] == "0.1" and sub["figures"]["steps"] == 3
    assert sub["figures"]["test_loss"] == pytest.approx(reference.snapshot().test_loss)
    s.button(key="playground_send").click().run()
    assert [x.value for x in s.error][-1] == "You already sent this run to the class."
    s.button(key="pg_step").click().run()
    s.button(key="playground_send").click().run()
    assert [x.value for x in s.success][-1] == board.SENT and room_store.submissions(code)[-1]["figures"]["steps"] == 4
    assert room_store.submissions(code)[-1]["settings"]["pg_lr"] == "0.3"
