"""A playground run as a standalone PyTorch script: data, features, network, the custom Function's source
(and with 3 to 6 classes, MySoftmax's and the cross-entropy's), optimizer and seeds, written out in plain
PyTorch. ``python run.py`` retrains from step 0 and prints the training loss after every step; the numbers are
the app's, to float tolerance.

The points are written into the file (exactly: each float32 printed in full), so the script needs nothing
but torch; the class's own points, drawn or uploaded, travel that way too. Initial weights and mini-batches
come from the same seeded generators, drawn in the same order as ``playground.Playground``. The training
settings exported are the current ones: a run whose learning rate was changed half-way is re-run with the last
rate throughout. Weights set by hand in the app (``Playground.set_weight``) are set again after the same step,
to the same values.
"""

from __future__ import annotations

import inspect

import torch

from .classes import cross_entropy
from .features import FEATURE_SOURCE
from .functions import BUILTIN_ACTIVATIONS, FUNCTIONS, MySoftmax
from .playground import Playground, PlaygroundConfig

_HEADER = '''"""Lesson 5's run as plain PyTorch: {dataset}{classes}, features {features}, hidden layers {hidden},
activation {activation}, {optimizer} at learning rate {lr:g}, batch {batch}, L1 {l1:g}, L2 {l2:g}.

    python {filename}        # prints: step, training loss over the whole training set
"""

import math

import torch
from torch import nn
from torch.autograd import Function

STEPS = {steps}
DTYPE = torch.{dtype}

# The data, exactly as the app drew it ({dataset}, data seed {data_seed}): (x, y) points and targets.
TRAIN_POINTS = {train_points}
TRAIN_Y = {train_y}
TEST_POINTS = {test_points}
TEST_Y = {test_y}


def features(p):
    """(n, 2) points -> (n, {n_features}) inputs: {features}."""
    return torch.stack([{feature_columns}], 1)


'''

_MODEL = '''

class MLP(nn.Module):
    """Linear layers with the activation between them{head}."""

    def __init__(self, sizes, generator):
        super().__init__()
        self.layers = nn.ModuleList(nn.utils.skip_init(nn.Linear, a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        for layer in self.layers:  # nn.Linear's own initialisation, drawn from our generator
            nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
            bound = 1 / math.sqrt(layer.in_features)
            nn.init.uniform_(layer.bias, -bound, bound, generator=generator)

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = activation(layer(x))
        return {output}


x_train = features(torch.tensor(TRAIN_POINTS)).to(DTYPE)  # features in float32, as the app computes them
y_train = torch.tensor(TRAIN_Y).{targets}
x_test = features(torch.tensor(TEST_POINTS)).to(DTYPE)
y_test = torch.tensor(TEST_Y).{targets}
model = MLP({sizes}, torch.Generator().manual_seed({init_seed})).to(DTYPE)
weights = [layer.weight for layer in model.layers]
params = list(model.parameters())
batches = torch.Generator().manual_seed({batch_seed})  # the mini-batch order
loss_fn = {loss}
{optimizer_line}
lr, l1, l2 = {lr!r}, {l1!r}, {l2!r}
{edits}
for step in range(1, STEPS + 1):
{edit_call}    idx = torch.randint(0, len(y_train), ({batch_size},), generator=batches)
    x, y = x_train[idx], y_train[idx]
    # forward
    p = model(x)
    # loss
    loss = loss_fn(p, y)
    # backward
    loss.backward()
    with torch.no_grad():
        # regularization, on the weights only
        if l1 or l2:
            for w in weights:
                w.grad += l2 * w + l1 * w.sign()
        # update
{update}
    # zero grads
    for w in params:
        w.grad = None
    with torch.no_grad():
        print(step, loss_fn(model(x_train), y_train).item())
{edit_end}with torch.no_grad():
    print("test loss", loss_fn(model(x_test), y_test).item())
'''

_OPTIMIZERS = {
    "Adam": ("optimizer = torch.optim.Adam(params, lr={lr!r})", "        optimizer.step()"),
    "SGD + momentum": ("optimizer = torch.optim.SGD(params, lr={lr!r}, momentum=0.9)", "        optimizer.step()"),
    "SGD (by hand)": ("", "        for w in params:\n            w -= lr * w.grad"),
}


_EDITS = '''
# Weights set by hand in the app: after this many steps, (layer, to neuron, from neuron or None for the bias, value)
EDITS = {edits!r}


def set_by_hand(done):
    """Set the weights (and biases) typed in the app after ``done`` steps, as the app did."""
    with torch.no_grad():
        for layer, to, source, value in EDITS.get(done, ()):
            if source is None:
                model.layers[layer].bias[to] = value
            else:
                model.layers[layer].weight[to, source] = value

'''


