"""MySoftmax, lesson 5's output for 3 to 6 classes, against PyTorch's own softmax and cross-entropy."""

import copy

import pytest
import torch
from torch import nn

from autodiff_core.classes import cross_entropy, jacobian_formula, jacobians, surface_values
from autodiff_core.functions import MySoftmax
from autodiff_core.playground import Playground, PlaygroundConfig


@pytest.mark.parametrize("scale", [1.0, 30.0])
def test_gradcheck_passes_on_mysoftmax_in_float64(scale):
    """Ordinary logits, and large ones (where a softmax without the max taken off would overflow exp)."""
    g = torch.Generator().manual_seed(0)
    z = (scale * torch.randn(4, 5, generator=g, dtype=torch.float64)).requires_grad_()
    assert torch.autograd.gradcheck(MySoftmax.apply, (z,))
    assert torch.autograd.gradgradcheck(MySoftmax.apply, (z,))  # its backward is made of differentiable ops


def test_forward_and_backward_equal_torch_softmax():
    g = torch.Generator().manual_seed(1)
    z = torch.randn(7, 4, generator=g, dtype=torch.float64, requires_grad=True)
    w = torch.randn(7, 4, generator=g, dtype=torch.float64)
    ours, theirs = MySoftmax.apply(z), torch.softmax(z, -1)
    torch.testing.assert_close(ours, theirs)
    grads = [torch.autograd.grad((y * w).sum(), z)[0] for y in (ours, theirs)]
    torch.testing.assert_close(*grads)
    big = torch.tensor([[1000.0, 0.0, -1000.0]])
    assert torch.isfinite(MySoftmax.apply(big)).all()


@pytest.mark.parametrize("k", [2, 3, 6])
def test_the_jacobian_is_diag_y_minus_y_y_transposed_and_equals_torchs(k):
    """What the lesson shows: J_ii = y_i (1 - y_i), J_ij = -y_i y_j, through MySoftmax and through torch.softmax."""
    z = torch.linspace(-1.5, 2.0, k, dtype=torch.float64)
    ours, theirs = jacobians(z)
    y = torch.softmax(z, -1)
    torch.testing.assert_close(ours, theirs)
    torch.testing.assert_close(ours, jacobian_formula(y))
    torch.testing.assert_close(torch.diagonal(ours), y * (1 - y))
    assert ours[0, 1].item() == pytest.approx(-(y[0] * y[1]).item())
    torch.testing.assert_close(ours.sum(0), torch.zeros(k, dtype=torch.float64))  # the outputs always sum to 1


def test_cross_entropy_of_mysoftmax_equals_f_cross_entropy_on_the_logits():
    g = torch.Generator().manual_seed(2)
    z = torch.randn(50, 4, generator=g, dtype=torch.float64, requires_grad=True)
    t = torch.randint(0, 4, (50,), generator=g)
    ours, theirs = cross_entropy(MySoftmax.apply(z), t), nn.functional.cross_entropy(z, t)
    torch.testing.assert_close(ours, theirs)
    torch.testing.assert_close(torch.autograd.grad(ours, z)[0], torch.autograd.grad(theirs, z)[0])


def _reference_losses(pg: Playground, model: nn.Module, steps: int) -> list[float]:
    """The playground's run written with nn.Linear logits and F.cross_entropy (PyTorch's fused log-softmax)."""
    optimizer = torch.optim.Adam(model.parameters(), lr=pg.config.learning_rate)
    batches = torch.Generator().manual_seed(pg.config.init_seed + 1)
    x_all, t_all = pg.x_train, pg.y_train.long()
    losses = []
    for _ in range(steps):
        idx = torch.randint(0, len(t_all), (min(pg.config.batch_size, len(t_all)),), generator=batches)
        h = x_all[idx]
        for layer in model.layers[:-1]:
            h = torch.relu(layer(h))
        loss = nn.functional.cross_entropy(model.layers[-1](h), t_all[idx])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        with torch.no_grad():
            h = x_all
            for layer in model.layers[:-1]:
                h = torch.relu(layer(h))
            losses.append(nn.functional.cross_entropy(model.layers[-1](h), t_all).item())
    return losses


@pytest.mark.parametrize(("dtype", "rtol"), [("float64", 1e-9), ("float32", 2e-4)])
def test_training_with_mysoftmax_equals_f_cross_entropy_on_logits(dtype, rtol):
    """The same network, data, batches and Adam: MySoftmax + -log p against F.cross_entropy on the logits."""
    pg = Playground(PlaygroundConfig(dataset="Spiral arms", classes=4, dtype=dtype, activation="torch.relu"))
    model = copy.deepcopy(pg.model)
    steps = 60
    ours = [s.train_loss for s in pg.run(steps, 1)][1:]
    theirs = _reference_losses(pg, model, steps)
    torch.testing.assert_close(torch.tensor(ours, dtype=torch.float64), torch.tensor(theirs, dtype=torch.float64),
                               rtol=rtol, atol=rtol)
    for a, b in zip(pg.model.parameters(), model.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=rtol * 10, atol=rtol * 10)


def test_the_surface_holds_the_class_picked_and_its_strength():
    p = torch.tensor([[0.9, 0.05, 0.05], [1 / 3, 1 / 3, 1 / 3], [0.1, 0.1, 0.8], [0.0, 1.0, 0.0]]).T  # (classes, n)
    values = surface_values(p)
    assert values.floor().tolist() == [0, 0, 2, 1]  # a tie goes to the first class
    assert values[1].item() == pytest.approx(0.0, abs=1e-6)  # every class as likely: no strength
    assert values[0].item() == pytest.approx((0.9 - 1 / 3) / (2 / 3))
    assert values[3].item() == pytest.approx(1.999)  # certain: still class 1 (the strength stays under 1)
