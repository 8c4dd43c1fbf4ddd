"""The classification playground: an MLP whose activation is any registry Function (the custom ReLU by
default) learning 2-D datasets, with Step / Reset semantics and a decision surface on a grid.

Reset re-draws the initial weights from ``init_seed``, so with the seed unchanged a reset always starts
from the very same weights.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import nn

from .data import DATASETS, make_dataset
from .devices import resolve_device, resolve_dtype
from .functions import FUNCTIONS, activation_names, get_activation
from .gradcheck import gradcheck_report
from .validation import require_choice, require_device_name, require_dtype, require_float, require_int

OPTIMIZERS = ("SGD (by hand)", "SGD + momentum", "Adam")
# The largest learning rate, per optimizer, with which the default network learns every dataset it can:
# a suggestion never goes above it (tests/test_playground.py trains with each one).
STABLE_LR = {"SGD (by hand)": 0.3, "SGD + momentum": 0.1, "Adam": 0.03}
LR_LADDER = (1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 3e-4, 1e-4, 3e-5, 1e-5)


def suggested_learning_rate(optimizer: str, learning_rate: float) -> float:
    """A learning rate to try after ``learning_rate`` failed: the largest step of the ladder that is at
    most a tenth of it and at most the optimizer's known stable rate."""
    cap = min(learning_rate / 10, STABLE_LR[optimizer])
    return next((v for v in LR_LADDER if v <= cap), LR_LADDER[-1])


@functools.cache
def backward_problem(activation: str) -> str:
    """Why ``activation``'s backward is wrong, from gradcheck's verdict; "" when it passes (or is built in)."""
    spec = FUNCTIONS.get(activation)
    if spec is None or gradcheck_report(activation).passed:
        return ""
    return (f"The learning rate is not the cause: the backward of {activation} is wrong (gradcheck fails; "
            f"{spec.summary.rstrip('.')}), so every gradient that flows through it is wrong. Choose an activation "
            f"whose backward passes gradcheck.")


@dataclass(frozen=True)
class PlaygroundConfig:
    """Data, model and training settings. Everything but the training settings is fixed per model."""

    dataset: str = "XOR"
    n_per_class: int = 100
    noise: float = 0.1
    test_fraction: float = 0.3
    data_seed: int = 0
    hidden: tuple[int, ...] = (8, 8)  # widths of 1 to 3 hidden layers
    activation: str = "ReLU"  # the tutorial's MyReLU
    init_seed: int = 0
    optimizer: str = "Adam"
    learning_rate: float = 0.03
    batch_size: int = 32
    l2: float = 0.0
    grid: int = 32  # decision surface resolution, grid x grid points (coarse: it is re-sent while live)
    device: str = "cpu"
    dtype: str = "float32"

    def __post_init__(self) -> None:
        require_choice("dataset", self.dataset, list(DATASETS))
        require_int("n_per_class", self.n_per_class, 2, 5_000)
        require_float("noise", self.noise, 0.0, 5.0)
        require_float("test_fraction", self.test_fraction, 0.05, 0.9)
        require_int("data_seed", self.data_seed, 0, 2**31 - 1)
        if not isinstance(self.hidden, tuple) or not 1 <= len(self.hidden) <= 3:
            raise ValueError(f"hidden must list 1 to 3 layer widths; got {self.hidden!r}.")
        for width in self.hidden:
            require_int("hidden layer width", width, 1, 256)
        require_choice("activation", self.activation, activation_names())
        require_int("init_seed", self.init_seed, 0, 2**31 - 1)
        require_choice("optimizer", self.optimizer, OPTIMIZERS)
        require_float("learning_rate", self.learning_rate, 0.0, 1e6, lo_open=True)
        require_int("batch_size", self.batch_size, 1, 10_000)
        require_float("l2", self.l2, 0.0, 10.0)
        require_int("grid", self.grid, 5, 200)
        require_device_name(self.device)
        require_dtype(self.dtype)

    def model_key(self) -> tuple:
        """The settings that define the data and the initial model (the rest only change training)."""
        return (self.dataset, self.n_per_class, self.noise, self.test_fraction, self.data_seed, self.hidden,
                self.activation, self.init_seed, self.device, self.dtype)


