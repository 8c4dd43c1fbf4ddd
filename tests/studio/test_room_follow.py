"""Following the teacher (AppTest, two sessions on one class store): a student's page goes to the teacher's lesson
with the teacher's settings, and its live chart reads the teacher's run from the class relay; the relay's routes
answer as the live feed does; "Try it yourself" and leaving the lesson end following."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import torch
from starlette.requests import Request

from studio import feed
from studio.room import classes as rc
from studio.room import relay
from studio.room.classes import Classes
from studio.room.store import SQLiteStore
from tests.conftest import wait_for_run
from tests.studio.test_app import payload


@pytest.fixture
def room_store(tmp_path, monkeypatch):
    c = Classes(SQLiteStore(tmp_path / "classes.sqlite3"))
    monkeypatch.setattr(rc, "shared", lambda: c)  # every session and route of this process
    return c


def _teacher(new_app):
    at = new_app()
    at.run()
    at.sidebar.button(key="room_start").click().run()
    return at, at.session_state["room_teacher"]


def _student(new_app, code, name="Ada"):
    at = new_app()
    at.run()
    at.text_input(key="room_code").input(code).run()
    at.text_input(key="room_name").input(name).run()
    at.button(key="room_join").click().run()
    return at


def _title(at) -> str:
    return at.title[0].value if at.title else ""


def _get(route, path: str, query: str = "") -> tuple[int, dict]:
    """Ask one of the relay's routes as the server's router does (held answers included)."""
    for r in relay.ROUTES:
        match, scope = r.matches({"type": "http", "path": path, "method": "GET", "headers": []})
        if match.name == "FULL" and r.endpoint is route:
            request = Request({"type": "http", "method": "GET", "headers": [], "query_string": query.encode(),
                               **scope})
            response = asyncio.run(route(request))
            return response.status_code, json.loads(response.body)
    raise AssertionError(path)


def test_a_student_follows_the_teacher_to_the_lesson_with_the_teacher_s_settings(room_store, new_app):
    teacher, (code, _) = _teacher(new_app)
    teacher.switch_page("pages/logistic.py").run()
    teacher.number_input(key="lr_lr").set_value(0.05).run()
    room = room_store.room(code)
    assert (room.lesson, room.settings["lr_lr"]) == ("logistic", "0.05")
    student = _student(new_app, code)
    assert not student.exception
    assert _title(student).startswith("3 ·") and student.session_state["lr_lr"] == 0.05
    assert "Following the teacher" in " ".join(m.value for m in student.markdown)
    assert not [b for b in student.button if b.key == "logistic_train"]  # the run here is the teacher's
    assert any("when the teacher presses Train" in i.value for i in student.info)

    teacher.switch_page("pages/two_layer.py").run()  # the teacher moves on: so does the student
    student.run()
    assert _title(student).startswith("2 ·")


def _a_short_teacher_run(new_app):
    """A class whose teacher trains 60 iterations of lesson 3 at full speed, and one student: (teacher, student,
    code, the teacher's finished run)."""
    teacher, (code, _) = _teacher(new_app)
    teacher.switch_page("pages/logistic.py").run()
    teacher.number_input(key="lr_iters").set_value(60).run()
    student = _student(new_app, code)
    teacher.select_slider(key="logistic_speed").set_value("max").run()
    teacher.button(key="logistic_train").click().run()
    return teacher, student, code, wait_for_run(teacher, "logistic")


def test_the_teacher_s_run_reaches_the_follower_s_chart(room_store, new_app):
    teacher, student, code, run = _a_short_teacher_run(new_app)
    deadline = time.monotonic() + 20
    while relay.newest(code) is None or relay.newest(code)[1]["status"] != run.status:
        assert time.monotonic() < deadline, "the relay never got the finished run"
        time.sleep(0.05)
    assert room_store.room(code).run_id == run.run_id
    student.run()
    data = payload(student, "logistic_live")
    assert data["follow"] and data["feed"] == f"/api/class/{code}/live?lesson=logistic"
    assert data["run"] == run.run_id and data["status"] == run.status
    deadline = time.monotonic() + 20
    while relay.teacher_run(code, "logistic") is None:
        assert time.monotonic() < deadline, "the teacher's finished run was never kept for its followers"
        time.sleep(0.05)
    student.run()  # the teacher's run has ended: its replay is under the chart, to play at the student's pace
    [replay] = [json.loads(e.proto.spec) for e in student.get("plotly_chart") if "logistic_follow_replay" in e.proto.id]
    assert replay["frames"] and replay["frames"][-1]["name"] == str(run.view()[0][-1].iteration)


def _runs_end_before_their_page_draws(monkeypatch) -> None:
    """Every run Train starts has ended when its page's script draws it (a short run at max speed on a busy
    server): the run's own start, then a wait for its end, inside Train's callback."""
    from studio.runner import LiveRun

    start = LiveRun.start

    def start_and_end(run):
        start(run)
        run.join(30)
        return run

    monkeypatch.setattr(LiveRun, "start", start_and_end)


@pytest.mark.parametrize("page, lesson, steps", [("pages/logistic.py", "logistic", "lr_iters"),
                                                 ("pages/two_layer.py", "two_layer", "tl_steps"),
                                                 ("pages/optimizers.py", "optimizers", "op_steps")])
def test_a_teacher_s_run_that_ends_before_its_page_draws_it_reaches_the_class(room_store, new_app, monkeypatch,
                                                                               page, lesson, steps):
    _runs_end_before_their_page_draws(monkeypatch)
    teacher = new_app()
    teacher.switch_page(page).run()
    teacher.number_input(key=steps).set_value(30).run()
    teacher.button(key=f"{lesson}_train").click().run()  # trained before the class began: not the class's run
    teacher.sidebar.button(key="room_start").click().run()
    code, _ = teacher.session_state["room_teacher"]
    time.sleep(relay.LOOK_EVERY * 2)
    assert relay.newest(code) is None and room_store.room(code).run_id in ("", None)

    student = _student(new_app, code)
    teacher.button(key=f"{lesson}_train").click().run()
    run = teacher.session_state[f"{lesson}_run"]
    assert run.status == "done" and not teacher.exception  # it ended in Train's callback, before the page drew
    deadline = time.monotonic() + 20
    while relay.teacher_run(code, lesson) is None:
        assert time.monotonic() < deadline, "the teacher's run that ended before it was drawn never reached the class"
        time.sleep(0.05)
    got = relay.newest(code)
    assert got[0] == lesson and got[1]["run"] == run.run_id and got[1]["status"] == "done"
    assert room_store.room(code).run_id == run.run_id
    student.run()
    assert not student.exception
    replays = [e for e in student.get("plotly_chart") if f"{lesson}_follow_replay" in e.proto.id]
    assert replays, "the follower's page has no replay of the teacher's run"


def test_the_relay_answers_as_the_live_feed_does(room_store, new_app):
    teacher, (code, key) = _teacher(new_app)
    path = f"/api/class/{code}/live"
    assert _get(relay.follow_route, path, "lesson=logistic") == (200, {"waiting": True, "version": 1})
    teacher.switch_page("pages/logistic.py").run()
    teacher.number_input(key="lr_iters").set_value(40).run()
    teacher.select_slider(key="logistic_speed").set_value("max").run()
    teacher.button(key="logistic_train").click().run()
    run = wait_for_run(teacher, "logistic")
    deadline = time.monotonic() + 20
    while (got := relay.newest(code)) is None or got[1]["status"] == "running":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(relay.LOOK_EVERY * 2)
    status, whole = _get(relay.follow_route, path, "lesson=logistic&run=another")
    assert status == 200 and whole["full"] and whole["run"] == run.run_id and whole["states"]
    newest = whole["states"][-1]["seq"]
    status, since = _get(relay.follow_route, path, f"lesson=logistic&run={run.run_id}&after={newest}"
                                                   f"&layout={whole['layout_id']}")
    assert status == 200 and since["states"] == [] and since["run"] == run.run_id  # nothing new: held, then idle
    status, older = _get(relay.follow_route, path, f"lesson=logistic&run={run.run_id}&after=-1"
                                                   f"&layout={whole['layout_id']}")
    assert [s["seq"] for s in older["states"]] == [s["seq"] for s in whole["states"]]
    assert _get(relay.follow_route, path, "lesson=two_layer&run=x")[1]["waiting"]  # another lesson's chart
    version = room_store.room(code).version
    assert _get(relay.watch_route, f"/api/class/{code}/watch", f"what=version&since={version - 1}") == (
        200, {"value": version})
    assert _get(relay.watch_route, f"/api/class/{code}/watch", "what=news&since=-3") == (200, {"value": 0})
    room_store.end(code, key)
    time.sleep(relay.LOOK_EVERY * 2)
    assert _get(relay.follow_route, path, "lesson=logistic")[0] == 404
    assert _get(relay.watch_route, f"/api/class/{code}/watch", f"what=version&since={version}")[1] == {"value": -1}
    assert _get(relay.follow_route, "/api/class/0OIL1/live")[0] == 404  # never a code


def test_try_it_yourself_keeps_the_settings_and_gives_back_train(room_store, new_app):
    teacher, (code, _) = _teacher(new_app)
    teacher.switch_page("pages/logistic.py").run()
    teacher.number_input(key="lr_lr").set_value(0.2).run()
    student = _student(new_app, code)
    student.button(key="room_try").click().run()
    assert not student.exception and student.session_state["lr_lr"] == 0.2
    assert [b for b in student.button if b.key == "logistic_train"]
    teacher.number_input(key="lr_lr").set_value(0.3).run()  # the teacher's changes no longer reach this page
    student.run()
    assert student.session_state["lr_lr"] == 0.2
    student.button(key="room_follow_again").click().run()
    assert student.session_state["lr_lr"] == 0.3 and not [b for b in student.button if b.key == "logistic_train"]


def test_a_student_who_opens_another_lesson_stops_following(room_store, new_app):
    teacher, (code, _) = _teacher(new_app)
    teacher.switch_page("pages/logistic.py").run()
    student = _student(new_app, code)
    assert _title(student).startswith("3 ·")
    student.switch_page("pages/two_layer.py").run()
    assert not student.exception and _title(student).startswith("2 ·")
    assert any("no longer follow" in s.value for s in student.sidebar.success)
    assert "working on your own" in " ".join(m.value for m in student.markdown)


def test_a_class_that_ends_tells_its_students(room_store, new_app):
    teacher, (code, _) = _teacher(new_app)
    teacher.switch_page("pages/logistic.py").run()
    student = _student(new_app, code)
    teacher.switch_page("pages/home.py").run()
    teacher.sidebar.button(key="room_end").click().run()
    student.run()
    assert not student.exception
    assert any(f"Class {code} has ended" in s.value for s in student.sidebar.success)
    assert "room_student" not in student.session_state


def test_the_fast_lane_answers_the_relay_ahead_of_streamlit_s_middleware(room_store):
    room, _ = room_store.start()
    lane = feed.FastLane(lambda *args: pytest.fail("passed on"), routes=feed.ROUTES + relay.ROUTES)
    sent = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": f"/api/class/{room.code}/watch",
             "query_string": b"what=news&since=-5", "headers": []}
    asyncio.run(lane(scope, None, send))
    assert sent[0]["status"] == 200 and json.loads(sent[1]["body"]) == {"value": 0}


