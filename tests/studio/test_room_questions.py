"""Predict, then run (AppTest): the teacher asks the class before pressing Train, students answer on their own
screens, the teacher's run closes the question, and after it the answers' histogram shows beside what happened."""

from __future__ import annotations

import json

import pytest

from autodiff_core.figures.answers import choice_counts, choice_figure, number_bins
from autodiff_core.figures.theme import PRESENT_FONT
from studio.lessons import lesson, lessons
from studio.links import plain
from studio.room import classes as rc
from studio.room import panel, questions
from studio.room.classes import Classes, Question
from studio.room.store import SQLiteStore
from tests.conftest import wait_for_run

PAGE = "pages/logistic.py"


@pytest.fixture
def room_store(tmp_path, monkeypatch):
    """Each test's classes on a store of its own."""
    c = Classes(SQLiteStore(tmp_path / "classes.sqlite3"))
    monkeypatch.setattr(panel, "classes", lambda: c)
    return c


@pytest.fixture
def teacher(room_store, new_app):
    """A teacher's session on lesson 3, teaching a new class; yields (the AppTest, code, key)."""
    room, key = room_store.start()
    at = new_app()
    at.session_state["room_teacher"] = (room.code, key)
    at.run()
    at.switch_page(PAGE).run()
    return at, room.code, key


def student(room_store, new_app, code, browser="browser-ada-0000000", name="Ada"):
    at = new_app()
    at.session_state["room_student"] = room_store.join(code, browser, f"ip-{browser}", name)
    at.run()
    at.switch_page(PAGE).run()
    return at


def texts(at) -> str:
    return " ".join(str(m.value) for m in [*at.main.markdown, *at.main.caption, *at.main.success, *at.main.info])


def main_errors(at) -> list[str]:
    return [e.value for e in at.main.error]


def ask(at, text=None, choices=None, number=False):
    if number:
        at.radio(key="ask_kind").set_value("A number").run()
    if text is not None:
        at.text_input(key="ask_text").input(text).run()
    if choices is not None:
        at.text_area(key="ask_choices").input("\n".join(choices)).run()
    at.button(key="ask_ask").click().run()
    assert not at.exception and not main_errors(at), main_errors(at)


def chart(at) -> dict:
    [el] = [e for e in at.get("plotly_chart") if "ask_result" in e.proto.id]
    return json.loads(el.proto.spec)


def test_ready_made_choices_a_student_answers_and_changes_the_answer(room_store, teacher, new_app):
    at, code, key = teacher
    assert at.text_input(key="ask_text").value == questions.CHOICE_TEXT  # ready-made in a lesson with runs
    assert at.text_area(key="ask_choices").value.splitlines() == list(questions.READY.values())
    ask(at)
    q = room_store.room(code).question
    assert (q.text, q.choices, q.lesson, q.open) == (questions.CHOICE_TEXT, tuple(questions.READY.values()),
                                                    "logistic", True)
    assert "0 answered" in texts(at)

    ada = student(room_store, new_app, code)
    assert questions.CHOICE_TEXT.replace("?", r"\?") in texts(ada)
    ada.radio(key=f"ask_pick_{q.id}").set_value("It stalls").run()
    ada.button(key="ask_send").click().run()
    assert not ada.exception and not main_errors(ada)
    assert "Your answer: **It stalls**. You can change it until the teacher's run starts." in texts(ada)
    ada.radio(key=f"ask_pick_{q.id}").set_value("The loss goes down").run()
    ada.button(key="ask_send").click().run()
    assert "Your answer: **The loss goes down**." in texts(ada)
    assert room_store.answers(code, q.id) == {"browser-ada-0000000": "The loss goes down"}
    at.run()
    assert "1 answered" in texts(at)


