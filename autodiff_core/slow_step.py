"""One playground step in slow motion: the mini-batch, each layer's forward values, the loss, the gradients
flowing back (through the custom Function's backward, with its ctx), and the update.

The step shown is the step taken: the batch is drawn from the playground's own generator, and then
``Playground.step`` runs on that very batch, so the model moves on exactly as a plain Step would.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from .functions import FUNCTIONS
from .graph import Graph, walk
from .inspector import FunctionTrace, inspector_table, trace_function
from .playground import Playground


@dataclass(frozen=True)
class LayerTrace:
    """Layer ``index``'s numbers for the first example of the batch."""

    index: int
    pre: list[float]  # z = W h + b, what goes into the activation (or the output's logit)
    post: list[float]  # activation(z) (for the output: the prediction)
    grad_post: list[float]  # dLoss/d(post): what flows back into the activation's backward as grad_output
    grad_pre: list[float]  # dLoss/dz: what its backward returns
    grad_norm: float  # |dLoss/dW|
    update_norm: float  # |W after - W before|


@dataclass(frozen=True)
class StepTrace:
    step: int  # the step this was (the model's steps_done before it)
    batch: int
    target: float  # the first example's target
    loss: float
    layers: list[LayerTrace]
    graph: Graph  # the backward graph behind the loss (the X-ray's view)
    function: FunctionTrace | None  # the custom Function on layer 1, first example (the X-ray's ctx view)


def slow_step(pg: Playground) -> StepTrace:
    """Take one step of ``pg`` and return what happened in it."""
    state = pg.batches.get_state()
    n = pg.sizes[0]
    idx = torch.randint(0, n, (min(pg.config.batch_size, n),), generator=pg.batches)
    pg.batches.set_state(state)  # pg.step() draws this same batch again
    x, y = pg.x_train[idx.to(pg.device)], pg.targets_train[idx.to(pg.device)]
    pres, posts, h = [], [], x
    for i, layer in enumerate(pg.model.layers):
        z = nn.functional.linear(h, layer.weight, layer.bias)  # (batch, width)
        last = i == len(pg.model.layers) - 1
        h = pg.model.head(z) if last else pg.model.act(z)  # the output: sigmoid, MySoftmax, or z (regression)
        pres.append(z)
        posts.append(h)
    loss = pg.loss_fn(h, y)
    weights = [layer.weight for layer in pg.model.layers]
    grads = torch.autograd.grad(loss, [*pres, *posts, *weights], retain_graph=True)
    k = len(pres)
    graph = walk(loss, {id(w): f"layers[{i}].weight" for i, w in enumerate(weights)}
                 | {id(layer.bias): f"layers[{i}].bias" for i, layer in enumerate(pg.model.layers)})
    function = None
    if pg.config.activation in FUNCTIONS:
        function = trace_function(pg.config.activation, pres[0][0], grads[k][0])
    before = [w.detach().clone() for w in weights]
    pg.step()
    first = lambda t: t[0].detach().reshape(-1).tolist()  # noqa: E731
    layers = [LayerTrace(i, first(pres[i]), first(posts[i]), first(grads[k + i]), first(grads[i]),
                         float(grads[2 * k + i].norm()), float((weights[i].detach() - before[i]).norm()))
              for i in range(k)]
    return StepTrace(pg.steps_done - 1, len(idx), y[0].item(), loss.item(), layers, graph, function)


UNITS = 8  # units shown a layer: the table fits a laptop's page (1280 px with the sidebar) without scrolling
QUANTITIES = (("z = W h + b", "pre"), ("activation(z)", "post"), ("grad_output", "grad_post"),
              ("grad_input", "grad_pre"))  # forward down a layer's rows, then its backward: dLoss/d act, dLoss/dz


def number(v: float) -> str:
    """3 significant figures in few characters (8 for most): 6.04, -0.0123, 5.19e-4 (gradients are small)."""
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    mantissa, exponent = f"{v:.2e}".split("e")  # rounded first: 999.9 is 1e3, -0.009999 is -0.01
    if -2 <= int(exponent) < 3:
        return f"{v:.3g}"
    return f"{float(mantissa):g}e{int(exponent)}"


def forward_backward_table(t: StepTrace) -> dict[str, list[str]]:
    """For the batch's first example, a layer's units across and four rows a layer: its forward (z, then the
    activation), then its backward (grad_output flows into the activation's backward, grad_input = dLoss/dz
    comes out). At most ``UNITS`` units, so the table fits a laptop's page; the layer is named on its first row."""
    names = [f"layer {i + 1}" for i in range(len(t.layers) - 1)] + ["output"]
    width = min(UNITS, max(len(lt.pre) for lt in t.layers))
    table: dict[str, list[str]] = {"layer": [], "value": [], **{f"unit {j + 1}": [] for j in range(width)}}
    for name, lt in zip(names, t.layers, strict=True):
        for row, (label, field) in enumerate(QUANTITIES):
            values = getattr(lt, field)
            table["layer"].append(name if row == 0 else "")
            table["value"].append(label)
            for j in range(width):
                table[f"unit {j + 1}"].append(number(values[j]) if j < len(values) else "")
    return table


def function_table(t: StepTrace) -> dict[str, list[str]]:
    """The X-ray's table of the custom Function on layer 1 (input, what ctx saved, grad_output, grad_input), for
    the first ``UNITS`` units in the forward/backward table's short numbers, so it fits the page beside it."""
    table = inspector_table(t.function)
    units = [key for key in table if key != "step"][:UNITS]
    return {"step": table["step"], **{key: [number(float(v)) for v in table[key]] for key in units}}


def update_table(t: StepTrace) -> dict[str, list]:
    names = [f"layer {i + 1}" for i in range(len(t.layers) - 1)] + ["output"]
    return {"layer": names, "|dLoss/dW|": [f"{lt.grad_norm:.3g}" for lt in t.layers],
            "|W after - W before|": [f"{lt.update_norm:.3g}" for lt in t.layers]}
