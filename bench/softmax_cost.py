"""What MySoftmax costs lesson 5's training, and how far from PyTorch's own its numbers are: three copies of the
same playground (same data, initial weights, mini-batches and Adam) step side by side in one process.

- the app: MySoftmax, then the cross-entropy of its probabilities (``classes.cross_entropy``);
- ``torch.softmax`` in MySoftmax's place, the same cross-entropy;
- the logits straight into ``F.cross_entropy`` (PyTorch's fused log-softmax).

Each round the three take turns step by step (the order rotating each step), so a shared machine's drift hits
them alike; the median of the per-round time ratios is printed. Before timing, one run of ``--steps`` steps
says how far the app's weights and losses end from the other two's.

    python bench/softmax_cost.py [--rounds 11] [--steps 300] [--classes 3 6]
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
from autodiff_core.playground import Playground, PlaygroundConfig  # noqa: E402

VARIANTS = ("MySoftmax", "torch.softmax", "F.cross_entropy")


def copies(config: PlaygroundConfig) -> list[Playground]:
    """The app's playground and its two twins, from the same seeds."""
    mine, builtin, fused = (Playground(config) for _ in VARIANTS)
    builtin.model.head = lambda z: torch.softmax(z, -1)
    fused.model.head = lambda z: z  # logits: F.cross_entropy takes the log-softmax itself
    fused.loss_fn = nn.functional.cross_entropy
    return [mine, builtin, fused]


def agreement(config: PlaygroundConfig, steps: int) -> str:
    runs = copies(config)
    for _ in range(steps):
        for pg in runs:
            pg.step()
    mine, builtin, fused = ([p.detach() for p in pg.params] for pg in runs)
    gap = {name: max((a - b).abs().max().item() for a, b in zip(mine, other, strict=True))
           for name, other in (("torch.softmax", builtin), ("F.cross_entropy", fused))}
    loss = runs[0].snapshot().train_loss
    with torch.no_grad():
        fused_loss = nn.functional.cross_entropy(runs[2].model.forward(runs[2].x_train), runs[2].targets_train).item()
    return (f"after {steps} steps, largest weight difference from torch.softmax {gap['torch.softmax']:.1e}, from "
            f"F.cross_entropy {gap['F.cross_entropy']:.1e}; train loss {loss:.6f} vs {fused_loss:.6f}")


def timed_round(config: PlaygroundConfig, steps: int) -> list[float]:
    runs, spent = copies(config), [0.0] * len(VARIANTS)
    for i in range(steps):
        for k in range(len(VARIANTS)):
            j = (i + k) % len(VARIANTS)
            t0 = time.perf_counter()
            runs[j].step()
            spent[j] += time.perf_counter() - t0
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--classes", type=int, nargs="+", default=[3, 6])
    args = parser.parse_args()
    torch.set_num_threads(1)
    for classes in args.classes:
        config = PlaygroundConfig(dataset="Spiral arms", classes=classes, hidden=(8, 8))
        print(f"{classes} classes, spiral arms, hidden (8, 8), Adam, batch 32: {agreement(config, args.steps)}")
        rounds = [timed_round(config, args.steps) for _ in range(args.rounds)]
        for k, name in enumerate(VARIANTS[1:], 1):
            ratios = [r[0] / r[k] for r in rounds]
            print(f"  step time, MySoftmax / {name}: median {statistics.median(ratios):.3f} "
                  f"(rounds {min(ratios):.3f}-{max(ratios):.3f}); "
                  f"{statistics.median(r[0] for r in rounds) / args.steps * 1e6:.0f} µs a step with MySoftmax")


if __name__ == "__main__":
    main()