def test_a_number_question_and_the_run_that_closes_it(room_store, teacher, new_app):
    at, code, key = teacher
    ask(at, number=True)
    q = room_store.room(code).question
    assert (q.text, q.choices) == (questions.NUMBER_TEXT, ())
    ada = student(room_store, new_app, code)
    ada.number_input(key=f"ask_pick_{q.id}").set_value(0.25).run()
    ada.button(key="ask_send").click().run()
    assert "Your answer: **0.25**." in texts(ada) and room_store.answers(code, q.id) == {"browser-ada-0000000": 0.25}

    room_store.lead(code, key, "logistic", {}, "run-that-started")  # the teacher pressed Train
    ada.number_input(key=f"ask_pick_{q.id}").set_value(0.5)  # on the page as it was drawn, still open
    ada.button(key="ask_send").click().run()
    assert not ada.exception
    assert main_errors(ada) == ["That question is closed: the run has started."]
    assert room_store.answers(code, q.id) == {"browser-ada-0000000": 0.25}
    ada.run()
    assert "The teacher's run has started" in texts(ada) and "Your answer: **0.25**." in texts(ada)
    assert not [b for b in ada.button if b.key == "ask_send"]


def test_answers_are_rate_limited_with_a_sentence(room_store, teacher, new_app, monkeypatch):
    at, code, _ = teacher
    ask(at)
    q = room_store.room(code).question
    monkeypatch.setattr(rc, "ANSWERS_PER_MINUTE", 1)
    ada = student(room_store, new_app, code)
    for choice in ("It stalls", "The loss goes down"):
        ada.radio(key=f"ask_pick_{q.id}").set_value(choice).run()
        ada.button(key="ask_send").click().run()
    ada.button(key="ask_send").click().run()
    assert main_errors(ada) == ["Too many answers in a minute. Wait a moment."] and not ada.exception


def test_the_teacher_closes_the_question(room_store, teacher, new_app):
    at, code, _ = teacher
    ask(at)
    ada = student(room_store, new_app, code)
    at.button(key="ask_close").click().run()
    assert room_store.room(code).question is None
    assert at.button(key="ask_ask")  # the teacher can ask again
    ada.run()
    assert not [b for b in ada.button if b.key == "ask_send"]


def finished_run(at, code, key, iterations=40):
    """The teacher's short lesson-3 run, started as Train starts it; lead() as the class wiring calls it."""
    at.number_input(key="lr_iters").set_value(iterations).run()
    at.select_slider(key="logistic_speed").set_value("max").run()
    at.button(key="logistic_train").click().run()
    panel.classes().lead(code, key, "logistic", {}, at.session_state["logistic_run"].run_id)
    return wait_for_run(at, "logistic")


def test_after_the_run_the_histogram_beside_what_happened(room_store, teacher, new_app):
    at, code, key = teacher
    ask(at)
    q = room_store.room(code).question
    picks = {"a": "The loss goes down", "b": "The loss goes down", "c": "It stalls"}
    pupils = {b: student(room_store, new_app, code, browser=f"browser-{b}-000000", name=b) for b in picks}
    for b, pick in picks.items():
        pupils[b].radio(key=f"ask_pick_{q.id}").set_value(pick).run()
        pupils[b].button(key="ask_send").click().run()
    run = finished_run(at, code, key)
    assert run.status == "done"
    snaps, _ = run.view()
    first, final = snaps[0].loss, snaps[-1].loss
    expected = "down" if final < first * (1 - questions.STALL) else "stall"
    assert expected == "down"  # the tutorial's run learns

    stored = room_store.room(code).question
    assert (stored.open, stored.run_id) == (False, run.run_id)
    assert stored.outcome["kind"] == expected and stored.outcome["final"] == pytest.approx(final)
    bars = chart(at)["data"][0]
    assert bars["x"] == list(questions.READY.values()) and bars["y"] == [2, 0, 1]  # the answers, counted
    assert bars["marker"]["color"][0] != bars["marker"]["color"][2]  # what came true stands out
    said = texts(at)
    assert "What happened:" in said and "2 of 3 predicted “The loss goes down”" in said
    assert chart(at)["layout"]["xaxis"]["ticktext"][0].startswith("<span style=")  # ticked even if nobody picked it
    assert f"to {final:.4g} at step {run.last.iteration}" in stored.outcome["text"]
    assert plain(stored.outcome["text"]) in said  # the store's text, shown as text

    ada = pupils["a"]
    ada.run()  # the room's version went up with the outcome: a student's page redraws (studio.room.watch)
    assert chart(ada)["data"][0]["y"] == [2, 0, 1]
    assert "What happened:" in texts(ada) and "Your answer: **The loss goes down**." in texts(ada)


