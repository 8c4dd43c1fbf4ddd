"""Training cost with a snapshot every step: lesson 5's playground and the two-layer trainer, each against a
hand-written loop that does the same work with the same activation, side by side in one process.

"The same work" is what a snapshot holds, computed the plain way: for the playground, the mini-batch step
plus, every step, loss and accuracy on train and test, the decision surface on the grid, each layer's
gradient norm and dead-unit share; for the two-layer net, the step plus the loss and the four norms.
Both run as generators and take turns step by step (the order flipping each step), so a shared machine's
drift hits both alike; each round sums the time of its steps, and the median of the per-round ratios is
printed (goal: <= 1.05). Before timing, each pair is run once and its numbers compared step by step: the
hand loop computes what the snapshot holds, to float tolerance, or the benchmark stops.

    python bench/playground_cost.py [--rounds 15] [--steps 300]
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
from autodiff_core.functions import get_activation  # noqa: E402
from autodiff_core.playground import Playground, PlaygroundConfig  # noqa: E402
from autodiff_core.reference import tutorial_two_layer  # noqa: E402
from autodiff_core.two_layer import TwoLayerConfig, train_two_layer  # noqa: E402

F = nn.functional


def hand_playground(config: PlaygroundConfig, steps: int):
    """The playground's run written out with plain tensors: weights as (in, out) matrices, by-hand SGD."""
    pg = Playground(config)  # only for the same data, grid and initial weights
    ws = [layer.weight.detach().T.clone().requires_grad_() for layer in pg.model.layers]
    bs = [layer.bias.detach().clone().requires_grad_() for layer in pg.model.layers]
    act, lr, g = get_activation(config.activation), config.learning_rate, torch.Generator().manual_seed(1)
    xtr, ytr, xte, yte, grid = pg.x_train, pg.y_train, pg.x_test, pg.y_test, pg.grid_points

    def net(x, hidden=None):
        for w, b in zip(ws[:-1], bs[:-1], strict=True):
            x = act(x @ w + b)
            if hidden is not None:
                hidden.append(x)
        return torch.sigmoid(x @ ws[-1] + bs[-1]).squeeze(-1)

    for _ in range(steps):
        idx = torch.randint(0, len(ytr), (config.batch_size,), generator=g)
        loss = F.binary_cross_entropy(net(xtr[idx]), ytr[idx])
        loss.backward()
        norms = [w.grad.norm() for w in ws]
        with torch.no_grad():
            for p in (*ws, *bs):
                p -= lr * p.grad
                p.grad = None
            hidden = []
            p_tr, p_te = net(xtr, hidden), net(xte)
            numbers = [F.binary_cross_entropy(p_tr, ytr), ((p_tr >= 0.5) == ytr.bool()).float().mean(),
                       F.binary_cross_entropy(p_te, yte), ((p_te >= 0.5) == yte.bool()).float().mean(),
                       *norms, *((h.amax(0) == h.amin(0)).float().mean() for h in hidden)]
            out = torch.stack(numbers).tolist(), net(grid).reshape(config.grid, config.grid).tolist()
        yield out  # outside no_grad: grad mode is global, and the engine's step runs between our steps


def engine_playground(config: PlaygroundConfig, steps: int):
    pg = Playground(config)
    for _ in range(steps):
        pg.step()
        yield pg.snapshot()


def hand_two_layer(config: TwoLayerConfig):
    """The tutorial's loop (autodiff_core/reference.py), reading the loss and the four norms every step."""
    for loss, w1, w2 in tutorial_two_layer(config.steps, get_activation(config.activation)):
        yield [loss.item(), w1.norm().item(), w2.norm().item(), w1.grad.norm().item(), w2.grad.norm().item()]


def same_numbers(name: str, hand, engine, numbers) -> None:
    """Run both once and compare what they computed at every step: the hand loop yields (numbers, surface)
    or numbers, the engine snapshots that ``numbers`` turns into the same form."""
    worst, steps = 0.0, 0
    for step, (ours, theirs) in enumerate(zip(hand(), engine(), strict=True)):
        ours, theirs = (ours if isinstance(ours, tuple) else (ours,)), numbers(theirs)
        for a, b in zip(ours, theirs, strict=True):
            a, b = torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)
            torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-3, msg=lambda m, t=step: f"{name}, step {t}: {m}")
            worst = max(worst, ((a - b).abs() / a.abs().clamp(min=1)).max().item())
        steps = step + 1
    print(f"{name:<46} same numbers as the hand loop at all {steps} steps (largest difference {worst:.1e}, "
          f"relative above 1)")


def playground_numbers(snap) -> tuple[list[float], tuple]:
    """A snapshot in the hand loop's form: [train loss, accuracy, test loss, accuracy, grad norms, dead], surface
    (rounded to 3 decimals in the snapshot, hence the benchmark's absolute tolerance)."""
    return ([snap.train_loss, snap.train_accuracy, snap.test_loss, snap.test_accuracy, *snap.grad_norms, *snap.dead],
            snap.surface)


def two_layer_numbers(snap) -> tuple[list[float]]:
    return ([snap.loss, snap.w1_norm, snap.w2_norm, snap.grad_w1_norm, snap.grad_w2_norm],)


def one_round(hand, engine) -> tuple[list[float], list[float]]:
    """Seconds each generator spent on each step, taking turns step by step."""
    gens, spent, flip = [hand(), engine()], ([], []), 0
    done = False
    while not done:
        for k in (flip, 1 - flip):
            start = time.perf_counter()
            try:
                next(gens[k])
            except StopIteration:
                done = True
            spent[k].append(time.perf_counter() - start)
        flip = 1 - flip
    return spent


def compare(name: str, hand, engine, rounds: int) -> float:
    """Median of per-round ratios, and the ratio of the per-step minima over all rounds summed (what a step
    costs when the shared machine leaves it alone: the steadier figure where other work comes in bursts)."""
    one_round(hand, engine)  # warm-up
    ratios, h, e = [], [], []
    for _ in range(rounds):
        th, te = one_round(hand, engine)
        h.append(th)
        e.append(te)
        ratios.append(sum(te) / sum(th))
    ratio = statistics.median(ratios)
    best_h, best_e = (sum(map(min, zip(*runs, strict=True))) for runs in (h, e))
    print(f"{name:<46} hand {best_h * 1e3:6.1f} ms  engine {best_e * 1e3:6.1f} ms  engine/hand per-step minima "
          f"{best_e / best_h:5.3f}  (median of rounds {ratio:5.3f})", flush=True)
    return best_e / best_h


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread, {args.rounds} alternating rounds, medians, snapshot every step\n")
    for act, hidden in (("Tanh", (8, 8)), ("torch.tanh", (8, 8)), ("ReLU", (8,) * 6)):
        config = PlaygroundConfig(activation=act, hidden=hidden, optimizer="SGD (by hand)", batch_size=10)
        name, hand, engine = (f"playground {act} {hidden}, {args.steps} steps",
                              lambda c=config: hand_playground(c, args.steps),
                              lambda c=config: engine_playground(c, args.steps))
        same_numbers(name, hand, engine, playground_numbers)
        compare(name, hand, engine, args.rounds)
    for act in ("ReLU", "torch.relu"):
        two = TwoLayerConfig(activation=act, record_every=1)
        name, hand, engine = (f"two-layer {act}, {two.steps} steps", lambda c=two: hand_two_layer(c),
                              lambda c=two: train_two_layer(c))
        same_numbers(name, hand, engine, two_layer_numbers)
        compare(name, hand, engine, args.rounds)


if __name__ == "__main__":
    main()