def test_try_it_yourself_after_the_teacher_s_run_keeps_it_as_a_ghost(room_store, new_app):
    _, student, code, _ = _a_short_teacher_run(new_app)
    deadline = time.monotonic() + 20
    while relay.teacher_ghost(code, "logistic") is None:
        assert time.monotonic() < deadline, "the teacher's finished run was never kept"
        time.sleep(0.05)
    student.run()
    student.button(key="room_try").click().run()
    student.number_input(key="lr_lr").set_value(0.5).run()
    student.select_slider(key="logistic_speed").set_value("max").run()
    student.button(key="logistic_train").click().run()
    wait_for_run(student, "logistic")
    spec = json.dumps([json.loads(e.proto.spec) for e in student.get("plotly_chart")])
    assert "the teacher's run" in spec  # the student's own run, beside the teacher's
    student.button(key="logistic_clear_ghosts").click().run()
    spec = json.dumps([json.loads(e.proto.spec) for e in student.get("plotly_chart")])
    assert "the teacher's run" not in spec


def _reloaded(new_app, student):
    """The same browser in a new session (a reload): its id comes back from its cookie."""
    at = new_app()
    at.session_state["room_browser"] = student.session_state["room_browser"]
    at.run()
    return at


def test_a_reload_gives_back_the_student_s_class_last_run_and_lesson_6_code(room_store, new_app, monkeypatch):
    from studio.room import memory

    monkeypatch.setattr(memory, "known_browser", lambda: True)  # AppTest has no cookies: the id is set below
    teacher, (code, _) = _teacher(new_app)
    student = _student(new_app, code)
    student.switch_page("pages/logistic.py").run()
    student.number_input(key="lr_iters").set_value(50).run()
    student.number_input(key="lr_lr").set_value(0.3).run()
    student.select_slider(key="logistic_speed").set_value("max").run()
    student.button(key="logistic_train").click().run()
    run = wait_for_run(student, "logistic")
    student.switch_page("pages/write_function.py").run()
    student.toggle(key="wf_plain").set_value(True).run()
    [box] = [t for t in student.text_area if t.key.startswith("wf_text_")]
    box.input(box.value + "\n# mine\n").run()
    student.button(key="wf_check").click().run()

    again = _reloaded(new_app, student)
    assert again.session_state["room_student"].code == code  # back in the class
    again.switch_page("pages/logistic.py").run()
    back = again.session_state["logistic_run"]
    assert back.run_id == run.run_id and back.status == run.status and back.count == len(run.view()[0])
    assert [s.loss for s in back.view()[0]] == pytest.approx([s.loss for s in run.view()[0]])
    assert any("the reload brought it back" in c.value for c in again.caption)
    again.switch_page("pages/write_function.py").run()
    assert "# mine" in next(iter(again.session_state["wf_sources"].values()))