def test_a_number_question_marks_the_final_loss_on_the_histogram(room_store, teacher, new_app):
    at, code, key = teacher
    at.sidebar.toggle(key="present").set_value(True).run()  # the teacher projects the question and the result
    ask(at, number=True)
    assert any(m.value.startswith("#### **0 answered.**") for m in at.main.markdown)  # read from the back row
    q = room_store.room(code).question
    for b, guess in (("a", 0.1), ("b", 0.12), ("c", 0.6)):
        pupil = student(room_store, new_app, code, browser=f"browser-{b}-000000", name=b)
        pupil.number_input(key=f"ask_pick_{q.id}").set_value(guess).run()
        pupil.button(key="ask_send").click().run()
    run = finished_run(at, code, key)
    final = run.last.loss
    fig = chart(at)
    assert sum(fig["data"][0]["y"]) == 3
    [line] = fig["layout"]["shapes"]
    assert line["x0"] == line["x1"] == pytest.approx(final)
    assert fig["layout"]["font"]["size"] == PRESENT_FONT  # at the presenter's size
    lines = [m.value for m in at.main.markdown if "What happened" in m.value or "median guess" in m.value]
    assert len(lines) == 2 and all(line.startswith("#### ") for line in lines)
    assert "median guess: 0.12 (3 answered)" in lines[1]


def test_what_happened_in_the_question_s_words():
    assert questions.judge(0.7, 0.05, 380, diverged=False)["kind"] == "down"
    assert questions.judge(0.7, 0.69, 380, diverged=False)["kind"] == "stall"  # within STALL of the start
    assert questions.judge(0.7, 3.0, 380, diverged=False)["kind"] == "stall"  # higher, but finite
    blown = questions.judge(30_000.0, float("nan"), 12, diverged=True)
    assert (blown["kind"], blown["final"]) == ("up", None) and "by step 12 the loss was no longer" in blown["text"]
    assert questions.judge(30_000.0, 1.7e25, 3, diverged=True)["final"] is None  # a blow-up has no final loss
    assert "stopped before its end" in questions.judge(0.7, 0.5, 9, diverged=False, stopped=True)["text"]
    q = Question(id="q", text="?", choices=("the loss goes down", "Something else"), open=False, run_id="r")
    assert questions.happened(q, {"kind": "down"}) == 0  # the ready-made words, in any case
    assert questions.happened(q, {"kind": "stall"}) is None  # not offered: said in the sentence only


def test_a_number_histogram_counts_every_answer_and_spans_the_run_s_number():
    edges, counts = number_bins([0.1, 0.12, 0.6], actual=0.9)
    assert sum(counts) == 3 and edges[0] == 0.1 and edges[-1] == 0.9
    assert number_bins([2.0, 2.0], actual=None)[1] == [2]  # one value: a bar of some width around it
    assert choice_counts(["a", "b"], ["b", "b", "zz"]) == [0, 2]


def test_a_choice_s_tags_stay_text_on_the_chart():
    fig = choice_figure(["<a href='http://e.x'>click</a> me please", "no"], ["no"], happened=1).to_plotly_json()
    axis = fig["layout"]["xaxis"]
    assert "<a" not in fig["data"][0]["x"][0] and "&lt;a href='http://e.x'&gt;click&lt;/a&gt;" in fig["data"][0]["x"][0]
    assert all("<a" not in t for t in axis["ticktext"]) and "<br>" in axis["ticktext"][0]  # wrapped, escaped
    assert list(fig["data"][0]["y"]) == [0, 1]


