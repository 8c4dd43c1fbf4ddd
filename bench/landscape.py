"""Lesson 7: what a moved setting costs. The page computes the five paths whole on every change; this times that
work, alternating in one process with the same five optimizers run by ``torch.optim`` (the steps the lesson's
hand-written updates reproduce), so the ratio says what writing the updates by hand costs, and the milliseconds
say whether a rerun stays instant. Then what else a change costs the page: the story and the replay's figure.

    python bench/landscape.py [--rounds 9]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autodiff_core.figures.landscape import landscape_replay_spec  # noqa: E402
from autodiff_core.landscape import LandscapeConfig, starting_weights, surface_of, train_landscape  # noqa: E402
from autodiff_core.landscape_story import story  # noqa: E402
from autodiff_core.optimizers import NAMES, OPTIMIZERS  # noqa: E402


def by_torch(config: LandscapeConfig) -> None:
    """The same five paths, each stepped by its torch.optim twin, read back once a step as the trainer does."""
    surface = surface_of(config)
    weights = [starting_weights(surface, config) for _ in NAMES]
    steppers = [OPTIMIZERS[n].twin(w, config.learning_rate, config.momentum) for n, w in zip(NAMES, weights,
                                                                                            strict=True)]
    for _ in range(config.steps + 1):
        losses = []
        for w, optimizer in zip(weights, steppers, strict=True):
            loss = surface.loss(w)
            losses.append(loss.detach())
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        torch.cat([torch.stack([w.detach() for w in weights]).view(-1), torch.stack(losses)]).tolist()


def timed(work) -> float:
    t0 = time.perf_counter()
    work()
    return time.perf_counter() - t0


def row(landscape: str, steps: int, rounds: int) -> str:
    config = LandscapeConfig(landscape=landscape, steps=steps)
    surface = surface_of(config)
    list(train_landscape(config))  # torch warm
    hand, twin, ratios = [], [], []
    for _ in range(rounds):  # alternating, so a busy machine slows both alike
        hand.append(timed(lambda: list(train_landscape(config))))
        twin.append(timed(lambda: by_torch(config)))
        ratios.append(hand[-1] / twin[-1])
    snaps = list(train_landscape(config))
    told = min(timed(lambda: story(config, snaps)) for _ in range(3))
    drawn = min(timed(lambda: landscape_replay_spec(snaps, surface, steps)) for _ in range(3))
    return (f"{landscape:22} {steps:5d} {1e3 * statistics.median(hand):11.1f} {1e3 * statistics.median(twin):15.1f} "
            f"{statistics.median(ratios):6.2f} {1e3 * told:9.1f} {1e3 * drawn:10.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"{'landscape':22} {'steps':>5} {'by hand ms':>11} {'torch.optim ms':>15} {'ratio':>6} "
          f"{'story ms':>9} {'figure ms':>10}")
    for landscape in ("Narrow bowl", "Logistic regression", "Rosenbrock's valley"):
        for steps in (100, 500):
            print(row(landscape, steps, args.rounds), flush=True)


if __name__ == "__main__":
    main()
