"""A paced run computes ahead of its schedule in bursts and shows each snapshot when its time comes
(autodiff_core.pace, studio.runner): what the screen shows is what a step-by-step run would show, never sooner,
and Stop keeps what was shown."""

from __future__ import annotations

import math
import threading
import time

import pytest

from autodiff_core.pace import Pace
from studio import budget, turns
from studio.runner import LiveRun


@pytest.fixture(autouse=True)
def fresh_budget(monkeypatch):
    """An empty memory budget and free turns (runs of other tests may hold some)."""
    monkeypatch.setattr(budget, "BUDGET", budget.Budget())
    monkeypatch.setattr(turns, "TURNS", turns.Turns(100))
    monkeypatch.setattr(turns, "PACED", turns.Turns(1))


def test_the_schedule_counts_from_its_anchor_and_a_new_speed_from_the_step_shown():
    pace = Pace(10.0)
    assert pace.shown(5.0) == math.inf and pace.due(3) == -math.inf  # no anchor yet: nothing to wait for
    pace.start(100.0, 0)
    pace.start(101.0, 7)  # the first anchor stays
    assert pace.shown(100.0) == 0 and pace.shown(100.5) == pytest.approx(5) and pace.due(20) == pytest.approx(102)
    assert pace.hungry(19, 101.0, lead=1.0) and not pace.hungry(21, 101.0, lead=1.0)
    assert pace.rest_until(20, lead=1.0) == pytest.approx(101.5) and pace.rest_until(20, lead=0.0) == 102
    pace.change(None, 103.0, 30)
    assert pace.shown(103.0) == math.inf and pace.due(10**6) == -math.inf  # full speed: everything at once
    pace.change(2.0, 104.0, 40)
    assert pace.due(42) == pytest.approx(105.0)


class Counted:
    """A trainer of ``n`` steps that notes when each step was computed."""

    def __init__(self, n: int) -> None:
        self.n, self.computed = n, []

    def __call__(self):
        for i in range(self.n):
            self.computed.append(time.perf_counter())
            yield i


def wait_for(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_a_paced_run_computes_ahead_in_a_burst_and_never_shows_a_step_before_its_time():
    trainer = Counted(40)
    run = LiveRun("test", None, trainer, lambda s: s, speed=20.0, lead=1.0).start()
    wait_for(lambda: len(trainer.computed) >= 20)  # a second of the schedule, computed at once
    seen = []
    while run.running:
        shown = run.count  # read before the clock: a step shown between the two would otherwise look early
        seen.append((time.perf_counter(), shown))
        time.sleep(0.01)
    first = trainer.computed[0]
    assert len(trainer.computed) >= 20 and trainer.computed[19] - first < 0.5  # far ahead of 19 / 20 s
    for at, shown in seen:  # step k shows k / speed after the first: never sooner
        assert shown <= 1 + math.floor((at - first) * 20.0) + 1e-9
    assert run.status == "done" and run.count == 40 and run.view()[0] == list(range(40))


def test_stop_keeps_what_was_shown_and_drops_what_was_computed_ahead():
    trainer = Counted(1000)
    run = LiveRun("test", None, trainer, lambda s: s, speed=10.0, lead=2.0).start()
    wait_for(lambda: len(trainer.computed) >= 15)
    shown = run.count
    run.stop()
    run.join(2)
    assert run.status == "stopped" and not run._thread.is_alive()
    assert shown <= run.count <= shown + 1 < len(trainer.computed)  # nothing of what was computed ahead shows
    assert run.view()[0] == list(range(run.count)) and len(trainer.computed) < 40  # it rested: no more than lead


def test_full_speed_mid_run_shows_everything_computed_at_once_and_runs_on():
    trainer = Counted(300)
    run = LiveRun("test", None, trainer, lambda s: s, speed=5.0, lead=2.0).start()
    wait_for(lambda: len(trainer.computed) >= 10)
    assert run.count < 5
    run.set_speed(None)
    run.join(5)
    assert run.status == "done" and run.count == 300


def test_a_run_without_a_lead_computes_each_step_when_the_last_one_shows():
    """Lesson 5 shares its model with the page (Pause, the weight editor): its model is never more than the step
    in hand ahead of the screen."""
    trainer = Counted(6)
    run = LiveRun("test", None, trainer, lambda s: s, speed=20.0, lead=0.0).start()
    run.join(5)
    first = trainer.computed[0]
    assert run.status == "done" and run.count == 6
    for i, at in enumerate(trainer.computed[1:], start=1):  # step i is computed once step i - 1 shows
        assert at - first >= (i - 1) / 20.0 - 1e-3


def test_a_run_that_diverges_ends_diverged_once_its_last_state_shows():
    class Snap:
        def __init__(self, i, diverged=False):
            self.i, self.diverged, self.message = i, diverged, "It diverged."

    def trainer():
        yield from (Snap(i) for i in range(5))
        yield Snap(5, diverged=True)

    run = LiveRun("test", None, trainer, lambda s: s.i, speed=10.0).start()
    time.sleep(0.1)
    assert run.running  # computed, but its last state is half a second away
    run.join(5)
    assert run.status == "diverged" and run.message == "It diverged." and run.count == 6


def test_many_paced_runs_share_one_thread_s_worth_of_wakeups():
    """Thirty paced runs of 40 steps each wake about once a second each, not once a step."""
    wakes = []
    original = threading.Event.wait

    def counting_wait(self, timeout=None):
        if threading.current_thread().name.startswith("train-"):
            wakes.append(1)
        return original(self, timeout)

    runs = [LiveRun("test", None, Counted(40), lambda s: s, speed=40.0) for _ in range(30)]
    threading.Event.wait = counting_wait
    try:
        for r in runs:
            r.start()
        for r in runs:
            r.join(10)
    finally:
        threading.Event.wait = original
    assert all(r.status == "done" and r.count == 40 for r in runs)
    assert len(wakes) < 30 * 8  # a step a wake would be 30 * 40