@dataclass(frozen=True, slots=True)
class PlaygroundSnapshot:
    step: int
    train_loss: float
    test_loss: float
    train_accuracy: float
    test_accuracy: float
    surface: tuple[tuple[float, ...], ...]  # (grid, grid) probabilities of class 1, rows along y
    diverged: bool = False
    message: str = ""


class MLP(nn.Module):
    """Linear layers with the chosen activation between them, and a sigmoid on the single output."""

    def __init__(self, hidden: tuple[int, ...], activation: str, generator: torch.Generator) -> None:
        super().__init__()
        sizes = (2, *hidden, 1)
        pairs = zip(sizes[:-1], sizes[1:], strict=True)
        self.layers = nn.ModuleList(nn.utils.skip_init(nn.Linear, a, b) for a, b in pairs)
        for layer in self.layers:  # nn.Linear's own initialisation, from our generator
            nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
            bound = 1 / math.sqrt(layer.in_features)
            nn.init.uniform_(layer.bias, -bound, bound, generator=generator)
        self.act = get_activation(activation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (n, 2) -> (n,) probabilities
        for layer in self.layers[:-1]:
            x = self.act(layer(x))
        return torch.sigmoid(self.layers[-1](x)).squeeze(-1)


class Playground:
    """One model on one dataset. ``step()`` trains one mini-batch step; ``reset()`` restarts it."""

    def __init__(self, config: PlaygroundConfig) -> None:
        self.config = config
        self.device, self.dtype = resolve_device(config.device), resolve_dtype(config.dtype)
        x, y = make_dataset(config.dataset, config.n_per_class, config.noise, config.data_seed)
        split = torch.randperm(len(y), generator=torch.Generator().manual_seed(config.data_seed + 1))
        n_test = max(1, round(len(y) * config.test_fraction))
        to = {"device": self.device, "dtype": self.dtype}
        self.x_test, self.y_test = x[split[:n_test]].to(**to), y[split[:n_test]].to(**to)
        self.x_train, self.y_train = x[split[n_test:]].to(**to), y[split[n_test:]].to(**to)
        lo, hi = x.min(0).values - 0.5, x.max(0).values + 0.5
        self.extent = (float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1]))
        gx = torch.linspace(self.extent[0], self.extent[1], config.grid)
        gy = torch.linspace(self.extent[2], self.extent[3], config.grid)
        yy, xx = torch.meshgrid(gy, gx, indexing="ij")
        self.grid_points = torch.stack([xx.reshape(-1), yy.reshape(-1)], 1).to(**to)  # (grid*grid, 2)
        self.reset()

    def reset(self) -> None:
        """Back to step 0 with the initial weights of ``init_seed`` (the same weights every time)."""
        g = torch.Generator().manual_seed(self.config.init_seed)
        self.model = MLP(self.config.hidden, self.config.activation, g).to(self.device, self.dtype)
        self.batches = torch.Generator().manual_seed(self.config.init_seed + 1)  # mini-batch order
        self.steps_done = 0
        self.set_training(self.config)

    def set_training(self, config: PlaygroundConfig) -> None:
        """Change optimizer, learning rate, batch size or L2 and keep the weights."""
        if config.model_key() != self.config.model_key():
            raise ValueError("set_training only changes training settings; build a new Playground instead.")
        self.config = config
        params = list(self.model.parameters())
        if config.optimizer == "Adam":
            self.optimizer = torch.optim.Adam(params, lr=config.learning_rate, weight_decay=config.l2)
        elif config.optimizer == "SGD + momentum":
            self.optimizer = torch.optim.SGD(params, lr=config.learning_rate, momentum=0.9, weight_decay=config.l2)
        else:
            self.optimizer = None  # plain SGD, written out in step()

    def step(self) -> None:
        """One mini-batch step: forward, loss, backward, update, zero grads."""
        n = len(self.y_train)
        idx = torch.randint(0, n, (min(self.config.batch_size, n),), generator=self.batches)
        x, y = self.x_train[idx.to(self.device)], self.y_train[idx.to(self.device)]
        # forward
        p = self.model(x)  # (batch,)
        # loss
        loss = nn.functional.binary_cross_entropy(p, y)
        # backward
        loss.backward()
        # update
        if self.optimizer is not None:
            self.optimizer.step()
        else:
            with torch.no_grad():
                for w in self.model.parameters():
                    w -= self.config.learning_rate * (w.grad + self.config.l2 * w)
        # zero grads
        for w in self.model.parameters():
            w.grad = None
        self.steps_done += 1

    def snapshot(self) -> PlaygroundSnapshot:
        """Losses and accuracies on train and test, and the surface from one batched forward pass."""
        with torch.no_grad():
            stats = []
            for x, y in ((self.x_train, self.y_train), (self.x_test, self.y_test)):
                p = self.model(x)
                stats += [nn.functional.binary_cross_entropy(p.clamp(0, 1).nan_to_num(0.5), y),
                          ((p >= 0.5) == y.bool()).to(self.dtype).mean(), p.isfinite().all().to(self.dtype)]
            stats += [p.std(), ((p == 0) | (p == 1)).to(self.dtype).mean()]  # stuck: constant or saturated
            surface = self.model(self.grid_points).reshape(self.config.grid, self.config.grid)
            values = torch.stack(stats).tolist()
        train_loss, train_acc, ok1, test_loss, test_acc, ok2, spread, saturated = values
        if not (ok1 and ok2 and math.isfinite(train_loss)):
            return PlaygroundSnapshot(
                self.steps_done, math.nan, math.nan, math.nan, math.nan, (), diverged=True,
                message=f"Training diverged at step {self.steps_done}: the weights are no longer finite. "
                        + (backward_problem(self.config.activation) or self._lr_advice("is too large")))
        rows = tuple(tuple(round(v, 3) for v in row) for row in surface.tolist())
        return PlaygroundSnapshot(self.steps_done, train_loss, test_loss, train_acc, test_acc, rows,
                                  message=self._stuck(spread, saturated, train_acc))

    def _lr_advice(self, verdict: str) -> str:
        lr = self.config.learning_rate
        better = suggested_learning_rate(self.config.optimizer, lr)
        return f"The learning rate {lr:g} {verdict}; try {better:g}, then Reset."

    def _stuck(self, spread: float, saturated: float, accuracy: float) -> str:
        """A hint when training cannot get anywhere: a wrong backward, or a learning rate that is too large."""
        if self.steps_done == 0:
            return ""
        if spread < 1e-6:
            cause = backward_problem(self.config.activation) or (
                f"Its {self.config.activation} units have probably died (stuck at 0). "
                + self._lr_advice("is likely too large"))
            return f"The network gives every point the same answer. {cause}"
        if saturated > 0.5 and accuracy < 0.9:  # pinned outputs are fine when they are right
            cause = backward_problem(self.config.activation) or self._lr_advice("is likely too large")
            return f"The outputs are pinned at exactly 0 or 1, so gradients barely flow. {cause}"
        return ""

    def run(self, steps: int, record_every: int = 10) -> Iterator[PlaygroundSnapshot]:
        """Train ``steps`` more steps from where the model is, yielding a snapshot every ``record_every``."""
        snap = self.snapshot()
        yield snap
        if snap.diverged:
            return
        for i in range(steps):
            try:
                self.step()
            except RuntimeError:  # BCE refuses NaN probabilities: the weights blew up between records
                yield self.snapshot()
                return
            if (i + 1) % record_every == 0 or i == steps - 1:
                snap = self.snapshot()
                yield snap
                if snap.diverged:
                    return