def test_try_it_yourself_mid_run_goes_on_from_the_teacher_s_iteration_and_weights(room_store, new_app):
    teacher, (code, _) = _teacher(new_app)
    teacher.switch_page("pages/logistic.py").run()
    teacher.number_input(key="lr_iters").set_value(400).run()
    teacher.number_input(key="lr_stop").set_value(1.0).run()  # never reached: all 400 iterations
    teacher.select_slider(key="logistic_speed").set_value("50").run()
    student = _student(new_app, code)
    teacher.button(key="logistic_train").click().run()
    deadline = time.monotonic() + 30
    while True:
        got = relay.newest(code)
        if got is not None and got[1]["status"] == "running" and got[1]["states"] and got[1]["states"][-1]["step"] > 30:
            break
        assert time.monotonic() < deadline, "the teacher's run never reached the relay"
        time.sleep(0.05)
    student.run()
    student.button(key="room_try").click().run()
    fork = student.session_state["room_fork"]["logistic"]
    assert fork["step"] > 30 and len(fork["weights"]) == 3
    assert any(f"iteration {fork['step']:,}" in i.value for i in student.info)
    student.select_slider(key="logistic_speed").set_value("max").run()
    student.button(key="logistic_train").click().run()
    mine = wait_for_run(student, "logistic")
    assert mine.config.start == tuple(fork["weights"]) and mine.view()[0][0].iteration == fork["step"] + 1
    teacher.session_state["logistic_run"].stop()
    deadline = time.monotonic() + 20
    while relay.teacher_ghost(code, "logistic") is None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    student.run()  # the teacher's run has ended: its ghost is beside the student's run
    spec = json.dumps([json.loads(e.proto.spec) for e in student.get("plotly_chart")])
    assert "the teacher's run" in spec
    student.button(key="lr_unfork").click().run()
    assert "logistic" not in student.session_state["room_fork"]


