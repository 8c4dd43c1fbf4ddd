"""The playground's snapshot, computed the fast way (points as columns, one product for all the means, one
reduction for every layer's dead units), against the plain computation with PyTorch's own functions."""

import pytest
import torch
from torch.nn import functional as F

from autodiff_core.functions import get_activation
from autodiff_core.gradflow import dead_fractions
from autodiff_core.playground import MLP, Playground, PlaygroundConfig

CASES = {
    "XOR, (8, 8) tanh": dict(activation="torch.tanh", optimizer="SGD (by hand)", batch_size=10),
    "XOR, (8, 8) MyTanh": dict(activation="Tanh", optimizer="SGD (by hand)", batch_size=10),
    "circles, 6 x 8 MyReLU": dict(dataset="Circles", hidden=(8,) * 6, learning_rate=0.1),
    "moons, features, (5, 1, 3)": dict(dataset="Two moons", features=("X1", "X2", "X1²", "sin X2"), hidden=(5, 1, 3)),
    "spirals, float64": dict(dataset="Spirals", hidden=(8, 8), dtype="float64"),
    "plane (regression)": dict(dataset="Plane (regression)", hidden=(4, 2), activation="Tanh"),
    "multi-Gaussian (regression)": dict(dataset="Multi-Gaussian (regression)", hidden=(6, 3)),
}


def plain_forward(pg: Playground, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The network written out with built-in ops on (n, features) rows, and each hidden layer's output."""
    act, hidden = get_activation(pg.config.activation), []
    for layer in pg.model.layers[:-1]:
        x = act(x @ layer.weight.T + layer.bias)
        hidden.append(x)
    out = (x @ pg.model.layers[-1].weight.T + pg.model.layers[-1].bias).squeeze(-1)
    return (out if pg.config.regression else torch.sigmoid(out)), hidden


@pytest.mark.parametrize("case", list(CASES))
def test_a_snapshot_holds_what_builtins_compute(case):
    pg = Playground(PlaygroundConfig(grid=10, **CASES[case]))
    for _ in range(25):
        pg.step()
    snap = pg.snapshot()
    with torch.no_grad():
        (p_train, hidden), (p_test, _) = plain_forward(pg, pg.x_train), plain_forward(pg, pg.x_test)
        surface = plain_forward(pg, pg.grid_points)[0]
    if pg.config.regression:
        losses = [F.mse_loss(p_train, pg.y_train), F.mse_loss(p_test, pg.y_test)]
        var = torch.cat([pg.y_train, pg.y_test]).var(unbiased=False)
        scores = [(1 - loss / var).clamp(0, 1) for loss in losses]
        surface = ((surface + 1) / 2).clamp(0, 1)
    else:
        losses = [F.binary_cross_entropy(p_train, pg.y_train), F.binary_cross_entropy(p_test, pg.y_test)]
        scores = [((p >= 0.5) == y.bool()).double().mean() for p, y in ((p_train, pg.y_train), (p_test, pg.y_test))]
    got = torch.tensor([snap.train_loss, snap.test_loss, snap.train_accuracy, snap.test_accuracy], dtype=torch.float64)
    torch.testing.assert_close(got, torch.stack([*losses, *scores]).double(), rtol=1e-5, atol=1e-6)
    dead = [(h.amax(0) == h.amin(0)).to(pg.dtype).mean() for h in hidden]  # a unit constant on every training point
    assert snap.dead == tuple(d.item() for d in dead)
    assert len(snap.grad_norms) == len(pg.model.layers)
    expected = surface.reshape(10, 10).double()
    assert (torch.tensor(snap.surface, dtype=torch.float64) - expected).abs().max() <= 5e-4 + 1e-6


@pytest.mark.parametrize("activation", ["ReLU", "Tanh", "torch.tanh", "Sigmoid", "LeakyReLU"])
@pytest.mark.parametrize("hidden", [(1,), (8, 5, 3), (8,) * 6])
@pytest.mark.parametrize("regression", [False, True])
def test_evaluate_on_points_as_columns_is_forward_on_rows(activation, hidden, regression):
    mlp = MLP(hidden, activation, torch.Generator().manual_seed(0), inputs=3, regression=regression)
    x = torch.randn(50, 3, generator=torch.Generator().manual_seed(1))
    rows, columns = [], []
    with torch.no_grad():
        expected, got = mlp.forward(x, rows), mlp.evaluate(x.T.contiguous(), columns)
    torch.testing.assert_close(got, expected)
    assert len(columns) == len(rows) == len(hidden)
    for c, r in zip(columns, rows, strict=True):
        torch.testing.assert_close(c.T, r)


def test_dead_fractions_take_points_as_rows_or_as_columns():
    g = torch.Generator().manual_seed(0)
    layers = [torch.randn(30, width, generator=g) for width in (4, 1, 7)]
    layers[0][:, 1] = 0.0  # dead ReLU unit
    layers[2][:, [0, 3, 6]] = 2.5  # constant units
    layers[1][:, 0] = -1.0
    reference = torch.tensor([sum(len(set(h[:, u].tolist())) == 1 for u in range(h.shape[1])) / h.shape[1]
                              for h in layers])
    torch.testing.assert_close(dead_fractions(layers), reference)
    torch.testing.assert_close(dead_fractions([h.T.contiguous() for h in layers], points_dim=1), reference)


def test_pinned_outputs_are_the_test_points_at_exactly_0_or_1():
    """The "pinned" hint counts the test outputs that are exactly 0 or 1 (and only with train accuracy < 0.9)."""
    pg = Playground(PlaygroundConfig(dataset="Circles", noise=0.5))
    pg.step()
    with torch.no_grad():
        pg.model.layers[-1].weight.mul_(1e4)  # sigmoid(±large) is exactly 0 or 1 in float32
        p_train, _ = plain_forward(pg, pg.x_train)
        p_test, _ = plain_forward(pg, pg.x_test)
    share = ((p_test == 0) | (p_test == 1)).double().mean().item()
    accuracy = ((p_train >= 0.5) == pg.y_train.bool()).double().mean().item()
    snap = pg.snapshot()
    assert share > 0.5 and accuracy < 0.9, "the setup must pin most outputs of a net that has not learnt"
    assert "pinned at exactly 0 or 1" in snap.message
