"""The datasets against PyTorch's own draws."""

import torch

from autodiff_core.data import CLUSTER_SPREAD, gaussian_clusters, make_dataset


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
    """Noise 0 no longer collapses each class to one point: a cluster has its own width, noise adds to it."""
    x, y = make_dataset("Gaussian clusters", 200, 0.0, seed=1)
    for c in (0, 1):
        points = x[y == c]
        assert len(torch.unique(points, dim=0)) == 200
        assert abs(points.std(dim=0).mean().item() - CLUSTER_SPREAD) < 0.1
    wider, _ = make_dataset("Gaussian clusters", 200, 1.0, seed=1)
    assert wider[:200].std() > x[:200].std()
