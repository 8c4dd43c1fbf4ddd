"""The server's warm-up gives way to pages: between steps, lesson 4's runs wait while a page's script runs, unless
that page waits for the very run (studio/boot.py, autodiff_core/stopping.py, studio/xray_runs.py)."""

import threading
import time

import pytest

from autodiff_core import stopping
from studio import boot, xray_runs


@pytest.fixture(autouse=True)
def no_script_going(monkeypatch):
    monkeypatch.setitem(boot._scripts, "began", 0.0)
    monkeypatch.setitem(boot._scripts, "ended", 0.0)
    yield
    stopping.give_way_while(None)


def test_a_checkpoint_waits_while_busy():
    answers = iter([True, True, True, False])
    slept = []
    stopping.give_way_while(lambda: next(answers))
    real = time.sleep
    try:
        stopping.time.sleep = slept.append
        stopping.checkpoint()
    finally:
        stopping.time.sleep = real
    assert slept == [stopping.GIVE_WAY] * 3


def test_unbound_it_never_waits():
    stopping.give_way_while(None)
    t0 = time.perf_counter()
    for _ in range(1000):
        stopping.checkpoint()
    assert time.perf_counter() - t0 < 1.0


def test_giving_way_means_a_script_is_going_and_nobody_waits():
    may = [True]
    busy = boot.giving_way(lambda: may[0])
    assert not busy()  # no script run going
    boot.script_began()
    assert busy()
    may[0] = False  # a page waits for the run: go on
    assert not busy()
    may[0] = True
    boot.script_ended()
    assert not busy()


def test_it_gives_way_for_at_most_so_long():
    boot.script_began()
    busy = boot.giving_way(at_most=0.05)
    assert sum(busy() for _ in range(100)) == round(0.05 / stopping.GIVE_WAY)


def test_a_page_that_waits_for_the_run_gets_it():
    """The warm-up computes a run and gives way to a page's script run; that page asks for the same run. It must
    not wait for a warm-up that waits for it: it gets the run, computed once."""
    config = xray_runs.zero_grad_config(1.3, "cpu", "float32")  # a config nobody computed before
    xray_runs.zero_grad_runs.cache_clear()
    boot.script_began()  # a page's script run is going, and stays going
    started = threading.Event()

    def warm():
        stopping.give_way_while(boot.giving_way(lambda: not xray_runs.someone_waits()))
        started.set()
        xray_runs.zero_grad_runs(config)

    thread = threading.Thread(target=warm, daemon=True)
    thread.start()
    started.wait(5)
    time.sleep(0.3)  # it has begun and is giving way
    got = []
    page = threading.Thread(target=lambda: got.append(xray_runs.zero_grad_runs(config)), daemon=True)
    page.start()
    page.join(60)
    thread.join(60)
    assert got and not page.is_alive() and not thread.is_alive()
    assert xray_runs.zero_grad_runs.cache_info().misses == 1


def test_while_a_page_runs_the_warm_up_waits(monkeypatch):
    from autodiff_core import logistic

    steps = []
    monkeypatch.setattr(logistic, "checkpoint", lambda: (steps.append(1), stopping.checkpoint()))
    config = xray_runs.zero_grad_config(1.2, "cpu", "float32")
    xray_runs.zero_grad_runs.cache_clear()
    boot.script_began()
    done, answers = threading.Event(), []
    busy = boot.giving_way(lambda: not xray_runs.someone_waits())

    def warm():
        stopping.give_way_while(lambda: answers.append(busy()) or answers[-1])
        xray_runs.zero_grad_runs(config)
        done.set()

    threading.Thread(target=warm, daemon=True).start()
    time.sleep(1.0)
    assert len(steps) == 1 and answers and all(answers), "the run went past a step while a page's script ran"
    assert not done.is_set()
    boot.script_ended()
    assert done.wait(60)
    assert not all(answers) and len(steps) > 100
