"""Stop means stopped: a lesson-2 run that records every 50 steps stops computing within the step in hand
and hands its memory back, read from the process's RSS (never a timed assertion on the page)."""

from __future__ import annotations

import threading
import time

import pytest

from autodiff_core import TwoLayerConfig, train_two_layer
from autodiff_core.functions import bind_student_activations
from autodiff_core.stopping import Stopped, checkpoint, stop_when
from studio.runner import LiveRun


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def test_stop_ends_a_large_run_between_reports_and_frees_its_memory():
    calls = []

    def counting_relu(x):  # one call a step: how many steps the run computed
        calls.append(1)
        return x.clamp(min=0)

    bind_student_activations({"counting": counting_relu})
    try:
        # x alone is 4000 x 8000 float64 = 244 MB; a snapshot every 50 steps, as the app records a long run
        config = TwoLayerConfig(N=4000, D_in=8000, H=16, D_out=10, steps=100_000, dtype="float64",
                                learning_rate=1e-12, record_every=50, activation="counting")
        before = rss_mb()
        run = LiveRun("two_layer", config, lambda: train_two_layer(config), lambda s: s.step).start()
        deadline = time.monotonic() + 120
        while len(calls) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        during = rss_mb()
        assert during - before > 200, (before, during)  # the run holds its data
        run.stop()
        at_stop = len(calls)
        t = time.perf_counter()
        run.join(30)
        took = time.perf_counter() - t
        print(f"Stop to the run's end: {took * 1000:.0f} ms; RSS {before:.0f} -> {during:.0f} -> {rss_mb():.0f} MB")
        assert not run._thread.is_alive() and run.status == "stopped"
        assert len(calls) <= at_stop + 1  # the step in hand at most; it used to go on to step 50
        assert rss_mb() - before < 60  # and its memory is back
    finally:
        bind_student_activations(None)


def test_checkpoint_raises_only_in_the_thread_bound_to_a_set_event():
    event = threading.Event()
    stop_when(event)
    try:
        checkpoint()
        event.set()
        with pytest.raises(Stopped):
            checkpoint()
        seen = []
        other = threading.Thread(target=lambda: seen.append(checkpoint()))
        other.start()
        other.join()
        assert seen == [None]  # another thread's trainer goes on
    finally:
        stop_when(None)
    checkpoint()
