"""What the sandbox costs a student's Function in training, and what hostile runs cost everyone else.

1. Lessons 2 and 5 at their default settings, at full speed: the same code trained whole in a sandbox worker
   of the run's own (as the app does), against compiled into this process (as it used to be), alternated so
   both see the same machine load; the ratio is the sandbox's price (the target: <= 1.15x). Each sandboxed run
   includes starting its worker.
2. Another student's page: how long a fresh session takes to open lesson 3 on a real ``streamlit run app.py``,
   quiet and then while two hostile runs go (two sandbox workers, each spinning on a Function whose every call
   costs all the CPU its run allows, as a student's admitted-but-dear Function does), side by side (the
   target: <= 1.2x quiet).

    python bench/sandbox_training.py [--reps 5] [--opens 8]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from autodiff_core import TwoLayerConfig, train_two_layer  # noqa: E402
from autodiff_core.functions import bind_student_activations  # noqa: E402
from autodiff_core.grading.challenges import CHALLENGES  # noqa: E402
from autodiff_core.grading.remote import StudentActivation  # noqa: E402
from autodiff_core.grading.remote_runs import PlaygroundRun, land  # noqa: E402
from autodiff_core.grading.sandbox import Limits  # noqa: E402
from autodiff_core.grading.validator import load  # noqa: E402
from autodiff_core.playground import Playground, PlaygroundConfig  # noqa: E402
from autodiff_core.recording import every_step_then_sparser  # noqa: E402

NAME = "yours: ReLU (bench)"
SOURCE = CHALLENGES["relu"].solution
PLAYGROUND_STEPS = 1000


def lesson_2(activation) -> float:
    """As the app runs it: in-process with the code compiled here, or whole in a worker of the run's own."""
    bind_student_activations({NAME: activation})
    config = TwoLayerConfig(activation=NAME, record_every=1)
    t = time.perf_counter()
    if isinstance(activation, StudentActivation):
        link = activation.open(Limits(cpu_seconds=60, memory_mb=512, wall_seconds=120), call_seconds=10)
        stream = link.train(train_two_layer, config)
    else:
        link, stream = None, train_two_layer(config)
    for _ in stream:
        pass
    if link is not None:
        link.close()
    return time.perf_counter() - t


def lesson_5(activation) -> float:
    """As the app runs it: in-process, or whole in a worker of the run's own that sends the model back."""
    bind_student_activations({NAME: activation})
    config = PlaygroundConfig(activation=NAME)
    pg = Playground(config)
    t = time.perf_counter()
    if isinstance(activation, StudentActivation):
        link = activation.open(Limits(cpu_seconds=60, memory_mb=512, wall_seconds=120), call_seconds=10)
        stream = link.train(PlaygroundRun(pg, PLAYGROUND_STEPS), config, land=lambda state: land(pg, state))
    else:
        link, stream = None, every_step_then_sparser(pg.run, total=PLAYGROUND_STEPS)
    for _ in stream:
        pass
    if link is not None:
        link.close()
    assert pg.steps_done == PLAYGROUND_STEPS
    return time.perf_counter() - t


HOG = CHALLENGES["relu"].solution.replace(
    "return input.clamp(min=0)",
    "y = input.clamp(min=0)\n        " + "\n        ".join(["y = torch.sin(y) * 0 + y"] * 60) + "\n        return y")


async def open_times(base: str, n: int) -> list[float]:
    """Seconds for each of ``n`` fresh sessions, one after another, to open lesson 3 (page ready)."""
    from testkit import ws_client

    times = []
    for _ in range(n):
        student = ws_client.Student(base)
        t = time.perf_counter()
        await student.open("logistic")
        times.append(time.perf_counter() - t)
        await student.close()
    return times


def hostile_runs(stop: threading.Event) -> None:
    """One hostile run: a worker of its own computing the dear Function on big batches until ``stop``."""
    act = StudentActivation("yours: ReLU (hog)", HOG, "relu")
    link = act.open(Limits(cpu_seconds=600, memory_mb=1024, wall_seconds=600), call_seconds=60)
    x = torch.randn(1000, 500)
    while not stop.is_set():
        link.forward(x, False)
    link.close()


def page_opens(opens: int) -> None:
    import asyncio

    from testkit.browser import streamlit_server

    with streamlit_server() as base:
        asyncio.run(open_times(base, 3))  # the server's first pages load torch and the lessons
        time.sleep(5)
        quiet = asyncio.run(open_times(base, opens))
        stop = threading.Event()
        hogs = [threading.Thread(target=hostile_runs, args=(stop,)) for _ in range(2)]
        for h in hogs:
            h.start()
        time.sleep(3)  # both workers started and spinning
        busy = asyncio.run(open_times(base, opens))
        stop.set()
        for h in hogs:
            h.join()
    a, b = statistics.median(busy), statistics.median(quiet)
    print(f"another student's page (lesson 3): {b:.2f} s quiet, {a:.2f} s while two hostile runs go, ratio "
          f"{a / b:.2f}x (median of {opens} each)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--opens", type=int, default=8)
    args = parser.parse_args()
    torch.set_num_threads(1)
    here = load(SOURCE).apply  # the old way: the student's code compiled into the server
    sandboxed = StudentActivation(NAME, SOURCE, "relu")
    for lesson in (lesson_2, lesson_5):
        lesson(here), lesson(sandboxed)  # warm up both
        inside, local = [], []
        for _ in range(args.reps):
            inside.append(lesson(sandboxed))
            local.append(lesson(here))
        a, b = statistics.median(inside), statistics.median(local)
        print(f"{lesson.__name__}: in the sandbox {a * 1000:7.1f} ms, in-process {b * 1000:7.1f} ms, "
              f"ratio {a / b:.2f}x (median of {args.reps})")
    sandboxed.close()
    page_opens(args.opens)


if __name__ == "__main__":
    main()
