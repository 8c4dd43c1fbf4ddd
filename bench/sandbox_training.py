"""What the sandbox costs a student's Function in training: lessons 2 and 5 at their defaults, the same code
trained in the sandbox's worker (as the app does) against compiled into this process (as it used to be),
alternated so both see the same machine load; the ratio is the sandbox's price (the issue asks <= 1.15x).

    python bench/sandbox_training.py [--reps 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

import torch  # noqa: E402

from autodiff_core import TwoLayerConfig, train_two_layer  # noqa: E402
from autodiff_core.challenges import CHALLENGES  # noqa: E402
from autodiff_core.functions import bind_student_activations  # noqa: E402
from autodiff_core.playground import Playground, PlaygroundConfig  # noqa: E402
from autodiff_core.remote import StudentActivation  # noqa: E402
from autodiff_core.sandbox import Limits  # noqa: E402
from autodiff_core.student import load  # noqa: E402

NAME = "yours: ReLU (bench)"
SOURCE = CHALLENGES["relu"].solution
PLAYGROUND_STEPS = 500


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
    bind_student_activations({NAME: activation})
    pg = Playground(PlaygroundConfig(activation=NAME))
    t = time.perf_counter()
    for _ in pg.run(PLAYGROUND_STEPS, record_every=10):
        pass
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5)
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


if __name__ == "__main__":
    main()
