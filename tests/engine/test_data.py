"""The datasets against PyTorch's own draws, and the registry's promises."""

import math

import pytest
import torch

from autodiff_core.data import PLAYGROUND_DATASETS, gaussian_clusters, is_regression, make_playground_data


def test_gaussian_clusters_are_the_tutorials_points():
    """The tutorial's own lines, on the global generator seeded 10."""
    with torch.random.fork_rng():
        torch.manual_seed(10)
        ones = torch.ones(100, 2)
        x0 = torch.normal(1.7 * ones, 1) + 1
        x1 = torch.normal(-1.7 * ones, 1) + 1
    x, y = gaussian_clusters(100, 1.0, torch.Generator().manual_seed(10))
    assert torch.equal(x, torch.cat([x0, x1]))
    assert torch.equal(y, torch.cat([torch.zeros(100), torch.ones(100)]))


def test_playground_clusters_keep_their_spread_at_noise_zero():
    """Noise 0 does not collapse each class to one point: a cluster has its own width (variance 0.5), noise adds
    to it."""
    x, y = make_playground_data("Gaussian clusters", 400, 0.0, seed=1)
    for c in (0, 1):
        points = x[y == c]
        assert len(torch.unique(points, dim=0)) == 200
        assert abs(points.std(dim=0).mean().item() - math.sqrt(0.5)) < 0.1
    wider, _ = make_playground_data("Gaussian clusters", 400, 0.5, seed=1)
    assert wider[:200].std() > x[:200].std()


@pytest.mark.parametrize("name", list(PLAYGROUND_DATASETS))
def test_datasets_are_decided_by_their_seed(name):
    x1, y1 = make_playground_data(name, 100, 0.1, seed=3)
    x2, y2 = make_playground_data(name, 100, 0.1, seed=3)
    x3, _ = make_playground_data(name, 100, 0.1, seed=4)
    assert torch.equal(x1, x2) and torch.equal(y1, y2) and not torch.equal(x1, x3)
    assert x1.shape == (100, 2) and y1.shape == (100,)
    if not is_regression(name) and PLAYGROUND_DATASETS[name].rule is None:  # noise moves points, not labels
        assert sorted(y1.tolist()) == [0.0] * 50 + [1.0] * 50


def test_datasets_leave_the_global_rng_alone():
    state = torch.get_rng_state()
    for name in PLAYGROUND_DATASETS:
        make_playground_data(name, 20, 0.2, seed=1)
    assert torch.equal(state, torch.get_rng_state())


def test_xor_labels_follow_the_quadrants_without_noise():
    x, y = make_playground_data("XOR", 200, 0.0, seed=0)
    assert torch.equal((x[:, 0] * x[:, 1] >= 0).float(), y)
