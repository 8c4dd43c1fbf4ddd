"""The sandbox is fair to every student: sessions take turns for its workers, one task each at a time, so an
honest check waits behind at most one task of each other session however many that session sends; and a
session that checks too often is told when it may check again."""

from __future__ import annotations

import threading
import time

import pytest

from autodiff_core.grading.channel import Busy, FairSlots

pytestmark = pytest.mark.timeout(60)


def _holder(slots: FairSlots, owner: str, started: list, release: threading.Event, errors: list) -> threading.Thread:
    def go():
        try:
            with slots.hold(owner):
                started.append(owner)
                release.wait(10)
        except Busy as exc:
            errors.append((owner, str(exc)))

    t = threading.Thread(target=go)
    t.start()
    return t


def _wait_for(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert condition()


def test_a_flood_from_one_session_does_not_queue_ahead_of_another():
    slots, started, errors, release = FairSlots(1, per_minute=None), [], [], threading.Event()
    threads = [_holder(slots, "hog", started, release, errors) for _ in range(6)]  # six tabs of one student
    _wait_for(lambda: started == ["hog"] and len(errors) == 5)
    assert all("previous check is still running" in e for _, e in errors)  # the others are told at once
    honest = _holder(slots, "honest", started, release, errors)
    _wait_for(lambda: slots._waiting)  # the honest check waits for the one slot...
    release.set()
    for t in [*threads, honest]:
        t.join(10)
    assert started == ["hog", "honest"]  # ...behind exactly one task of the other session


def test_sessions_are_served_in_the_order_they_asked():
    slots, started, errors, release = FairSlots(1, per_minute=None), [], [], threading.Event()
    first = _holder(slots, "a", started, release, errors)
    _wait_for(lambda: started == ["a"])
    waiting = []
    for owner in ("b", "c", "d"):
        waiting.append(_holder(slots, owner, started, release, errors))
        _wait_for(lambda o=owner: o in slots._waiting)
    release.set()
    for t in [first, *waiting]:
        t.join(10)
    assert started == ["a", "b", "c", "d"] and not errors


def test_a_session_that_checks_too_often_is_told_when_to_try_again():
    slots = FairSlots(2, per_minute=3)
    for _ in range(3):
        with slots.hold("eager"):
            pass
    with pytest.raises(Busy, match=r"You checked 3 times in the last minute.*try again in \d+ s"):
        with slots.hold("eager"):
            pass
    with slots.hold("someone else"):  # the limit is per session
        pass


def test_the_page_says_a_busy_check_was_not_run(monkeypatch):
    from autodiff_core.grading import judge
    from autodiff_core.grading.challenges import CHALLENGES

    class Full:
        def run(self, *args, **kwargs):
            raise Busy("Your previous check is still running: wait for its verdict, then check again.")

    verdict = judge.check(CHALLENGES["relu"].solution, "relu", sandbox=Full(), owner="x")
    assert not verdict.passed and verdict.headline == "Your code was not checked this time."
    assert "still running" in verdict.reasons[0]
