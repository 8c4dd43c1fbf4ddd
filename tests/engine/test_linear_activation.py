"""TF Playground's "Linear" activation as a custom autograd Function: against PyTorch's identity, in the
playground (a linear network draws a straight boundary, however deep), and in the exported script."""


import numpy as np
import pytest
import torch

from autodiff_core.functions import FUNCTIONS, MyLinear, activation_names
from autodiff_core.playground import Playground, PlaygroundConfig
from autodiff_core.script_export import export_script, exportable
from autodiff_core.slow_step import slow_step
from tests.conftest import run_exported


def test_linear_is_pytorchs_identity_forward_and_backward():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(40, 3, generator=g, dtype=torch.float64)
    grad_output = torch.randn(40, 3, generator=g, dtype=torch.float64)
    a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
    out = MyLinear.apply(a)
    out.backward(grad_output)
    torch.nn.Identity()(b).mul(1).backward(grad_output)
    assert torch.equal(out, torch.nn.Identity()(x))  # forward ok
    assert torch.equal(a.grad, b.grad)  # backward ok
    assert out.data_ptr() != a.data_ptr()  # forward's output is a tensor of its own
    assert MyLinear.apply(a).grad_fn.saved_tensors == ()  # nothing saved: the slope is 1 everywhere


def test_linear_passes_gradcheck_and_gradgradcheck():
    x = torch.randn(12, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(MyLinear.apply, (x,))
    assert torch.autograd.gradgradcheck(MyLinear.apply, (x,))
    assert FUNCTIONS["Linear"].correct and FUNCTIONS["Linear"].fn is MyLinear
    assert "Linear" in activation_names() and exportable("Linear")


def _logits(pg: Playground, points: torch.Tensor) -> torch.Tensor:
    """The output layer's input, before the sigmoid: what the boundary is the zero set of."""
    with torch.no_grad():
        return torch.logit(pg.model(points.to(pg.dtype)).double(), eps=0)


def _plane_residual(pg: Playground) -> float:
    """How far the network's logit over the plane is from its best affine fit a*x + b*y + c (relative)."""
    g = torch.linspace(-6, 6, 25, dtype=torch.float64)
    yy, xx = torch.meshgrid(g, g, indexing="ij")
    points = torch.stack([xx.reshape(-1), yy.reshape(-1)], 1)
    z = _logits(pg, points)
    design = torch.cat([points, torch.ones(len(points), 1, dtype=torch.float64)], 1)
    fit = torch.linalg.lstsq(design, z[:, None]).solution
    return float((design @ fit - z[:, None]).abs().max() / z.abs().max())


@pytest.mark.parametrize("hidden", [(8,), (8, 4, 8), (3, 3, 3, 3, 3, 3)])
def test_a_linear_network_draws_a_straight_boundary(hidden):
    """Its logit is one affine map of the plane, so the boundary (logit 0) is a line; the drawn surface's
    classes are split by that line at every grid point. Tanh, the same net, bends."""
    linear = Playground(PlaygroundConfig(dataset="Circles", hidden=hidden, activation="Linear", dtype="float64",
                                         learning_rate=0.03))
    bent = Playground(PlaygroundConfig(dataset="Circles", hidden=hidden, activation="Tanh", dtype="float64",
                                       learning_rate=0.03))
    *_, last = linear.run(300, 300)
    list(bent.run(300, 300))
    assert _plane_residual(linear) < 1e-9
    assert _plane_residual(bent) > 1e-3
    # the surface the page draws: P(class 1) >= 0.5 exactly on one side of the fitted line
    snap = linear.snapshot()
    n = linear.config.grid
    g = torch.linspace(-6, 6, n, dtype=torch.float64)
    yy, xx = torch.meshgrid(g, g, indexing="ij")
    z = _logits(linear, torch.stack([xx.reshape(-1), yy.reshape(-1)], 1)).reshape(n, n).numpy()
    surface = np.array(snap.surface)
    clear = np.abs(surface - 0.5) > 0.002  # off the boundary by more than the surface's rounding
    assert clear.sum() > n * n * 0.9
    assert np.array_equal((surface >= 0.5)[clear], (z >= 0)[clear])
    assert last.test_accuracy < 0.8  # and a line cannot separate a ring


def test_linear_runs_step_by_step_in_slow_motion():
    pg = Playground(PlaygroundConfig(activation="Linear", hidden=(4, 3)))
    trace = slow_step(pg)
    assert pg.steps_done == 1 and trace.function is not None and trace.function.saved == []


def test_the_exported_script_with_linear_reproduces_every_step(tmp_path):
    pg = Playground(PlaygroundConfig(activation="Linear", hidden=(5, 2, 7), optimizer="SGD (by hand)",
                                     learning_rate=0.01))
    snaps = list(pg.run(30, 1))
    source = export_script(pg)
    assert "class MyLinear(Function)" in source and "activation = MyLinear.apply" in source
    steps, _ = run_exported(source, tmp_path)
    torch.testing.assert_close(torch.tensor(steps), torch.tensor([s.train_loss for s in snaps[1:]]),
                               rtol=1e-5, atol=1e-6)
