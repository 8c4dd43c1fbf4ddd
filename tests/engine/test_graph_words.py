"""The graph's names explained (``graph.OP_WORDS``) are the names PyTorch itself gives those operations' nodes."""

from __future__ import annotations

import torch

from autodiff_core.graph import OP_WORDS, ops_explained, two_layer_graph
from autodiff_core.two_layer import TwoLayerConfig


def test_every_explained_name_is_the_node_pytorch_makes_for_that_operation():
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(2, 3, requires_grad=True)
    b = torch.randn(2, requires_grad=True)
    y = torch.rand(4, 1)
    made = [
        torch.nn.functional.linear(x, w, b), w.t(), x.mm(w.t()), x.sum(), x.mean(), x.pow(2), x - 1, x + x, x * x,
        torch.sigmoid(x), torch.tanh(x), x[:, :1].squeeze(), x[:, :1].squeeze(1),
        torch.nn.BCELoss()(torch.sigmoid(x[:, :1]), y), torch.nn.MSELoss()(x[:, :1], y),
    ]
    names = {type(t.grad_fn).__name__ for t in made}
    assert set(OP_WORDS) <= names, set(OP_WORDS) - names


def test_a_graph_s_names_are_explained_once_each_in_the_order_walked():
    graph = two_layer_graph(TwoLayerConfig(N=4, D_in=5, H=3, D_out=2))
    assert [name for name, _ in ops_explained(graph)] == ["SumBackward0", "PowBackward0", "SubBackward0",
                                                          "MmBackward0"]
