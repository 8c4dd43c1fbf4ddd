"""A step in slow motion is the step a plain Step takes, and its numbers are autograd's."""

import torch

from autodiff_core.playground import Playground, PlaygroundConfig
from autodiff_core.slow_step import forward_backward_table, slow_step, update_table


def test_slow_step_takes_the_same_step_as_step():
    config = PlaygroundConfig(activation="Tanh", hidden=(5, 3), optimizer="SGD (by hand)", l1=1e-3)
    a, b = Playground(config), Playground(config)
    for _ in range(3):
        trace = slow_step(a)
        b.step()
    assert a.steps_done == b.steps_done == 3 and trace.step == 2
    for p, q in zip(a.model.parameters(), b.model.parameters(), strict=True):
        assert torch.equal(p, q)
    assert torch.equal(a.batches.get_state(), b.batches.get_state())  # the next batches agree too


def test_slow_step_numbers_are_autograds_and_the_functions():
    pg = Playground(PlaygroundConfig(activation="Tanh", hidden=(4,)))
    w, bias = (t.detach().clone() for t in (pg.model.layers[0].weight, pg.model.layers[0].bias))
    trace = slow_step(pg)
    first = trace.layers[0]
    torch.testing.assert_close(torch.tensor(first.post), torch.tanh(torch.tensor(first.pre)))
    # The custom Function's backward, traced with the X-ray's inspector on this very z and grad_output,
    # returns the dLoss/dz that autograd found, and matches torch.tanh's backward.
    fn = trace.function
    torch.testing.assert_close(torch.tensor(fn.input), torch.tensor(first.pre))
    torch.testing.assert_close(torch.tensor(fn.grad_output), torch.tensor(first.grad_post))
    torch.testing.assert_close(torch.tensor(fn.grad_input), torch.tensor(first.grad_pre))
    torch.testing.assert_close(torch.tensor(fn.grad_input), torch.tensor(fn.reference_grad_input))
    z = torch.tensor(first.pre)
    torch.testing.assert_close(torch.tensor(first.grad_pre), torch.tensor(first.grad_post) * (1 - torch.tanh(z) ** 2))
    assert first.update_norm > 0 and w.shape == (4, 2) and bias.shape == (4,)
    assert any(n.kind == "custom" for n in trace.graph.nodes)  # the MyTanh node, with its ctx
    assert len(forward_backward_table(trace)["layer"]) == 8 and update_table(trace)["layer"] == ["layer 1", "output"]


def test_built_in_activation_has_no_function_trace():
    trace = slow_step(Playground(PlaygroundConfig(activation="torch.tanh")))
    assert trace.function is None and trace.loss > 0
