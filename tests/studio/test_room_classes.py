"""A class's rules, on the SQLite store and on a real Redis: the teacher key, joins, the board, questions."""

from __future__ import annotations

import threading
import time

import pytest

from studio.room import classes as rc
from studio.room.classes import ALPHABET, ClassError, Classes, clean_code


@pytest.fixture
def room(store):
    c = Classes(store)
    r, key = c.start()
    return c, r, key


def test_a_code_is_short_and_unambiguous(room):
    c, r, key = room
    assert len(r.code) == 5 and set(r.code) <= set(ALPHABET)
    assert not set("0O1IL") & set(ALPHABET)
    assert clean_code(f" {r.code[:2].lower()}-{r.code[2:]} ") == r.code and clean_code("ABC") == ""
    assert key not in r.code and c.room(r.code).teacher != key  # only a hash of the key is kept


def test_only_the_teacher_key_changes_the_class(room):
    c, r, key = room
    for forged in ("", "x" * 32, key[:-1] + ("A" if key[-1] != "A" else "B"), None):
        with pytest.raises(ClassError, match="Only the teacher"):
            c.lead(r.code, forged, "logistic", {}, "run1")
        with pytest.raises(ClassError, match="Only the teacher"):
            c.end(r.code, forged)
        with pytest.raises(ClassError, match="Only the teacher"):
            c.delete(r.code, forged)
        with pytest.raises(ClassError, match="Only the teacher"):  # before anything about the question itself
            c.ask(r.code, forged, "")
    led = c.lead(r.code, key, "logistic", {"lr_lr": "0.1"}, "run1")
    assert (led.lesson, led.settings, led.run_id) == ("logistic", {"lr_lr": "0.1"}, "run1")
    assert led.version > r.version
    assert c.lead(r.code, key, "logistic", {"lr_lr": "0.1"}, "run1").version == led.version  # nothing changed


def test_a_lead_that_names_no_run_keeps_the_run_the_class_follows(room):
    """A teacher's page names where it is; the run stays the one its relay named (not one the page read before)."""
    c, r, key = room
    c.lead(r.code, key, "logistic", {}, "run1")
    led = c.lead(r.code, key, "logistic", {"lr_lr": "0.1"})
    assert (led.settings, led.run_id) == ({"lr_lr": "0.1"}, "run1")


class SlowRoomReads:
    """A store whose first read of the room, in the thread named ``slow``, waits until another thread's change is
    done (1 s at most: one that waits for this change to end never is): the moment between a change's read and its
    write, held open."""

    def __init__(self, store, code: str) -> None:
        self.store, self.room_key, self.other_done = store, f"class:{code}", threading.Event()
        self.held = False

    def __getattr__(self, name):
        return getattr(self.store, name)

    def get(self, key):
        value = self.store.get(key)
        if key == self.room_key and threading.current_thread().name == "slow" and not self.held:
            self.held = True
            self.other_done.wait(1.0)
        return value


def test_a_pages_lead_and_its_runs_relay_take_turns(store):
    """The teacher's page leads (lesson and settings) while the relay of the run it just started names that run:
    the class follows the run. Interleaved, the page wrote back the room it had read before the relay's write, and
    the followers' pages said "The teacher's run shows here when the teacher presses Train" for the whole run."""
    r, key = Classes(store).start()
    slow = SlowRoomReads(store, r.code)
    c = Classes(slow)
    assert store.get(slow.room_key) is not None  # the key the wrapper holds open is the room's
    page = threading.Thread(target=c.lead, args=(r.code, key, "logistic", {"lr_lr": "0.1"}), name="slow")
    page.start()
    while not slow.held:
        time.sleep(0.001)

    def relay():
        c.lead(r.code, key, "logistic", {"lr_lr": "0.1"}, "run-7")
        slow.other_done.set()

    relaying = threading.Thread(target=relay)
    relaying.start()
    page.join(5)
    relaying.join(5)
    assert c.room(r.code).run_id == "run-7"


