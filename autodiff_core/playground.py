"""The playground: an MLP whose activation is any registry Function (the custom ReLU by default) learning
TF Playground's 2-D datasets (classification, or regression with squared loss) from TF's input features,
with Step / Reset semantics, a surface on a grid, and gradient flow (per-layer gradient norms, dead units).

Reset re-draws the initial weights from ``init_seed``, so with the seed unchanged a reset always starts
from the very same weights.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace

import torch
from torch import nn

from . import own_data
from .classes import cross_entropy, surface_values
from .data import EXTENT, is_own, make_playground_data
from .devices import resolve_device, resolve_dtype
from .features import feature_matrix
from .functions import get_activation, softmax
from .gradflow import dead_fractions, no_gradient, weight_grad_norms
from .playground_config import (
    MAX_DEPTH,
    OPTIMIZERS,
    PlaygroundConfig,
    PlaygroundSnapshot,
    backward_problem,
    suggested_learning_rate,
)
from .stopping import checkpoint
from .validation import require_float, require_int

# the settings and the snapshot are declared in playground_config.py; the playground is imported from here
__all__ = ["MAX_DEPTH", "MLP", "OPTIMIZERS", "Playground", "PlaygroundConfig", "PlaygroundSnapshot", "backward_problem",
           "suggested_learning_rate"]


class MLP(nn.Module):
    """Linear layers with the chosen activation between them, and a sigmoid on the single output (none
    for regression), or with ``outputs`` of 3 to 6, one logit per class and ``MySoftmax`` over them."""

    def __init__(self, hidden: tuple[int, ...], activation: str, generator: torch.Generator, *, inputs: int = 2,
                 regression: bool = False, outputs: int = 1) -> None:
        super().__init__()
        sizes = (inputs, *hidden, outputs)
        pairs = zip(sizes[:-1], sizes[1:], strict=True)
        self.layers = nn.ModuleList(nn.utils.skip_init(nn.Linear, a, b) for a, b in pairs)
        for layer in self.layers:  # nn.Linear's own initialisation, from our generator
            nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
            bound = 1 / math.sqrt(layer.in_features)
            nn.init.uniform_(layer.bias, -bound, bound, generator=generator)
        self.act = get_activation(activation)
        self.regression, self.outputs = regression, outputs
        self.weights = [layer.weight for layer in self.layers]
        self.pairs = [(layer.weight, layer.bias) for layer in self.layers]  # F.linear on these skips the
        # nn.Module call machinery, a tenth of a small net's step (``.to()`` keeps the same Parameters)

    def head(self, z: torch.Tensor) -> torch.Tensor:
        """The last layer's (n, outputs) -> the answer: (n,) P(class 1) or a regression's value, or (n, classes)
        probabilities from ``MySoftmax``."""
        if self.outputs > 1:
            return softmax(z)
        z = z.squeeze(-1)
        return z if self.regression else torch.sigmoid(z)

    def forward(self, x: torch.Tensor, hidden: list | None = None) -> torch.Tensor:
        """(n, inputs) -> (n,) probabilities, or values for regression, or (n, classes) probabilities; appends
        each hidden layer's activations (n, width) to ``hidden`` when one is given."""
        for weight, bias in self.pairs[:-1]:
            x = self.act(nn.functional.linear(x, weight, bias))
            if hidden is not None:
                hidden.append(x)
        return self.head(nn.functional.linear(x, *self.pairs[-1]))

    def evaluate(self, columns: torch.Tensor, hidden: list) -> torch.Tensor:
        """forward() for many points at once, with the points as columns: (inputs, n) -> (n,) or (n, classes);
        appends each hidden layer's activations (width, n) to ``hidden``. The same numbers up to float rounding,
        for use under no_grad: on the CPU, ``W @ x + b`` with n columns costs about half of ``F.linear`` on n rows
        when a layer has 2 to 8 inputs (bench/playground_cost.py)."""
        x = columns
        for weight, bias in self.pairs[:-1]:
            x = self.act(torch.addmm(bias[:, None], weight, x))  # (width, n)
            hidden.append(x)
        weight, bias = self.pairs[-1]
        return self.head(torch.addmm(bias[:, None], weight, x).T)  # (n, outputs) into the head


