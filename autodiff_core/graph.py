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
        try:
            tensors = fn.saved_tensors
        except RuntimeError:  # freed by a backward without retain_graph=True
            return ()
        return tuple(_describe(t, f"ctx.saved_tensors[{i}]") for i, t in enumerate(tensors))
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


NODE_STYLE = {  # kind -> Graphviz attributes; every node gets an outline (color) as well as a fill
    "leaf": 'shape=box, style=filled, fillcolor="#dbe9f6", color="#1f4e79", penwidth=1.5',
    "op": 'shape=box, style="filled,rounded", fillcolor="#eeeeee", color="#555555"',
    "custom": 'shape=box, style="filled,rounded", fillcolor="#ff9f40", color="#7a3d00", penwidth=2.5',
}


def _node_text(n: Node) -> str:
    if n.kind == "leaf":
        grad = "" if n.grad_norm is None else f"\\n|grad| = {n.grad_norm:.3g}"
        return f"{n.label}: {n.shape}{grad}"
    saved = (f"{s.name}: {s.shape}" if s.name.startswith("ctx.") else f"saved {s.name}: {s.shape}" for s in n.saved)
    return n.label + "".join(f"\\n{line}" for line in saved)


# What each built-in node of the lessons' graphs runs the backward of, in a student's words. PyTorch names a node
# after its operation, plus "Backward" and a version number (the 0).
OP_WORDS = {
    "AddmmBackward0": "x @ W.T + b, what nn.Linear computes (add to a matrix multiply)",
    "MmBackward0": "a matrix multiply, x @ w",
    "TBackward0": "W.T, the weight matrix transposed, as nn.Linear uses it",
    "SumBackward0": "a sum over every entry, the loss's Σ",
    "MeanBackward0": "a mean over every entry",
    "PowBackward0": "a power: the square in (y_pred - y)²",
    "SubBackward0": "a subtraction: y_pred - y",
    "AddBackward0": "an addition",
    "MulBackward0": "an element-wise multiply",
    "SigmoidBackward0": "the sigmoid",
    "TanhBackward0": "tanh",
    "SqueezeBackward0": "squeeze(), which drops a dimension of size 1",
    "SqueezeBackward1": "squeeze(dim), which drops that dimension of size 1",
    "BinaryCrossEntropyBackward0": "the loss nn.BCELoss (binary cross-entropy)",
    "MseLossBackward0": "the loss nn.MSELoss (mean squared error)",
}


def ops_explained(graph: Graph) -> list[tuple[str, str]]:
    """(name, what it runs the backward of) for each built-in node of ``graph`` that ``OP_WORDS`` knows, in the
    order the graph was walked (from the loss up), each name once."""
    names = dict.fromkeys(n.label for n in graph.nodes if n.kind == "op")
    return [(name, OP_WORDS[name]) for name in names if name in OP_WORDS]


def tensor_kinds(graph: Graph) -> str:
    """The dtypes and devices of the tensors the graph holds, e.g. "float32 on cpu" (one line for all)."""
    kinds = sorted({f"{s.dtype} on {s.device}" for n in graph.nodes for s in n.saved})
    return ", ".join(kinds)


FONTSIZE = 12  # points: drawn at 4/3 px per point, i.e. 16 px, the charts' size


def to_dot(graph: Graph, title: str = "", *, key: str = "g", fontsize: int = FONTSIZE) -> str:
    """Graphviz DOT, top to bottom in the direction the data flowed (leaves at the top, the loss at the
    bottom): leaves as blue boxes, built-in ops as grey rounded boxes, the custom Function's node in orange.

    ``key`` prefixes every node id: the browser animates from one graph to the next by node id, so two
    different graphs must not share ids (a leaf box would be morphed into an op's ellipse and lose its
    outline). Tall and narrow keeps the text large on a laptop and a phone.
    """
    lines = ["digraph autograd {", '  rankdir="TB"; nodesep=0.2; ranksep=0.25; bgcolor="transparent";',
             f'  node [fontname="Helvetica", fontsize={fontsize}, margin="0.1,0.03"];',
             '  edge [color="#555555", arrowsize=0.8];']
    if title:
        lines.append(f'  label="{title}"; labelloc="t"; fontname="Helvetica"; fontsize={fontsize};')
    for n in graph.nodes:
        lines.append(f'  {key}{n.id} [label="{_node_text(n)}", {NODE_STYLE[n.kind]}];')
    lines += [f"  {key}{a} -> {key}{b};" for a, b in graph.edges]
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