def test_a_question_in_markdown_stays_plain_text(room_store, teacher, new_app):
    at, code, _ = teacher
    text = "**Bold** [a link](http://e.x) <b>x</b> `code`"
    ask(at, text=text, choices=["_yes_", "[no](http://e.x)"])
    shown = plain(text)
    assert f"**You asked the class:** {shown}" in texts(at)
    assert shown.startswith(r"\*\*Bold\*\* \[a link\]\(http\:\/\/e\.x\) \<b\>x\<\/b\> \`code\`")
    q = room_store.room(code).question
    ada = student(room_store, new_app, code)
    assert f"**Your teacher asks:** {shown}" in texts(ada)
    radio = ada.radio(key=f"ask_pick_{q.id}")
    assert radio.options == [plain("_yes_"), plain("[no](http://e.x)")]  # drawn escaped
    radio.set_value("[no](http://e.x)").run()
    ada.button(key="ask_send").click().run()
    assert room_store.answers(code, q.id) == {"browser-ada-0000000": "[no](http://e.x)"}


def test_a_page_for_someone_outside_a_class_reads_no_store(room_store, new_app, monkeypatch):
    asked = []
    monkeypatch.setattr(panel, "classes", lambda: asked.append("read") or room_store)
    at = new_app()
    at.run()
    at.switch_page(PAGE).run()
    at.run()
    assert not at.exception and asked == []
    assert not [b for b in at.button if b.key in ("ask_ask", "ask_send")]


@pytest.mark.parametrize("page", [x.page for x in lessons()])
def test_every_lesson_page_draws_the_bar_for_a_teacher_and_a_student(room_store, new_app, page):
    room, key = room_store.start()
    room_store.ask(room.code, key, "Which **way**?", ["up", "down"], lesson="logistic")
    at = new_app()
    at.session_state["room_teacher"] = (room.code, key)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    ada = new_app()
    ada.session_state["room_student"] = room_store.join(room.code, "browser-ada-0000000", "ip", "Ada")
    ada.run()
    ada.switch_page(page).run()
    assert not ada.exception, [e.value for e in ada.exception]
    here = page == PAGE
    assert bool([b for b in ada.button if b.key == "ask_send"]) == here  # answered on the question's lesson
    if not here:
        assert "Your teacher asks the class a question in 3 · Logistic regression." in texts(ada)
        assert "Your question is open in 3 · Logistic regression" in texts(at)
        ready = lesson(page.removeprefix("pages/").removesuffix(".py")).config is not None
        assert at.text_input(key="ask_text").value == (questions.CHOICE_TEXT if ready else "")


def test_a_run_that_blows_up_is_said_so_and_its_choice_turns_green(room_store, new_app):
    room, key = room_store.start()
    at = new_app()
    at.session_state["room_teacher"] = (room.code, key)
    at.run()
    at.switch_page("pages/two_layer.py").run()
    ask(at)
    at.number_input(key="tl_lr").set_value(1e-4).run()  # the preset "Learning rate too big"
    at.select_slider(key="two_layer_speed").set_value("max").run()
    at.button(key="two_layer_train").click().run()
    panel.classes().lead(room.code, key, "two_layer", {}, at.session_state["two_layer_run"].run_id)
    run = wait_for_run(at, "two_layer")
    assert run.status == "diverged"
    outcome = room_store.room(room.code).question.outcome
    assert (outcome["kind"], outcome["final"]) == ("up", None) and "blew up" in outcome["text"]
    assert f"the loss grew to {run.last.loss:.3g}" in outcome["text"]  # as the run's own message says
    bars = chart(at)["data"][0]
    colors = bars["marker"]["color"]
    assert bars["x"][1] == "It blows up (NaN)" and colors[1] != colors[0] == colors[2]


def test_a_store_that_fails_under_the_question_is_one_sentence(room_store, teacher, monkeypatch):
    at, code, _ = teacher
    ask(at)

    def down(*args):
        raise ConnectionError("Error 111 connecting to 10.0.0.10:6379. Connection refused.")

    monkeypatch.setattr(room_store, "answers", down)
    at.run()
    assert not at.exception and panel.UNAVAILABLE in [c.value for c in at.main.caption]
    assert at.title[0].value.startswith("3 ·")  # the lesson itself still draws