def test_asking_for_codes_of_no_class_keeps_nothing(room_store):
    from studio.room.classes import ALPHABET

    before = len(relay._seen)
    for i in range(200):
        code = "".join(ALPHABET[(i * 7 + k) % len(ALPHABET)] for k in range(5))
        if room_store.room(code) is None:
            assert _get(relay.watch_route, f"/api/class/{code}/watch", "what=version&since=5") == (200, {"value": -1})
    assert len(relay._seen) == before


def _playground_reference(config, steps: int):
    """The teacher's run, uninterrupted: a fresh model of the teacher's settings, ``steps`` steps on."""
    from autodiff_core.playground import Playground

    pg = Playground(config)
    for _ in range(steps):
        pg.step()
    return pg


def test_try_it_yourself_mid_run_in_the_playground_goes_on_from_the_teacher_s_state(room_store, new_app):
    teacher, (code, _) = _teacher(new_app)
    teacher.switch_page("pages/playground.py").run()
    teacher.select_slider(key="pg_speed").set_value("50").run()
    student = _student(new_app, code)
    assert _title(student).startswith("5 ·")
    teacher.button(key="pg_play").click().run()
    run = teacher.session_state["playground_run"]
    deadline = time.monotonic() + 30
    while (shared := relay.fork_state(code, "playground", run.run_id)) is None or shared["step"] < 20:
        assert time.monotonic() < deadline, "the teacher's state never reached the class"
        time.sleep(0.05)
    student.run()
    student.button(key="room_try").click().run()
    assert not student.exception
    fork = student.session_state["room_fork"]["playground"]
    pg = student.session_state["pg_session"].model
    assert fork["step"] >= 20 and pg.steps_done == pg.forked_at == fork["step"]
    assert any(f"the teacher's step {fork['step']:,}" in i.value for i in student.info)
    assert not [b for b in student.button if b.key == "playground_send"]  # the teacher's state is not the student's
    reference = _playground_reference(run.config, fork["step"])  # the teacher's run, had nobody forked it
    assert all(torch.equal(a, b) for a, b in zip(pg.params, reference.params, strict=True))
    teacher.button(key="pg_pause").click().run()

    student.button(key="pg_step").click().run()  # the student trains on, as the teacher's run would have
    student.button(key="pg_step").click().run()
    reference.step()
    reference.step()
    assert pg.steps_done == fork["step"] + 2 and [b for b in student.button if b.key == "playground_send"]
    assert all(torch.equal(a, b) for a, b in zip(pg.params, reference.params, strict=True))
    assert student.session_state["pg_session"].history[-1].train_loss == reference.snapshot().train_loss
    assert not [b for b in student.get("download_button") if "pg_export" in b.proto.id]  # a script starts at 0
    student.button(key="pg_unfork").click().run()  # back to the student's own start
    assert student.session_state["pg_session"].model.steps_done == 0
    assert "playground" not in student.session_state["room_fork"]
    assert not any("the teacher's step" in i.value for i in student.info)
    student.button(key="pg_step").click().run()
    assert [b for b in student.get("download_button") if "pg_export" in b.proto.id]


