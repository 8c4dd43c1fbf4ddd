"""Small runs on the CPU train in the server's trainer processes (studio.trainers, autodiff_core.pool): the same
snapshots as the engine in this process, shown on the same schedule; Stop, a lost process and a server that
goes away each end cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from functools import partial
from operator import attrgetter
from pathlib import Path

import pytest
import torch

from autodiff_core import LogisticConfig, TwoLayerConfig, train_logistic, train_two_layer
from studio import budget, trainers, turns
from studio.runner import LiveRun
from tests.conftest import process_alive

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pool():
    """One real trainer process, started as a server starts it."""
    pool = trainers.Trainers()
    assert pool.start(1) == 1
    assert pool.trainers[0].ready.wait(120), "the trainer process never said it was ready"
    yield pool
    pool.close()


@pytest.fixture(autouse=True)
def one_thread():
    """A server computes on one thread (studio.boot), as its trainer processes do: a norm summed by several
    threads differs in its last digits."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def use(pool, monkeypatch):
    monkeypatch.setattr(trainers, "TRAINERS", pool)
    monkeypatch.setattr(budget, "BUDGET", budget.Budget())
    monkeypatch.setattr(turns, "TURNS", turns.Turns(100))
    monkeypatch.setattr(turns, "PACED", turns.Turns(100))
    wait_for(lambda: pool.trainers and pool.trainers[0].ready.is_set(), 120)


def wait_for(condition, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def lesson3(config: LogisticConfig, speed: float | None = None) -> LiveRun:
    return LiveRun("logistic", config, partial(train_logistic, config), attrgetter("iteration"), speed=speed)


def test_a_lesson3_run_trains_in_the_trainer_process_and_shows_what_the_engine_computes_here(pool):
    config = LogisticConfig()
    run = lesson3(config, speed=400.0).start()
    wait_for(lambda: run._trainer is not None or not run.running)
    assert run._trainer is pool.trainers[0] and run.running and run.count < 380  # paced: not all at once
    run.join(30)
    assert run.status == "done" and run.view()[0] == list(train_logistic(config))  # bit for bit, every field
    assert run.view()[0][-1].iteration == 380 and not pool.trainers[0].runs


def test_full_speed_lesson2_runs_share_the_process_in_turns_and_each_is_the_engine_s():
    configs = [TwoLayerConfig(steps=60, seed=s) for s in (1, 2, 3)]
    runs = [LiveRun("two_layer", c, partial(train_two_layer, c), attrgetter("step")).start() for c in configs]
    for run in runs:
        run.join(60)
    for run, config in zip(runs, configs, strict=True):
        assert run._trainer is not None and run.status == "done"
        assert run.view()[0] == list(train_two_layer(config))


def test_a_trainer_process_runs_below_the_servers_cpu_priority(pool):
    """Where cores are short (the server's first pages while the trainer imports torch), pages come first."""
    from autodiff_core.pool import NICE

    trainer = pool.trainers[0]
    assert os.getpriority(os.PRIO_PROCESS, trainer.pid) == min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICE) > 0

def test_a_run_that_diverges_in_the_trainer_ends_diverged_with_its_sentence():
    config = TwoLayerConfig(learning_rate=1e3, steps=50)
    run = LiveRun("two_layer", config, partial(train_two_layer, config), attrgetter("step")).start()
    run.join(30)
    here = list(train_two_layer(config))
    assert run._trainer is not None and run.status == "diverged" and here[-1].diverged
    assert run.message == here[-1].message and run.view()[0][-1].step == here[-1].step


def test_stop_drops_the_run_in_the_trainer_and_keeps_what_was_shown(pool):
    run = lesson3(LogisticConfig(max_iterations=100_000, stop_accuracy=1.0, record_every=1), speed=50.0).start()
    wait_for(lambda: run.count >= 3)
    run.stop()
    shown = run.count
    run.join(5)
    time.sleep(0.3)  # snapshots still on their way are dropped, not shown
    assert run.status == "stopped" and run.count == shown and not pool.trainers[0].runs