class Playground:
    """One model on one dataset. ``step()`` trains one mini-batch step; ``reset()`` restarts it."""

    def __init__(self, config: PlaygroundConfig) -> None:
        self.config = config
        self.device, self.dtype = resolve_device(config.device), resolve_dtype(config.dtype)
        self._load_data(config)
        self.reset()

    def _load_data(self, config: PlaygroundConfig) -> None:
        """The points, split into train and test, their features, and the grid the surface is drawn on."""
        if is_own(config.dataset):  # the class's own: a point added at the end leaves the others' split alone
            points, y = own_data.tensors(config.points, config.regression)
            test = own_data.split_mask(len(y), config.test_fraction, config.data_seed)
            split, n_test = torch.cat([test.nonzero()[:, 0], (~test).nonzero()[:, 0]]), int(test.sum())
            self.extent = own_data.extent(config.points)
        else:
            points, y = make_playground_data(config.dataset, config.n_points, config.noise, config.data_seed,
                                             config.classes)
            split = torch.randperm(len(y), generator=torch.Generator().manual_seed(config.data_seed + 1))
            n_test = max(1, round(len(y) * config.test_fraction))
            self.extent = EXTENT
        self.points = points  # (n, 2) the coordinates; the network sees their features
        x = feature_matrix(points, config.features)  # (n, features)
        to = {"device": self.device, "dtype": self.dtype}
        self.x_test, self.y_test = x[split[:n_test]].to(**to), y[split[:n_test]].to(**to)
        self.x_train, self.y_train = x[split[n_test:]].to(**to), y[split[n_test:]].to(**to)
        self.points_test, self.points_train = points[split[:n_test]], points[split[n_test:]]  # for drawing
        gx = torch.linspace(self.extent[0], self.extent[1], config.grid)
        gy = torch.linspace(self.extent[2], self.extent[3], config.grid)
        yy, xx = torch.meshgrid(gy, gx, indexing="ij")
        grid_points = torch.stack([xx.reshape(-1), yy.reshape(-1)], 1)  # (grid*grid, 2)
        self.grid_points = feature_matrix(grid_points, config.features).to(**to)  # (grid*grid, features)
        # train, test and grid points as the columns of one (features, n) matrix: one forward per snapshot
        self.columns = torch.cat([self.x_train, self.x_test, self.grid_points]).T.contiguous()
        self.sizes = [len(self.y_train), len(self.y_test), len(self.grid_points)]  # ints: len(tensor) is slow
        self.y_var = y.var(unbiased=False).item() or 1.0  # regression: the loss of always answering the mean
        self.y_both = torch.cat([self.y_train, self.y_test])  # targets of train then test points
        self.y_both_bool = self.y_both.bool()
        # what the loss compares the answers with: class numbers for the softmax's cross-entropy, else y itself
        many = config.outputs > 1
        self.targets_train = self.y_train.long() if many else self.y_train
        self.targets_both = self.y_both.long() if many else self.y_both
        # (2, n) ones on the train then on the test points, and each split's size: _fit's sums and means
        self.split_rows = torch.zeros(2, len(self.y_both), **to)
        self.split_rows[0, :len(self.y_train)] = self.split_rows[1, len(self.y_train):] = 1
        self.split_sizes = torch.tensor([[len(self.y_train)], [len(self.y_test)]], **to)

    def set_points(self, points: tuple) -> None:
        """New points of the class's own (one drawn, one erased, a file read) in place of the old: the weights,
        the optimizer's state and the step stay, so training goes on from where it is on the new data."""
        config = replace(self.config, points=points)  # checked, as every config is
        self._load_data(config)
        self.config = config

    def reset(self) -> None:
        """Back to step 0 with the initial weights of ``init_seed`` (the same weights every time)."""
        g = torch.Generator().manual_seed(self.config.init_seed)
        self.model = MLP(self.config.hidden, self.config.activation, g, inputs=len(self.config.features),
                         regression=self.config.regression, outputs=self.config.outputs).to(self.device, self.dtype)
        self.batches = torch.Generator().manual_seed(self.config.init_seed + 1)  # mini-batch order
        self.steps_done = 0
        self.forked_at: int | None = None  # the step of another run's state it went on from (playground_state)
        self.edits: list[tuple[int, int, int, int | None, float]] = []  # set_weight: (after step, layer, to, from, v)
        self.grad_norms = torch.zeros(len(self.model.layers), device=self.device, dtype=self.dtype)
        self.set_training(self.config)

    def set_training(self, config: PlaygroundConfig) -> None:
        """Change optimizer, learning rate, batch size, L1 or L2 and keep the weights."""
        if config.model_key() != self.config.model_key():
            raise ValueError("set_training only changes training settings; build a new Playground instead.")
        self.config = config
        self.params = list(self.model.parameters())
        self.loss_fn = (nn.functional.mse_loss if config.regression else cross_entropy if config.outputs > 1
                        else nn.functional.binary_cross_entropy)
        if config.optimizer == "Adam":
            self.optimizer = torch.optim.Adam(self.params, lr=config.learning_rate)
        elif config.optimizer == "SGD + momentum":
            self.optimizer = torch.optim.SGD(self.params, lr=config.learning_rate, momentum=0.9)
        else:
            self.optimizer = None  # plain SGD, written out in step()

    def step(self) -> None:
        """One mini-batch step: forward, loss, backward, update, zero grads."""
        config, n = self.config, self.sizes[0]
        idx = torch.randint(0, n, (min(config.batch_size, n),), generator=self.batches)
        if self.device.type != "cpu":
            idx = idx.to(self.device)
        x, y = self.x_train[idx], self.targets_train[idx]
        # forward
        p = self.model.forward(x)  # (batch,) or (batch, classes); forward() skips nn.Module's hook machinery
        # loss: cross-entropy for classes, squared error for regression
        loss = self.loss_fn(p, y)
        # backward
        loss.backward()
        self.grad_norms = weight_grad_norms(self.model.weights)  # gradient flow, before the penalties
        with torch.no_grad():
            # regularization, on the weights only: L2 pulls each weight towards 0 in proportion, L1 by a constant
            for w in self.model.weights if config.l2 or config.l1 else ():
                w.grad += config.l2 * w + config.l1 * w.sign()
            # update
            if self.optimizer is not None:
                self.optimizer.step()
            else:
                for w in self.params:
                    w -= config.learning_rate * w.grad
        # zero grads
        for w in self.params:
            w.grad = None
        self.steps_done += 1

    def snapshot(self) -> PlaygroundSnapshot:
        """Losses and accuracies on train and test, gradient flow, and the surface from one batched forward
        pass; every number leaves the device in one transfer."""
        n_train, n_test, n_grid = self.sizes
        with torch.no_grad():
            hidden = []
            out = self.model.evaluate(self.columns, hidden)  # train, test and grid points in one pass
            points, surface = out.split([n_train + n_test, n_grid])
            if self.config.regression:
                surface = ((surface + 1) / 2).clamp(0, 1)
            if points.dim() == 2:  # many classes: the most any class's probability varies over the points
                surface = surface_values(surface.T)
                lo_hi = torch.stack([torch.zeros_like(points[0, 0]), (points.amax(0) - points.amin(0)).max()])
            else:
                lo_hi = torch.stack(points.aminmax())  # a spread of 0: one answer for every point; NaN or inf: diverged
            dead = dead_fractions([h[:, :n_train] for h in hidden], points_dim=1)
            values = torch.cat([self._fit(points).view(-1), lo_hi, self.grad_norms, dead]).tolist()
            rows = surface.reshape(self.config.grid, self.config.grid).double().round(decimals=3).tolist()
        train_loss, train_acc, pinned, pinned_wrong, test_loss, test_acc, saturated, _, lo, hi = values[:10]
        spread = hi - lo  # NaN or inf unless every output is finite
        layers = len(self.model.layers)
        grad_norms, dead = tuple(values[10:10 + layers]), tuple(values[10 + layers:])
        if not (math.isfinite(spread) and math.isfinite(train_loss)):
            return PlaygroundSnapshot(
                self.steps_done, math.nan, math.nan, math.nan, math.nan, (), diverged=True,
                message=f"Training diverged at step {self.steps_done}: the weights are no longer finite. "
                        + (backward_problem(self.config.activation) or self._lr_advice("is too large")))
        message = self._stuck(spread, saturated, train_acc)
        if self.steps_done and not message and not any(grad_norms):  # every weight's gradient exactly 0
            message = no_gradient(dead, self.config.hidden, pinned, pinned_wrong, train_loss, train_acc, test_acc,
                                  self.config.activation) + " " + self._lr_advice("is likely too large")
        return PlaygroundSnapshot(self.steps_done, train_loss, test_loss, train_acc, test_acc, tuple(map(tuple, rows)),
                                  message=message, grad_norms=grad_norms, dead=dead)

    def _fit(self, p: torch.Tensor) -> torch.Tensor:
        """(2, 4): for the train then the test points, [loss, accuracy, share of outputs at exactly 0 or 1, share
        pinned so on the wrong side], from the outputs ``p`` on the train then the test points; for regression
        the "accuracy" is the share of variance explained (and nothing is on a wrong side). All eight means come
        from one product with the split's indicator rows."""
        if p.dim() == 2:  # many classes: cross-entropy of MySoftmax's probabilities, and the class picked
            right, pinned = p.argmax(1) == self.targets_both, p.amax(1) == 1
            per_point = torch.stack([cross_entropy(p.nan_to_num(0.0), self.targets_both, reduction="none"),
                                     right, pinned, pinned & ~right])
            return self.split_rows @ per_point.T / self.split_sizes
        pinned = (p == 0) | (p == 1)
        if self.config.regression:
            per_point = torch.stack([(p - self.y_both).square(), pinned])  # (2, n): squared error, pinned
            mse, share = (self.split_rows @ per_point.T / self.split_sizes).unbind(1)  # (2,) each
            return torch.stack([mse, (1 - mse / self.y_var).clamp(0, 1), share, torch.zeros_like(share)], 1)
        bce = nn.functional.binary_cross_entropy(p.clamp(0, 1).nan_to_num(0.5), self.y_both, reduction="none")
        right = (p >= 0.5) == self.y_both_bool
        per_point = torch.stack([bce, right, pinned, pinned & ~right])  # (4, n): loss, right, pinned, pinned wrong
        return self.split_rows @ per_point.T / self.split_sizes  # sums over each split, over its size

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
            checkpoint()  # Stop ends the run here, between whole steps: the model stays at a step
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

    # ---- A weight set by hand (TF Playground: click a link of the diagram, type a value) ----

    def set_weight(self, layer: int, target: int, source: int | None, value: float) -> None:
        """Set one parameter by hand: the weight of the link from neuron ``source`` of column ``layer`` to
        neuron ``target`` of column ``layer + 1`` (column 0 is the inputs, the last the output), or, when
        ``source`` is None, ``target``'s bias. Steps continue from it; the optimizer keeps its state. Each edit
        is kept in ``edits`` (until ``reset``), so an exported script makes it at the same step."""
        if not 0 <= layer < len(self.model.layers):
            raise ValueError(f"layer must be 0 to {len(self.model.layers) - 1}; got {layer!r}.")
        weight, bias = self.model.layers[layer].weight, self.model.layers[layer].bias  # (out, in), (out,)
        require_int("target", target, 0, weight.shape[0] - 1)
        if source is not None:
            require_int("source", source, 0, weight.shape[1] - 1)
        require_float("value", value, -1e6, 1e6)
        with torch.no_grad():  # in place: the optimizer and the model hold these very Parameters
            if source is None:
                bias[target] = value
            else:
                weight[target, source] = value
        self.edits.append((self.steps_done, layer, target, source, float(value)))