def test_joining(room):
    c, r, _ = room
    a = c.join(r.code.lower(), "browser-a", "10.0.0.1", "Ada")
    b = c.join(r.code, "browser-b", "10.0.0.2")
    assert (a.shown, b.shown) == ("Ada", "Student 2")
    again = c.join(r.code, "browser-a", "10.0.0.1")  # a reload: the same student, the same number
    assert (again.number, again.shown) == (1, "Ada")
    assert c.head_count(r.code) == 2
    with pytest.raises(ClassError, match="no class with that code"):
        c.join("ZZZZZ", "browser-c", "10.0.0.3")


def test_a_nickname_is_bounded_plain_text(room):
    c, r, _ = room
    with pytest.raises(ClassError, match="at most 20"):
        c.join(r.code, "b", "ip", "x" * 10_000)
    s = c.join(r.code, "b2", "ip2", "<b>Ada</b>\x00\u202e\n")
    assert s.name == "<b>Ada</b>" and len(s.name) <= rc.MAX_NAME  # kept as text, control characters gone


def test_joins_are_rate_limited_per_client(room):
    c, r, _ = room
    refused = 0
    for i in range(1000):
        try:
            c.join("AAAAA" if i % 2 else r.code, f"bot-{i}", "10.6.6.6")
        except ClassError as exc:
            refused += "Too many tries" in str(exc)
    assert refused >= 1000 - rc.JOINS_PER_MINUTE
    assert c.head_count(r.code) <= rc.JOINS_PER_MINUTE
    assert c.join(r.code, "someone-else", "10.0.0.9").number >= 1  # another client is not blocked


def test_the_class_is_full_at_its_cap(room, monkeypatch):
    c, r, _ = room
    monkeypatch.setattr(rc, "MAX_STUDENTS", 3)
    for i in range(3):
        c.join(r.code, f"s{i}", f"ip{i}")
    with pytest.raises(ClassError, match="full: it has 3"):
        c.join(r.code, "s3", "ip3")


def _entry(run="r1", loss=0.5, lr=0.01):
    return {"lesson": "logistic", "run_id": run, "settings": {"lr_lr": lr}, "figures": {"loss": loss, "acc": 0.9}}


def test_the_board_takes_one_submission_per_run(room):
    c, r, _ = room
    a = c.join(r.code, "a", "ip")
    sent = c.submit(a, r.code, _entry())
    assert sent["figures"] == {"loss": 0.5, "acc": 0.9} and sent["settings"] == {"lr_lr": "0.01"}
    with pytest.raises(ClassError, match="already sent"):
        c.submit(a, r.code, _entry())
    c.submit(a, r.code, _entry(run="r2", loss=float("nan")))  # a diverged run goes up, its loss as no number
    assert [s["figures"]["loss"] for s in c.submissions(r.code)] == [0.5, None]


def test_a_submission_to_another_class_is_refused(store):
    c = Classes(store)
    mine, _ = c.start()
    other, _ = c.start()
    a = c.join(mine.code, "a", "ip")
    with pytest.raises(ClassError, match="only send to the class you joined"):
        c.submit(a, other.code, _entry())
    forged = rc.Student(code=other.code, id="a", number=1, name="")
    with pytest.raises(ClassError, match="only send to the class you joined"):
        c.submit(forged, other.code, _entry())
    assert c.submissions(other.code) == []