def _edits(pg: Playground, steps: int) -> dict[str, str]:
    """The script's lines that make ``pg``'s hand edits (none when there are none), up to ``steps`` steps."""
    edits: dict[int, list] = {}
    for done, layer, to, source, value in pg.edits:
        if done <= steps:
            edits.setdefault(done, []).append((layer, to, source, value))
    if not edits:
        return {"edits": "", "edit_call": "", "edit_end": ""}
    return {"edits": _EDITS.format(edits=edits), "edit_call": "    set_by_hand(step - 1)\n",
            "edit_end": "set_by_hand(STEPS)\n"}


def exportable(activation: str) -> bool:
    """Whether a run with this activation can be exported (a registry Function or a built-in)."""
    return activation in FUNCTIONS or activation in BUILTIN_ACTIVATIONS


def activation_source(name: str) -> str:
    """The activation as code: the custom Function's own source and its ``apply``, or a built-in."""
    if name in BUILTIN_ACTIVATIONS:
        return f"activation = {name}\n"
    if name not in FUNCTIONS:
        raise ValueError(f"{name!r} is a Function written in the app; only the registry's Functions and the "
                         f"built-ins can be exported.")
    cls = FUNCTIONS[name].fn
    return f"{inspect.getsource(cls)}\n\nactivation = {cls.__name__}.apply\n"


def _floats(t: torch.Tensor) -> str:
    return repr(t.tolist())  # float32 -> Python float is exact, and repr round-trips


def export_script(pg: Playground, steps: int | None = None, filename: str = "playground_run.py") -> str:
    """The source of a script that re-runs ``pg``'s run for ``steps`` steps (default: the steps done)."""
    c: PlaygroundConfig = pg.config
    if c.device != "cpu":
        raise ValueError("Export a run on the CPU: the script reproduces CPU arithmetic.")
    y = {"train_y": pg.y_train, "test_y": pg.y_test}
    opt_line, update = _OPTIMIZERS[c.optimizer]
    fields = dict(dataset=c.dataset, classes=f" ({c.classes} classes)" if c.outputs > 1 else "",
                  features=", ".join(c.features), hidden=c.hidden, activation=c.activation,
                  optimizer=c.optimizer, lr=c.learning_rate, batch=c.batch_size, l1=c.l1, l2=c.l2,
                  filename=filename, steps=pg.steps_done if steps is None else steps, dtype=c.dtype,
                  data_seed=c.data_seed, train_points=_floats(pg.points_train), test_points=_floats(pg.points_test),
                  **{k: _floats(v.float()) for k, v in y.items()}, n_features=len(c.features),
                  feature_columns=", ".join(FEATURE_SOURCE[f] for f in c.features))
    model = dict(**_head(c), sizes=(len(c.features), *c.hidden, c.outputs), init_seed=c.init_seed,
                 batch_seed=c.init_seed + 1,
                 optimizer_line=opt_line.format(lr=c.learning_rate), lr=c.learning_rate, l1=c.l1, l2=c.l2,
                 batch_size=min(c.batch_size, len(pg.y_train)), update=update,
                 **_edits(pg, fields["steps"]))
    return _HEADER.format(**fields) + activation_source(c.activation) + _output_source(c) + _MODEL.format(**model)


def _head(c: PlaygroundConfig) -> dict[str, str]:
    """The network's output and loss as the script writes them: a regression's value and squared error, a
    sigmoid and binary cross-entropy, or MySoftmax and the cross-entropy of its probabilities."""
    if c.regression:
        return dict(head="", output="self.layers[-1](x).squeeze(-1)", loss="nn.functional.mse_loss",
                    targets="to(DTYPE)")
    if c.outputs == 1:
        return dict(head=", and a sigmoid on the output", output="torch.sigmoid(self.layers[-1](x).squeeze(-1))",
                    loss="nn.functional.binary_cross_entropy", targets="to(DTYPE)")
    return dict(head=f", and MySoftmax over the {c.classes} class outputs", output="softmax(self.layers[-1](x))",
                loss="cross_entropy", targets="long()  # class numbers")


def _output_source(c: PlaygroundConfig) -> str:
    """With 3 to 6 classes: MySoftmax and the cross-entropy, as the app's own source."""
    if c.outputs == 1:
        return ""
    return (f"\n\n{inspect.getsource(MySoftmax)}\n\nsoftmax = MySoftmax.apply\n\n\n"
            f"{inspect.getsource(cross_entropy)}")
