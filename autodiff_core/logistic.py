"""The tutorial's logistic regression: Linear(2, 1) + Sigmoid on two Gaussian clusters, BCELoss,
SGD with momentum, streamed as snapshots that carry enough to draw the decision boundary.

The boundary is where the model outputs 0.5, i.e. where w0 * x + w1 * y + b = 0, so
y = (-w0 * x - b) / w1.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace

import torch
from torch import nn

from .data import gaussian_clusters
from .devices import resolve_device, resolve_dtype
from .footprint import Footprint
from .stopping import checkpoint
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
    record_every: int = 20  # iterations between drawn snapshots: what is drawn, never when the run stops
    check_every: int = 20  # the tutorial checks the accuracy every 20 iterations, whatever is drawn
    stop_accuracy: float = 0.99  # stop once accuracy > this on a checked iteration
    zero_grad: bool = True  # False reproduces the tutorial's forgotten optimizer.zero_grad()
    # A run that goes on from another's state (a student forking the teacher's run mid-way): the weights
    # (w0, w1, b) after iteration ``first_iteration - 1`` instead of the seeded start, and the first iteration it
    # computes. The optimizer's momentum starts from zero there: the other run's velocity is not carried over.
    start: tuple[float, ...] = ()
    first_iteration: int = 0
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
        require_int("check_every", self.check_every, 1, 1_000_000)
        require_float("stop_accuracy", self.stop_accuracy, 0.0, 1.0)
        if not isinstance(self.zero_grad, bool):
            raise ValueError(f"zero_grad must be True or False; got {self.zero_grad!r}.")
        if len(self.start) not in (0, 3):
            raise ValueError(f"start must be three weights (w0, w1, b) or none; got {len(self.start)}.")
        for name, value in zip(("w0", "w1", "b"), self.start, strict=False):
            require_float(f"start {name}", value, -1e12, 1e12)
        require_int("first_iteration", self.first_iteration, 0, max(self.max_iterations - 1, 0))
        require_device_name(self.device)
        require_dtype(self.dtype)

    def footprint(self) -> Footprint:
        """A few tensors of the 2n points; a step is Python's overhead more than arithmetic."""
        n = 2 * self.n_per_class
        return Footprint(64 * n, 200 * n, fixed_bytes=2**20, fixed_seconds=2e-4, hint="Use fewer points per class.")


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
    message: str = ""  # what went wrong, in the student's words (diverged, stuck, or saturated at the end)
    saturated: int = 0  # misclassified points whose sigmoid is saturated (output ~0 or ~1): ~no gradient
    stuck: bool = False  # saturated points and weights that no longer move: the run ended here

    @property
    def ended(self) -> bool:
        return self.stopped or self.diverged or self.stuck


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
    model = LogisticRegression(generator=g)  # drawn even when ``start`` replaces it: the same points either way
    device, dtype = resolve_device(config.device), resolve_dtype(config.dtype)
    model = model.to(device, dtype)
    if config.start:  # in the run's dtype: a float64 run goes on from float64 weights
        with torch.no_grad():
            model.features.weight.copy_(torch.tensor([config.start[:2]], dtype=torch.float64))
            model.features.bias.copy_(torch.tensor(config.start[2:], dtype=torch.float64))
    return x.to(device, dtype), y.to(device, dtype), model


def train_logistic(config: LogisticConfig) -> Iterator[LogisticSnapshot]:
    """Train and yield a snapshot on every ``record_every``-th iteration and on the last one.

    Every ``check_every``-th iteration (the tutorial's 20) the accuracy is checked, whatever is drawn:
    past ``stop_accuracy`` the run stops. A run that can no longer learn (sigmoid saturated, weights
    frozen) ends too, with a message."""
    train_x, train_y, model = make_data_and_model(config)
    loss_fn = nn.BCELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=config.learning_rate, momentum=config.momentum)
    watch = Watch(config, train_x, train_y, model)  # what to draw, the accuracy check, saturation
    for iteration in range(config.first_iteration, config.max_iterations):
        checkpoint()  # Stop ends the run here
        # forward
        y_pred = model(train_x)  # (2n, 1) probabilities
        # loss
        try:
            loss = loss_fn(y_pred.squeeze(), train_y)
        except RuntimeError:  # BCELoss refuses NaN probabilities: the weights blew up
            yield watch.diverged(iteration)
            return
        # backward
        loss.backward()
        # update
        optimizer.step()
        # zero grads (the tutorial forgets this line; without it gradients pile up step after step)
        if config.zero_grad:
            optimizer.zero_grad()
        snap = watch.look(iteration, loss, y_pred)  # None unless this iteration is drawn or ends the run
        if snap is not None:
            yield snap
            if snap.ended:
                return


SATURATED = 1e-6  # sigmoid slope p * (1 - p) below this (|logit| > ~14): the point sends back ~no gradient
FROZEN = 1e-6  # weights that moved less than this, relative, between two checks no longer move


