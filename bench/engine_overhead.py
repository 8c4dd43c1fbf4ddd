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
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autodiff_core import LogisticConfig, TwoLayerConfig, train_logistic, train_two_layer  # noqa: E402
from autodiff_core.functions import MyReLU  # noqa: E402
from autodiff_core.logistic import make_data_and_model  # noqa: E402
from autodiff_core.two_layer import make_problem  # noqa: E402


def bare_two_layer(config: TwoLayerConfig) -> float:
    """The tutorial's loop as written: prints (here: reads) the loss every 100 steps."""
    x, y, w1, w2 = make_problem(config)
    relu, lr, last = MyReLU.apply, config.learning_rate, 0.0
    for t in range(config.steps):
        y_pred = relu(x.mm(w1)).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            last = loss.item()
        loss.backward()
        with torch.no_grad():
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    return last


def bare_logistic(config: LogisticConfig) -> float:
    """The tutorial's loop (zero_grad added): reads accuracy and weights every 20 iterations."""
    train_x, train_y, model = make_data_and_model(config)
    loss_fn = nn.BCELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=config.learning_rate, momentum=config.momentum)
    acc = 0.0
    for iteration in range(config.max_iterations):
        y_pred = model(train_x)
        loss = loss_fn(y_pred.squeeze(), train_y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if iteration % 20 == 0:
            acc = (y_pred.ge(0.5).float().squeeze() == train_y).sum().item() / train_y.size(0)
            w0, w1 = model.features.weight[0]
            _ = float(w0.item()), float(w1.item()), float(model.features.bias[0].item()), loss.item()
            if acc > config.stop_accuracy:
                break
    return acc


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
    compare("two-layer, 500 steps, snapshot every step", lambda: bare_two_layer(two),
            lambda: list(train_two_layer(two)), args.rounds)
    compare("logistic, 1000 iters, snapshot every step", lambda: bare_logistic(log_full),
            lambda: list(train_logistic(log_full)), args.rounds)
    compare("logistic, tutorial defaults (every 20, stops)", lambda: bare_logistic(log_default),
            lambda: list(train_logistic(log_default)), args.rounds)


if __name__ == "__main__":
    main()