def test_predict_then_run(room):
    c, r, key = room
    a, b = c.join(r.code, "a", "ip"), c.join(r.code, "b", "ip")
    with pytest.raises(ClassError, match="2 to 6 choices"):
        c.ask(r.code, key, "What will the loss do?", ["goes down"])
    q = c.ask(r.code, key, "What will the loss do?", ["goes down", "blows up", "stalls"]).question
    c.answer(a, r.code, q.id, "blows up")
    c.answer(a, r.code, q.id, "goes down")  # a changed mind: the last answer counts
    c.answer(b, r.code, q.id, "stalls")
    with pytest.raises(ClassError, match="Pick one"):
        c.answer(b, r.code, q.id, "<script>")
    assert c.answers(r.code, q.id) == {"a": "goes down", "b": "stalls"}
    started = c.lead(r.code, key, "logistic", {}, "run-1")
    assert started.question.run_id == "run-1" and not started.question.open
    with pytest.raises(ClassError, match="closed"):
        c.answer(b, r.code, q.id, "goes down")
    n = c.ask(r.code, key, "Final loss?").question
    with pytest.raises(ClassError, match="finite"):
        c.answer(a, r.code, n.id, "inf")
    c.answer(a, r.code, n.id, "0.25")
    assert c.answers(r.code, n.id) == {"a": 0.25}


def test_ending_and_deleting(room):
    c, r, key = room
    a = c.join(r.code, "a", "ip")
    c.submit(a, r.code, _entry())
    c.end(r.code, key)
    assert c.room(r.code).over
    with pytest.raises(ClassError, match="ended"):
        c.join(r.code, "b", "ip")
    with pytest.raises(ClassError, match="ended"):
        c.submit(a, r.code, _entry(run="r2"))
    assert c.delete(r.code, key) >= 3
    assert c.room(r.code) is None and c.submissions(r.code) == []


def test_an_idle_class_ends_by_itself(room, monkeypatch):
    c, r, _ = room
    later = time.time() + rc.IDLE + 1
    monkeypatch.setattr(rc.time, "time", lambda: later)
    assert c.room(r.code).over
    with pytest.raises(ClassError, match="ended"):
        c.join(r.code, "a", "ip")


def test_submissions_and_answers_are_news_for_the_teacher_not_for_followers(room):
    c, r, key = room
    ada = c.join(r.code, "browser-ada-0000000", "1.2.3.4", "Ada")
    version = c.room(r.code).version
    assert c.news(r.code) == 0
    c.submit(ada, r.code, {"lesson": "logistic", "run_id": "a1", "settings": {}, "figures": {"loss": 0.1}})
    q = c.ask(r.code, key, "Where does the loss go?", ["down", "up"]).question
    version = c.room(r.code).version  # asking is a change every follower's page shows
    c.answer(ada, r.code, q.id, "down")
    assert c.news(r.code) == 2 and c.room(r.code).version == version  # students' pages do not redraw for these


def test_the_teacher_records_what_the_predicted_run_did(room):
    c, r, key = room
    a = c.join(r.code, "a", "ip")
    q = c.ask(r.code, key, "What will the loss do?", ["goes down", "blows up"], lesson="logistic").question
    said = {"kind": "down", "first": 0.69, "final": 0.05, "step": 380, "text": "The loss went down."}
    with pytest.raises(ClassError, match="not waiting for its run"):
        c.settle(r.code, key, q.id, said)  # still open: the run has not started
    c.lead(r.code, key, "logistic", {}, "run-1")
    with pytest.raises(ClassError, match="Only the teacher"):
        c.settle(r.code, "forged", q.id, said)
    with pytest.raises(ClassError, match="not an outcome"):
        c.settle(r.code, key, q.id, {**said, "kind": "<b>won</b>"})
    version = c.room(r.code).version
    settled = c.settle(r.code, key, q.id, {**said, "first": float("nan"), "step": True, "text": " Went \x00 down"})
    assert settled.version > version  # every student's page shows it
    stored = c.room(r.code).question
    assert stored.outcome == {"kind": "down", "first": None, "final": 0.05, "step": 0, "text": "Went down"}
    assert (stored.run_id, stored.open) == ("run-1", False)
    assert c.settle(r.code, key, q.id, {"kind": "up"}).question.outcome == stored.outcome  # once
    with pytest.raises(ClassError, match="closed"):
        c.answer(a, r.code, q.id, "blows up")
