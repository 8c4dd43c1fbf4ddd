"""The X-ray engine: graph walker, ctx inspector and the side-by-side equivalences, against PyTorch."""

import pytest
import torch

from autodiff_core import LogisticConfig, TwoLayerConfig
from autodiff_core.compare import custom_vs_builtin, manual_vs_optim_sgd, zero_grad_comparison
from autodiff_core.graph import logistic_graph, to_dot, two_layer_graph, walk
from autodiff_core.inspector import trace_function

SMALL = TwoLayerConfig(N=8, D_in=5, H=4, D_out=3)


def test_two_layer_graph_has_the_known_shape():
    graph = two_layer_graph(SMALL)
    labels = sorted(n.label for n in graph.nodes)
    assert labels == sorted(["SumBackward0", "PowBackward0", "SubBackward0", "MmBackward0", "MmBackward0",
                             "MyReLUBackward", "w1", "w2"])
    [custom] = [n for n in graph.nodes if n.kind == "custom"]
    assert custom.label == "MyReLUBackward"
    assert [(s.shape, s.dtype, s.device) for s in custom.saved] == [((8, 4), "float32", "cpu")]
    leaves = {n.label: n for n in graph.nodes if n.kind == "leaf"}
    assert leaves["w1"].shape == (5, 4) and leaves["w2"].shape == (4, 3) and leaves["w1"].requires_grad
    assert len(graph.edges) == 7  # a tree: 8 nodes


def test_leaf_gradient_norms_appear_after_backward_and_match_autograd():
    before = {n.label: n for n in two_layer_graph(SMALL, backward=False).nodes}
    after = {n.label: n for n in two_layer_graph(SMALL).nodes}
    assert before["w1"].grad_norm is None
    from autodiff_core.two_layer import make_problem

    x, y, w1, w2 = make_problem(SMALL)
    (torch.relu(x.mm(w1)).mm(w2) - y).pow(2).sum().backward()
    assert after["w1"].grad_norm == pytest.approx(w1.grad.norm().item())
    assert after["w2"].grad_norm == pytest.approx(w2.grad.norm().item())


def test_logistic_graph_and_dot():
    graph = logistic_graph(LogisticConfig())
    labels = {n.label for n in graph.nodes}
    assert {"BinaryCrossEntropyBackward0", "SigmoidBackward0", "AddmmBackward0", "features.weight",
            "features.bias"} <= labels
    assert not [n for n in graph.nodes if n.kind == "custom"]
    dot = to_dot(graph, "logistic")
    assert dot.startswith("digraph") and "features.weight" in dot and dot.count("->") == len(graph.edges)


def test_walk_sees_a_shared_leaf_once():
    w = torch.randn(3, requires_grad=True)
    graph = walk((w * w).sum() + w.sum(), {id(w): "w"})
    assert [n.label for n in graph.nodes].count("w") == 1


def test_ctx_inspector_shows_what_ctx_held():
    t = trace_function("ReLU", torch.tensor([-1.0, 2.0]), torch.tensor([5.0, 7.0]))
    assert t.saved[0].values == [-1.0, 2.0] and t.needs_input_grad == (True,)
    assert t.grad_input == [0.0, 7.0] == t.reference_grad_input
    modern = trace_function("ReLU (modern form)", torch.tensor([-1.0, 2.0]), torch.tensor([5.0, 7.0]))
    assert modern.grad_input == t.grad_input and modern.saved[0].values == t.saved[0].values
    with pytest.raises(ValueError, match="input's shape"):
        trace_function("ReLU", torch.zeros(2), torch.zeros(3))


def test_manual_sgd_takes_the_optimizers_steps_bit_for_bit():
    steps = manual_vs_optim_sgd(LogisticConfig(), 150)
    assert all(s.manual == s.optim and s.manual_buffer == s.optim_buffer for s in steps)
    assert steps[-1].manual != steps[0].manual  # it did move


def test_manual_sgd_without_momentum_is_plain_gradient_descent():
    steps = manual_vs_optim_sgd(LogisticConfig(momentum=0.0), 30)
    assert all(s.manual == s.optim for s in steps)


def test_zero_grad_comparison_same_start_weights_grow():
    right, forgot = zero_grad_comparison(LogisticConfig(record_every=1))
    assert right[0].iteration == forgot[0].iteration == 0
    assert right[0].loss == forgot[0].loss  # same data, same start
    assert abs(forgot[-1].w0) + abs(forgot[-1].w1) > 5 * (abs(right[-1].w0) + abs(right[-1].w1))


def test_custom_and_builtin_relu_differ_only_after_an_exact_zero():
    steps = custom_vs_builtin(TwoLayerConfig(steps=200))  # as lesson 4 runs it
    first_diff = next(s.step for s in steps if s.max_grad_diff > 0)
    first_zero = next(s.step for s in steps if s.exact_zeros)
    assert first_diff == first_zero  # the first difference is exactly where a pre-activation hit 0.0
    assert all(s.loss_custom == s.loss_builtin for s in steps[: first_zero + 1])


def test_custom_and_builtin_relu_are_identical_in_float64():
    steps = custom_vs_builtin(TwoLayerConfig(steps=100, dtype="float64"))
    assert all(s.max_grad_diff == 0 and s.exact_zeros == 0 for s in steps)
    assert all(s.loss_custom == s.loss_builtin for s in steps)


def test_walk_after_a_backward_that_freed_the_graph():
    """A backward without retain_graph frees every saved tensor, a custom Function's ctx included: the
    walk still draws the graph, with nothing listed as saved."""
    from autodiff_core.functions import MyReLU

    x = torch.randn(4, 3)
    w = torch.randn(3, 2, requires_grad=True)
    loss = MyReLU.apply(x.mm(w)).sum()
    loss.backward()
    graph = walk(loss, {id(w): "w"})
    [custom] = [n for n in graph.nodes if n.kind == "custom"]
    assert custom.label == "MyReLUBackward" and custom.saved == ()
    assert {n.label for n in graph.nodes} == {"SumBackward0", "MyReLUBackward", "MmBackward0", "w"}


def test_dot_outlines_every_node_and_keys_its_ids():
    """Every node has an outline colour; two graphs drawn with different keys share no node id (the
    browser morphs nodes that share an id, which cost the logistic graph's boxes their outlines)."""
    import re

    dots = [to_dot(two_layer_graph(SMALL), key="tl"), to_dot(logistic_graph(LogisticConfig()), key="lr")]
    ids = []
    for dot in dots:
        nodes = [line for line in dot.splitlines() if "[label=" in line]
        assert nodes and all(re.search(r'\bcolor="#[0-9a-f]{6}"', line) for line in nodes)
        ids.append({line.split()[0] for line in nodes})
    assert not ids[0] & ids[1]
    assert 'rankdir="TB"' in dots[0] and "fontsize=12" in dots[0]
    assert "#ff9f40" in dots[0] and "#ff9f40" not in dots[1]  # orange only where a custom Function ran
