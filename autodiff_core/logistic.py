"""The tutorial's logistic regression: Linear(2, 1) + Sigmoid on two Gaussian clusters, BCELoss,
SGD with momentum, streamed as snapshots that carry enough to draw the decision boundary.

The boundary is where the model outputs 0.5, i.e. where w0 * x + w1 * y + b = 0, so
y = (-w0 * x - b) / w1.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import nn

from .data import gaussian_clusters
from .devices import resolve_device, resolve_dtype
from .validation import require_device_name, require_dtype, require_float, require_int


@dataclass(frozen=True)
class LogisticConfig:
    """Everything that decides a run. The defaults are the tutorial's."""

    n_per_class: int = 100
    mean: float = 1.7  # class 0 is centred at +mean + bias, class 1 at -mean + bias
    bias: float = 1.0
    spread: float = 1.0  # standard deviation of each cluster
    seed: int = 10  # the tutorial's torch.manual_seed(10), as a private generator
    learning_rate: float = 0.01
    momentum: float = 0.9
    max_iterations: int = 1000
    record_every: int = 20
    stop_accuracy: float = 0.99  # stop once accuracy > this on a recorded iteration
    zero_grad: bool = True  # False reproduces the tutorial's forgotten optimizer.zero_grad()
    device: str = "cpu"
    dtype: str = "float32"

    def __post_init__(self) -> None:
        require_int("n_per_class", self.n_per_class, 1, 100_000)
        require_float("mean", self.mean, -100.0, 100.0)
        require_float("bias", self.bias, -100.0, 100.0)
        require_float("spread", self.spread, 0.0, 100.0, lo_open=True)
        require_int("seed", self.seed, 0, 2**63 - 1)
        require_float("learning_rate", self.learning_rate, 0.0, 1e6, lo_open=True)
        require_float("momentum", self.momentum, 0.0, 1.0, hi_open=True)
        require_int("max_iterations", self.max_iterations, 1, 1_000_000)
        require_int("record_every", self.record_every, 1, 1_000_000)
        require_float("stop_accuracy", self.stop_accuracy, 0.0, 1.0)
        if not isinstance(self.zero_grad, bool):
            raise ValueError(f"zero_grad must be True or False; got {self.zero_grad!r}.")
        require_device_name(self.device)
        require_dtype(self.dtype)


@dataclass(frozen=True, slots=True)
class LogisticSnapshot:
    """One drawn iteration: loss and accuracy of that iteration's forward pass, and the
    weights after its update (the tutorial draws them in that order)."""

    iteration: int
    loss: float
    accuracy: float
    w0: float
    w1: float
    b: float
    stopped: bool = False  # accuracy passed stop_accuracy here
    diverged: bool = False
    message: str = ""


class LogisticRegression(nn.Module):
    """Linear(2, 1) followed by a Sigmoid: the probability that a point is class 1."""

    def __init__(self, generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.features = nn.utils.skip_init(nn.Linear, 2, 1)  # no draw from the global RNG
        self.sigmoid = nn.Sigmoid()
        # nn.Linear's own initialisation, drawn from our generator instead
        nn.init.kaiming_uniform_(self.features.weight, a=math.sqrt(5), generator=generator)
        bound = 1 / math.sqrt(2)
        nn.init.uniform_(self.features.bias, -bound, bound, generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.sigmoid(self.features(x))  # (n, 1)


def _clusters(config: LogisticConfig, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    return gaussian_clusters(config.n_per_class, config.spread, g, mean=config.mean, bias=config.bias)


def logistic_data(config: LogisticConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """The run's points, (2n, 2) and (2n,), float32 on the CPU: for drawing, no model built."""
    return _clusters(config, torch.Generator().manual_seed(config.seed))


def make_data_and_model(config: LogisticConfig) -> tuple[torch.Tensor, torch.Tensor, LogisticRegression]:
    """The clusters and the initial model, drawn in the tutorial's order from one seeded generator."""
    g = torch.Generator().manual_seed(config.seed)
    x, y = _clusters(config, g)
    model = LogisticRegression(generator=g)
    device, dtype = resolve_device(config.device), resolve_dtype(config.dtype)
    return x.to(device, dtype), y.to(device, dtype), model.to(device, dtype)


def train_logistic(config: LogisticConfig) -> Iterator[LogisticSnapshot]:
    """Train and yield a snapshot on every ``record_every``-th iteration and on the last one."""
    train_x, train_y, model = make_data_and_model(config)
    loss_fn = nn.BCELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=config.learning_rate, momentum=config.momentum)
    n, last = train_y.numel(), config.max_iterations - 1
    labels = train_y.bool()  # (2n,) for counting correct predictions
    params = [model.features.weight.detach().view(-1), model.features.bias.detach()]  # views: always current
    for iteration in range(config.max_iterations):
        # forward
        y_pred = model(train_x)  # (2n, 1) probabilities
        # loss
        try:
            loss = loss_fn(y_pred.squeeze(), train_y)
        except RuntimeError:  # BCELoss refuses NaN probabilities: the weights blew up
            yield _diverged(iteration, config)
            return
        # backward
        loss.backward()
        # update
        optimizer.step()
        # zero grads (the tutorial forgets this line; without it gradients pile up step after step)
        if config.zero_grad:
            optimizer.zero_grad()
        if iteration % config.record_every == 0 or iteration == last:
            snap = _snapshot(iteration, loss.detach(), y_pred.detach(), labels, params, n, config)
            yield snap
            if snap.stopped or snap.diverged:
                return


def _snapshot(iteration, loss, y_pred, labels, params, n, config) -> LogisticSnapshot:
    """Accuracy from this iteration's predictions, weights after its update; one host sync."""
    with torch.no_grad():
        correct = torch.eq(y_pred.view(-1).ge(0.5), labels).sum(dtype=params[0].dtype)  # (,)
        stats = torch.cat([loss.view(1), correct.view(1), *params]).tolist()  # loss, correct, w0, w1, b
    loss_v, correct_v, w0, w1, b_v = stats
    if not all(math.isfinite(v) for v in stats):
        return _diverged(iteration, config)
    acc = correct_v / n
    return LogisticSnapshot(iteration, loss_v, acc, w0, w1, b_v, stopped=acc > config.stop_accuracy)


def _diverged(iteration: int, config: LogisticConfig) -> LogisticSnapshot:
    nan = float("nan")
    lr = config.learning_rate
    return LogisticSnapshot(
        iteration, nan, nan, nan, nan, nan, diverged=True,
        message=f"Training diverged at iteration {iteration}: the weights are no longer finite. "
                f"The learning rate {lr:g} is too large; try {lr / 10:g} or smaller.",
    )


def boundary_y(w0: float, w1: float, b: float, xs):
    """Points (x, y) on the decision boundary w0*x + w1*y + b = 0 for the given xs; None if w1 == 0."""
    if w1 == 0:
        return None
    return [(-w0 * x - b) / w1 for x in xs]