def test_a_new_speed_reaches_the_trainer_and_both_keep_one_schedule():
    run = lesson3(LogisticConfig(max_iterations=100_000, stop_accuracy=1.0, record_every=1), speed=20.0).start()
    wait_for(lambda: run.count >= 2)
    run.set_speed(None)  # full speed from here: the trainer computes on at once, everything shows
    wait_for(lambda: run.count > 2_000)
    run.stop()
    run.join(5)
    steps = [s.iteration for s in run.view()[0]]
    assert steps == sorted(steps) and run.status == "stopped"


def test_runs_that_cannot_go_to_a_trainer_train_here():
    lam = LiveRun("logistic", LogisticConfig(), lambda: train_logistic(LogisticConfig()), attrgetter("iteration"))
    unpicklable = LiveRun("logistic", LogisticConfig(), partial(train_logistic, LogisticConfig()),
                          lambda s: s.iteration)  # its step_of cannot cross to another process
    big = TwoLayerConfig(N=2000, D_in=2000, H=500, D_out=100, steps=1)
    big_run = LiveRun("two_layer", big, partial(train_two_layer, big), attrgetter("step"))
    for run in (lam, unpicklable, big_run):
        run.start().join(120)
        assert run.status == "done" and run._trainer is None
    assert budget.estimate(big).step_seconds > trainers.SMALL_STEP


def test_a_trainer_process_that_dies_ends_its_runs_in_words_and_another_takes_its_place(pool):
    run = lesson3(LogisticConfig(max_iterations=100_000, stop_accuracy=1.0, record_every=1), speed=50.0).start()
    wait_for(lambda: run.count >= 2)
    dead = pool.trainers[0]
    os.kill(dead.pid, signal.SIGKILL)
    run.join(10)
    assert run.status == "error" and run.message == trainers.LOST
    wait_for(lambda: pool.trainers and pool.trainers[0] is not dead and pool.trainers[0].ready.is_set(), 120)


def test_a_trainer_process_ends_with_the_server_however_the_server_ends(tmp_path):
    """A server killed outright (SIGKILL: no clean-up runs) leaves no trainer process behind: each reads the end
    of its socket and exits."""
    script = tmp_path / "server.py"
    script.write_text(
        "import sys, time\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from studio.trainers import Trainers\n"
        "pool = Trainers(); pool.start(2)\n"
        "[t.ready.wait(120) for t in pool.trainers]\n"
        "print(*(t.pid for t in pool.trainers), flush=True)\n"
        "time.sleep(600)\n")
    server = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    pids = [int(p) for p in server.stdout.readline().split()]
    assert len(set(pids)) == 2 and all(process_alive(p) for p in pids)  # the first, and the fork of it
    server.kill()
    server.wait(10)
    wait_for(lambda: not any(process_alive(p) for p in pids), 60)


def test_studio_trainers_sets_how_many_processes_a_server_starts(monkeypatch):
    monkeypatch.setenv("STUDIO_TRAINERS", "0")
    assert trainers.wanted() == 0 and trainers.Trainers().start() == 0
    monkeypatch.setenv("STUDIO_TRAINERS", "three")
    assert trainers.wanted() == len(os.sched_getaffinity(0))


def test_in_a_server_the_first_run_that_wants_a_trainer_starts_them(monkeypatch):
    """A server's warm-up starts its trainers after a lull; a run before that starts them at once, and trains in
    the server meanwhile. Outside a server (a test's AppTest) no run starts a process."""
    started = []
    idle = trainers.Trainers()
    monkeypatch.setattr(idle, "start", lambda n=None: started.append(n) or 0)
    run = lesson3(LogisticConfig())
    assert idle.take(run) is None and started == []  # not a server: nothing starts
    idle.on_demand = True
    assert idle.take(run) is None and started == [None]  # trains here; the trainers are on their way
    idle.asked = True
    assert idle.take(run) is None and started == [None]  # asked once is enough