def test_a_reload_gives_back_the_student_s_lesson_5_model_where_its_last_run_left_it(room_store, new_app,
                                                                                      monkeypatch):
    from studio.room import memory

    monkeypatch.setattr(memory, "known_browser", lambda: True)  # AppTest has no cookies: the id is set below
    _, (code, _) = _teacher(new_app)
    student = _student(new_app, code)
    student.switch_page("pages/playground.py").run()
    student.button(key="pg_step").click().run()
    student.select_slider(key="pg_speed").set_value("200").run()
    student.button(key="pg_play").click().run()
    time.sleep(0.5)
    student.button(key="pg_pause").click().run()
    wait_for_run(student, "playground", timeout=10)
    mine = student.session_state["pg_session"]
    assert mine.model.steps_done > 1

    again = _reloaded(new_app, student)
    again.switch_page("pages/playground.py").run()
    assert not again.exception
    back = again.session_state["pg_session"]
    assert back.model.steps_done == mine.model.steps_done and back.brought_back == mine.model.steps_done
    assert all(torch.equal(a, b) for a, b in zip(back.model.params, mine.model.params, strict=True))
    assert [s.step for s in back.curve] == [s.step for s in mine.curve]  # the curves from step 0
    assert back.history[0].step == 0 and back.history[-1] == mine.history[-1]
    assert any("the reload brought it back" in c.value for c in again.caption)
    assert payload(again, "playground_live")["states"][-1]["step"] == mine.model.steps_done
    for at in (student, again):  # and it trains on as it would have without the reload
        at.button(key="pg_step").click().run()
    assert back.history[-1].train_loss == mine.history[-1].train_loss
    assert not any("the reload brought it back" in c.value for c in again.caption)