def test_a_teacher_who_reloads_mid_run_still_gets_the_question_s_outcome(room_store, new_app, monkeypatch):
    """The reload forgets the run on the teacher's page; the relay, which copies the run to the class, records what
    it did when it ends (here: the old session's run released, as the reaper releases a closed tab's)."""
    import time

    from studio.room import relay

    monkeypatch.setattr(rc, "shared", lambda: room_store)  # the relay's thread reads the class the pages read
    room, key = room_store.start()
    at = new_app()
    at.session_state["room_teacher"] = (room.code, key)
    at.run()
    at.switch_page(PAGE).run()
    ask(at)
    q = room_store.room(room.code).question
    ada = student(room_store, new_app, room.code)
    ada.radio(key=f"ask_pick_{q.id}").set_value("The loss goes down").run()
    ada.button(key="ask_send").click().run()
    at.number_input(key="lr_iters").set_value(2000).run()
    at.number_input(key="lr_stop").set_value(1.0).run()
    at.select_slider(key="logistic_speed").set_value("50").run()
    at.button(key="logistic_train").click().run()
    run = at.session_state["logistic_run"]
    deadline = time.monotonic() + 30
    while room_store.room(room.code).question.run_id != run.run_id or (run.last is None or run.last.iteration < 20):
        assert time.monotonic() < deadline, "the relay never led the class to the run"
        time.sleep(0.05)

    again = new_app()  # the teacher's reload: a new session, the key from the browser's cookie
    again.session_state["room_teacher"] = (room.code, key)
    again.run()
    again.switch_page(PAGE).run()
    assert not again.exception and "1 answered before this run" in texts(again)
    run.release()  # the old tab's session is gone: its run is stopped and its states dropped
    deadline = time.monotonic() + 20
    while not room_store.room(room.code).question.outcome:
        assert time.monotonic() < deadline, "the run's end was never recorded for the question"
        time.sleep(0.05)
    outcome = room_store.room(room.code).question.outcome
    assert outcome["kind"] == "down" and "stopped before its end" in outcome["text"]
    assert relay.newest(room.code)[1]["run"] == run.run_id
    again.run()  # the news brings the teacher's page its rerun
    assert chart(again)["data"][0]["y"] == [1, 0, 0] and "What happened:" in texts(again)


def test_numbers_that_span_decades_go_on_a_log_axis_with_bins_even_on_it():
    """Guesses of a final loss from 0.001 to 3: on a linear axis all but one share the first bar; on a log axis each
    decade has its bars, and the run's mark sits where its number is."""
    import math

    from autodiff_core.figures.answers import number_figure

    guesses = [0.001, 0.002, 0.01, 0.05, 0.3, 3.0]
    edges, counts = number_bins(guesses, actual=0.02, log=True)
    assert edges[0] == 0.001 and edges[-1] == 3.0 and sum(counts) == len(guesses)
    ratios = [b / a for a, b in zip(edges, edges[1:], strict=False)]
    assert max(ratios) == pytest.approx(min(ratios))  # equal widths on the log axis
    for g in guesses:  # each guess in the bar that covers it
        i = next(i for i, (a, b) in enumerate(zip(edges, edges[1:], strict=False)) if a <= g <= b)
        assert counts[i] >= 1
    fig = number_figure(guesses, actual=0.02).to_plotly_json()
    assert fig["layout"]["xaxis"]["type"] == "log"
    [line] = fig["layout"]["shapes"]
    assert line["x0"] == line["x1"] == 0.02  # plotly.js 4 takes a shape on a log axis in data units,
    assert fig["layout"]["annotations"][0]["x"] == pytest.approx(math.log10(0.02))  # an annotation in log10 units
    bars = fig["data"][0]
    assert [c - w / 2 for c, w in zip(bars["x"], bars["width"], strict=True)] == pytest.approx(edges[:-1])
    for linear in ([0.1, 0.12, 0.6], [-1.0, 5.0, 50.0], [0.0, 0.5, 20.0]):  # within a decade, or not all positive
        fig = number_figure(linear, actual=0.3).to_plotly_json()
        assert fig["layout"]["xaxis"]["type"] == "linear" and fig["layout"]["shapes"][0]["x0"] == 0.3
