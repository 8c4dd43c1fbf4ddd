"""Engine overhead: the tutorial's bare loops against the engine's trainers on the same work.

Runs alternate bare/engine in one process, in pairs, and the median of the per-pair ratios is
printed per trainer (with the ratio of the fastest runs beside it). The engine records a snapshot
every step, while the bare loops read a number only now and then, as the tutorials print: the ratio
includes what the snapshots compute (for the two-layer net, four norms of up to 100,000 numbers each
step, about 6% of a step). bench/playground_cost.py compares against hand loops that compute the
same numbers every step (goal <= 1.05 there).

    python bench/engine_overhead.py [--rounds 31]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autodiff_core import LogisticConfig, TwoLayerConfig, train_logistic, train_two_layer  # noqa: E402
from autodiff_core.reference import tutorial_logistic, tutorial_two_layer  # noqa: E402


def bare_two_layer(steps: int) -> float:
    """The tutorial's loop as written (autodiff_core/reference.py): prints (here: reads) the loss every 100 steps."""
    last = 0.0
    for t, (loss, _, _) in enumerate(tutorial_two_layer(steps)):
        if t % 100 == 99:
            last = loss.item()
    return last


def bare_logistic(stop_accuracy: float) -> float:
    """The tutorial's loop (zero_grad added, autodiff_core/reference.py): reads accuracy and weights every 20
    iterations, and stops above ``stop_accuracy``."""
    rows = list(tutorial_logistic(stop_accuracy=stop_accuracy))
    return rows[-1][2]  # the last accuracy read


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def compare(name: str, bare, engine, rounds: int) -> float:
    """Median of per-round ratios: each round times bare and engine back to back (order alternating),
    so slow drift of a shared machine cancels within the pair."""
    bare(), engine()  # warm-up: first-call imports and allocator growth
    b, e, ratios = [], [], []
    for i in range(rounds):
        pair = (bare, engine) if i % 2 == 0 else (engine, bare)
        times = {fn: timed(fn) for fn in pair}
        b.append(times[bare])
        e.append(times[engine])
        ratios.append(times[engine] / times[bare])
    ratio = statistics.median(ratios)
    print(f"{name:<46} bare {statistics.median(b) * 1e3:7.1f} ms  engine {statistics.median(e) * 1e3:7.1f} ms"
          f"  engine/bare {ratio:5.3f} (min-based {min(e) / min(b):5.3f})")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31)
    args = parser.parse_args()
    torch.set_num_threads(1)
    two = TwoLayerConfig(record_every=1)
    # Same work for both: 1000 iterations, no early stop (accuracy can't exceed 1.0).
    log_full = LogisticConfig(record_every=1, stop_accuracy=1.0)
    log_default = LogisticConfig()
    print(f"torch {torch.__version__}, 1 thread, {args.rounds} alternating rounds, medians\n")
    compare("two-layer, 500 steps, snapshot every step", lambda: bare_two_layer(two.steps),
            lambda: list(train_two_layer(two)), args.rounds)
    compare("logistic, 1000 iters, snapshot every step", lambda: bare_logistic(log_full.stop_accuracy),
            lambda: list(train_logistic(log_full)), args.rounds)
    compare("logistic, tutorial defaults (every 20, stops)", lambda: bare_logistic(log_default.stop_accuracy),
            lambda: list(train_logistic(log_default)), args.rounds)


if __name__ == "__main__":
    main()