def test_followers_charts_take_their_own_view_s_scale_not_the_presenting_teacher_s(room_store, new_app):
    from autodiff_core.figures.theme import FONT_SIZE, PRESENT_FONT
    from studio.presenter import PLOT_HEIGHT

    teacher, (code, _) = _teacher(new_app)
    teacher.toggle(key="present").set_value(True).run()
    teacher.switch_page("pages/playground.py").run()
    teacher.select_slider(key="pg_speed").set_value("20").run()
    student = _student(new_app, code)
    teacher.button(key="pg_play").click().run()
    deadline = time.monotonic() + 30
    while (got := relay.newest(code)) is None or not got[1]["states"] or not got[1].get("flow"):
        assert time.monotonic() < deadline, "the teacher's run never reached the relay"
        time.sleep(0.05)
    mine = payload(teacher, "playground_live")  # the projector's chart: the presenter's scale
    assert mine["layout"]["font"]["size"] == PRESENT_FONT and mine["height"] == PLOT_HEIGHT and "plain" not in mine
    assert mine["diagram"]["font"]["size"] == mine["flow"]["layout"]["font"]["size"] == PRESENT_FONT

    def plain(data):
        assert data["layout"]["font"]["size"] == FONT_SIZE and data["height"] != PLOT_HEIGHT and "plain" not in data
        assert data["diagram"]["font"]["size"] == data["flow"]["layout"]["font"]["size"] == FONT_SIZE

    plain(got[1])  # what the class reads
    student.run()
    chart = payload(student, "playground_live")
    plain(chart)
    assert chart["feed"] == f"/api/class/{code}/live?lesson=playground"
    time.sleep(relay.LOOK_EVERY * 2)
    path = f"/api/class/{code}/live"
    status, whole = _get(relay.follow_route, path, "lesson=playground&run=another")
    assert status == 200 and whole["full"]
    plain(whole)
    status, big = _get(relay.follow_route, path, "lesson=playground&run=another&present=1")
    assert big["layout"]["font"]["size"] == PRESENT_FONT and big["height"] == PLOT_HEIGHT
    student.toggle(key="present").set_value(True).run()  # a follower in the presenter view: its own scale, big
    chart = payload(student, "playground_live")
    assert chart["layout"]["font"]["size"] == PRESENT_FONT and chart["feed"].endswith("&present=1")
    assert chart["layout_id"] == big["layout_id"]  # the relay's answers at that scale keep the chart's layout
    teacher.button(key="pg_pause").click().run()
