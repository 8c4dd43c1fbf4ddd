"""Engine overhead: the tutorial's bare loops against the engine's trainers on the same work.

Runs alternate bare/engine in one process, in pairs, and the median of the per-pair ratios is
printed per trainer (with the ratio of the fastest runs beside it). The engine records a snapshot
every step, while the bare loops read a number only now and then, as the tutorials print: the ratio
includes what the snapshots compute (for the two-layer net, four norms of up to 100,000 numbers each
step: about 4.5% of a step on this project's 2-core AMD EPYC machine). bench/playground_cost.py compares
against hand loops that compute the same numbers every step (goal <= 1.05 there).

``--against DIR`` also times another checkout's engine (an older commit, say, from ``git worktree add
/tmp/before HEAD~5``) in the same rounds, loaded beside this one under another name, and prints both
ratios against the same bare runs.

    python bench/engine_overhead.py [--rounds 31] [--against DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from dataclasses import fields
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import autodiff_core  # noqa: E402
from autodiff_core import LogisticConfig, TwoLayerConfig  # noqa: E402
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


def other_engine(root: Path):
    """``autodiff_core`` of the checkout at ``root``, imported as the package ``against_autodiff_core``."""
    folder = root.resolve() / "autodiff_core"
    spec = importlib.util.spec_from_file_location("against_autodiff_core", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def compare(name: str, bare, engines: dict, rounds: int) -> None:
    """Median of per-round ratios: each round times bare and each engine back to back (order rotating),
    so slow drift of a shared machine cancels within the round."""
    runs = {"bare": bare} | engines
    for fn in runs.values():
        fn()  # warm-up: first-call imports and allocator growth
    times = {key: [] for key in runs}
    ratios = {key: [] for key in engines}
    for i in range(rounds):
        order = list(runs)[i % len(runs):] + list(runs)[:i % len(runs)]
        took = {key: timed(runs[key]) for key in order}
        for key in runs:
            times[key].append(took[key])
        for key in engines:
            ratios[key].append(took[key] / took["bare"])
    print(f"{name}: bare {statistics.median(times['bare']) * 1e3:.1f} ms")
    for key in engines:
        print(f"  {key:<28} {statistics.median(times[key]) * 1e3:7.1f} ms  engine/bare "
              f"{statistics.median(ratios[key]):5.3f} (min-based {min(times[key]) / min(times['bare']):5.3f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--against", type=Path, help="another checkout whose engine to time in the same rounds")
    args = parser.parse_args()
    torch.set_num_threads(1)
    engines = {"this checkout": autodiff_core}
    if args.against:
        engines[str(args.against)] = other_engine(args.against)
    two = TwoLayerConfig(record_every=1)
    # Same work for both: 1000 iterations, no early stop (accuracy can't exceed 1.0).
    log_full = LogisticConfig(record_every=1, stop_accuracy=1.0)
    log_default = LogisticConfig()
    print(f"torch {torch.__version__}, 1 thread, {args.rounds} rotating rounds, medians; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")

    def each(trainer: str, config_name: str, config) -> dict:
        out = {}
        for key, engine in engines.items():
            same = getattr(engine, config_name)(**{f.name: getattr(config, f.name) for f in fields(config)})
            out[key] = lambda e=engine, c=same: list(getattr(e, trainer)(c))
        return out

    compare("two-layer, 500 steps, snapshot every step", lambda: bare_two_layer(two.steps),
            each("train_two_layer", "TwoLayerConfig", two), args.rounds)
    compare("logistic, 1000 iters, snapshot every step", lambda: bare_logistic(log_full.stop_accuracy),
            each("train_logistic", "LogisticConfig", log_full), args.rounds)
    compare("logistic, tutorial defaults (every 20, stops)", lambda: bare_logistic(log_default.stop_accuracy),
            each("train_logistic", "LogisticConfig", log_default), args.rounds)
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
