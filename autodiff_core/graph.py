"""Walk the autograd graph behind a loss, from ``loss.grad_fn`` back to the leaves, and draw it as DOT.

Each node of the backward graph is a function object: ``AccumulateGrad`` for a leaf (it holds the leaf in
``.variable``), ``MmBackward0`` and friends for built-in ops (their saved tensors sit in ``_saved_*``
attributes), and ``MyReLUBackward`` for our Function, whose node *is* the ``ctx`` that forward filled.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .functions import get_activation
from .logistic import LogisticConfig, make_data_and_model
from .two_layer import TwoLayerConfig, make_problem


@dataclass(frozen=True)
class Saved:
    name: str
    shape: tuple[int, ...]
    dtype: str
    device: str


@dataclass(frozen=True)
class Node:
    id: str
    label: str  # e.g. "MmBackward0" or "w1"
    kind: str  # "leaf", "op" or "custom"
    shape: tuple[int, ...] | None = None  # leaves only
    requires_grad: bool | None = None  # leaves only
    grad_norm: float | None = None  # leaves only, once backward has run
    saved: tuple[Saved, ...] = ()


@dataclass(frozen=True)
class Graph:
    nodes: list[Node]
    edges: list[tuple[str, str]] = field(default_factory=list)  # (input, consumer): forward direction

    def by_label(self, label: str) -> list[Node]:
        return [n for n in self.nodes if n.label == label]


def _describe(t: torch.Tensor, name: str) -> Saved:
    return Saved(name, tuple(t.shape), str(t.dtype).replace("torch.", ""), str(t.device))


def _saved(fn) -> tuple[Saved, ...]:
    if isinstance(fn, torch.autograd.function.BackwardCFunction):  # a custom Function: its ctx
        return tuple(_describe(t, f"saved_tensors[{i}]") for i, t in enumerate(fn.saved_tensors))
    out = []
    for attr in sorted(a for a in dir(fn) if a.startswith("_saved_")):
        try:
            value = getattr(fn, attr)
        except RuntimeError:  # freed after backward
            continue
        if isinstance(value, torch.Tensor):
            out.append(_describe(value, attr.removeprefix("_saved_")))
    return tuple(out)


def walk(loss: torch.Tensor, names: dict[int, str] | None = None) -> Graph:
    """The backward graph of ``loss``. ``names`` maps ``id(leaf)`` to a display name such as "w1"."""
    names = names or {}
    nodes, links, seen, queue = [], [], {}, [loss.grad_fn]
    while queue:
        fn = queue.pop(0)
        if fn is None or id(fn) in seen:
            continue
        seen[id(fn)] = node_id = f"n{len(seen)}"
        if hasattr(fn, "variable"):  # AccumulateGrad: a leaf that wants a gradient
            v = fn.variable
            grad = None if v.grad is None else float(v.grad.norm())
            nodes.append(Node(node_id, names.get(id(v), f"leaf {tuple(v.shape)}"), "leaf", tuple(v.shape),
                              v.requires_grad, grad))
        else:
            custom = isinstance(fn, torch.autograd.function.BackwardCFunction)
            nodes.append(Node(node_id, type(fn).__name__, "custom" if custom else "op", saved=_saved(fn)))
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                queue.append(nxt)
                links.append((id(nxt), id(fn)))  # input -> consumer; ids become node ids below
    edges = [(seen[a], seen[b]) for a, b in links]
    return Graph(nodes, edges)


def to_dot(graph: Graph, title: str = "") -> str:
    """Graphviz DOT: leaves as boxes, ops as ellipses, the custom Function's node in orange."""
    lines = ["digraph autograd {", '  rankdir="LR"; node [fontname="Helvetica", fontsize=12];']
    if title:
        lines.append(f'  label="{title}"; labelloc="t";')
    for n in graph.nodes:
        if n.kind == "leaf":
            grad = "" if n.grad_norm is None else f"\\n|grad| = {n.grad_norm:.3g}"
            text = f"{n.label}\\nshape {n.shape}\\nrequires_grad={n.requires_grad}{grad}"
            attrs = 'shape=box, style=filled, fillcolor="#dbe9f6"'
        else:
            saved = "".join(f"\\n{s.name}: {s.shape} {s.dtype} {s.device}" for s in n.saved)
            text = f"{n.label}{saved}"
            attrs = ('style=filled, fillcolor="#ff9f40", penwidth=2' if n.kind == "custom"
                     else 'style=filled, fillcolor="#eeeeee"')
        lines.append(f'  {n.id} [label="{text}", {attrs}];')
    lines += [f"  {a} -> {b};" for a, b in graph.edges]
    lines.append("}")
    return "\n".join(lines)


def two_layer_graph(config: TwoLayerConfig, *, backward: bool = True) -> Graph:
    """The graph of one step of the two-layer net, from its first forward."""
    x, y, w1, w2 = make_problem(config)
    loss = (get_activation(config.activation)(x.mm(w1)).mm(w2) - y).pow(2).sum()
    if backward:
        loss.backward(retain_graph=True)
    return walk(loss, {id(w1): "w1", id(w2): "w2"})


def logistic_graph(config: LogisticConfig, *, backward: bool = True) -> Graph:
    """The graph of one step of the logistic regression, from its first forward."""
    x, y, model = make_data_and_model(config)
    loss = torch.nn.BCELoss()(model(x).squeeze(), y)
    names = {id(model.features.weight): "features.weight", id(model.features.bias): "features.bias"}
    if backward:
        loss.backward(retain_graph=True)
    return walk(loss, names)