def suggested_learning_rate(x: torch.Tensor) -> float:
    """A learning rate that trains on these points: 1/L rounded down to 1, 2 or 5 x 10^k.

    L = λmax(x̃ᵀx̃ / n) / 4 bounds the curvature of the mean BCE loss (x̃ is x with a column of ones for
    the bias, and the sigmoid's slope is at most 1/4). Gradient descent with a step below 1/L never
    overshoots, and momentum below 1 keeps it stable up to 2(1 + momentum)/L."""
    xt = torch.cat([x.detach().double().cpu(), torch.ones(len(x), 1, dtype=torch.float64)], 1)  # (2n, 3)
    curvature = float(torch.linalg.eigvalsh(xt.T @ xt / len(xt))[-1]) / 4
    limit = 1 / curvature
    p = 10.0 ** math.floor(math.log10(limit))
    return next(m * p for m in (5, 2, 1) if m * p <= limit * (1 + 1e-9))


class Watch:
    """What the loop looks at besides training: which iterations to draw, the accuracy check, and whether
    the run can still learn. One host sync per iteration looked at."""

    def __init__(self, config: LogisticConfig, x: torch.Tensor, y: torch.Tensor, model: LogisticRegression):
        self.config, self.x, self.labels, self.n = config, x, y.bool(), y.numel()
        self.params = [model.features.weight.detach().view(-1), model.features.bias.detach()]  # views
        self.checked: tuple[float, float, float] | None = None  # weights at the previous check

    def look(self, iteration: int, loss: torch.Tensor, y_pred: torch.Tensor) -> LogisticSnapshot | None:
        c = self.config
        check = iteration % c.check_every == 0
        draw = iteration % c.record_every == 0 or iteration == c.max_iterations - 1
        if not (check or draw):
            return None
        snap = self._snapshot(iteration, loss.detach(), y_pred.detach().view(-1), check)
        return snap if draw or snap.ended else None

    def _snapshot(self, iteration, loss, p, check) -> LogisticSnapshot:
        """Accuracy from this iteration's predictions, weights after its update; one host sync."""
        with torch.no_grad():
            wrong = torch.ne(p.ge(0.5), self.labels)  # (2n,)
            saturated = (wrong & (p * (1 - p) < SATURATED)).sum(dtype=p.dtype)
            stats = torch.cat([loss.view(1), wrong.sum(dtype=p.dtype).view(1), saturated.view(1), *self.params])
            loss_v, wrong_v, saturated_v, w0, w1, b_v = stats.tolist()
        if not all(math.isfinite(v) for v in (loss_v, w0, w1, b_v)):
            return self.diverged(iteration)
        acc = 1 - wrong_v / self.n
        snap = LogisticSnapshot(iteration, loss_v, acc, w0, w1, b_v, saturated=int(saturated_v),
                                stopped=check and acc > self.config.stop_accuracy)
        if check:
            frozen = self.checked is not None and _moved(self.checked, (w0, w1, b_v)) <= FROZEN
            self.checked = (w0, w1, b_v)
            if snap.saturated and frozen and not snap.stopped:
                snap = replace(snap, stuck=True)
                return replace(snap, message=self.stuck_message(snap))
        if snap.saturated and iteration == self.config.max_iterations - 1 and not snap.stopped:
            return replace(snap, message=self.stuck_message(snap))
        return snap

    def stuck_message(self, s: LogisticSnapshot) -> str:
        """Why a run cannot learn any more, and what to change."""
        c, points = self.config, f"{s.saturated:,} misclassified point{'s' * (s.saturated != 1)}"
        where = (f"Stuck at iteration {s.iteration}, short of the target accuracy" if s.stuck
                 else "The run ended short of the target accuracy")
        what = (f"The weights grew so large (w0 {s.w0:.3g}, w1 {s.w1:.3g}, b {s.b:.3g}) that the sigmoid outputs "
                f"0 or 1 for {points}; its slope there is about 0, so they send back no gradient and the loss "
                f"stays near {s.loss:.3g}.")
        if not c.zero_grad:
            return f"{where}: without optimizer.zero_grad() the gradients piled up. {what} Put zero_grad() back."
        suggestion = suggested_learning_rate(self.x)
        if c.learning_rate > suggestion:
            return (f"{where}: the learning rate {c.learning_rate:g} is too large. {what} "
                    f"Try learning rate {suggestion:g}.")
        return f"{where}. {what}"

    def diverged(self, iteration: int) -> LogisticSnapshot:
        nan = float("nan")
        return LogisticSnapshot(
            iteration, nan, nan, nan, nan, nan, diverged=True,
            message=f"Training diverged at iteration {iteration}: the weights are no longer finite. "
                    f"The learning rate {self.config.learning_rate:g} is too large; "
                    f"try {suggested_learning_rate(self.x):g}.",
        )


def _moved(before: tuple[float, ...], after: tuple[float, ...]) -> float:
    """Largest change of a weight, relative to the largest weight."""
    scale = max(max(abs(v) for v in after), 1e-12)
    return max(abs(a - b) for a, b in zip(before, after, strict=True)) / scale


def boundary_y(w0: float, w1: float, b: float, xs):
    """Points (x, y) on the decision boundary w0*x + w1*y + b = 0 for the given xs; None if w1 == 0."""
    if w1 == 0:
        return None
    return [(-w0 * x - b) / w1 for x in xs]
