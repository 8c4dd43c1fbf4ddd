"""Two-class 2-D datasets, all behind one signature: ``(n, noise, generator) -> (X, y)``.

``n`` is the number of points per class, ``X`` is ``(2n, 2)`` float32 and ``y`` is ``(2n,)`` float32 in
{0, 1}. Every draw comes from the given ``torch.Generator``, never the global RNG, so a dataset is
decided by its seed alone even when many students train at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

Dataset = Callable[[int, float, torch.Generator], tuple[torch.Tensor, torch.Tensor]]


def _labels(n: int) -> torch.Tensor:
    return torch.cat([torch.zeros(n), torch.ones(n)])


def gaussian_clusters(n: int, noise: float, generator: torch.Generator, *, mean: float = 1.7,
                      bias: float = 1.0, base_spread: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """The tutorial's two clusters: class 0 around (mean + bias), class 1 around (-mean + bias).

    Each cluster's standard deviation is ``hypot(base_spread, noise)``: a cluster of its own width
    ``base_spread`` with Gaussian noise of ``noise`` added on top. The tutorial's call is
    ``base_spread=0, noise=1``; with a generator seeded 10 it draws exactly the tutorial's points.
    """
    std = math.hypot(base_spread, noise)  # exactly |noise| when base_spread is 0
    ones = torch.ones(n, 2)  # (n, 2)
    x0 = torch.normal(mean * ones, std, generator=generator) + bias  # class 0
    x1 = torch.normal(-mean * ones, std, generator=generator) + bias  # class 1
    return torch.cat([x0, x1]), _labels(n)


CLUSTER_SPREAD = 0.5  # the playground's clusters: their own width, so noise 0 still shows a cloud


def clusters(n: int, noise: float, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """The playground's Gaussian clusters: like every other dataset, a shape (clusters of width
    ``CLUSTER_SPREAD``) plus ``noise``. At noise 0 the points still spread; they do not collapse to
    one point per class."""
    return gaussian_clusters(n, noise, generator, base_spread=CLUSTER_SPREAD)


def xor(n: int, noise: float, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Class 0 in the (+,+) and (-,-) quadrants, class 1 in the other two; points kept off the axes."""
    mag = torch.rand(2 * n, 2, generator=generator) * 0.9 + 0.1  # (2n, 2) in [0.1, 1)
    sign = torch.randint(0, 2, (2 * n,), generator=generator).float() * 2 - 1  # quadrant pair
    same = torch.stack([sign, sign], 1)  # (+,+) or (-,-)
    cross = torch.stack([sign, -sign], 1)  # (+,-) or (-,+)
    x = torch.cat([mag[:n] * same[:n], mag[n:] * cross[n:]])
    return x + noise * torch.randn(2 * n, 2, generator=generator), _labels(n)


def circles(n: int, noise: float, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Class 0 inside radius 0.5, class 1 on a ring from 0.7 to 1."""
    radius = torch.cat([torch.rand(n, generator=generator) * 0.5,
                        torch.rand(n, generator=generator) * 0.3 + 0.7])
    angle = torch.rand(2 * n, generator=generator) * 2 * math.pi
    x = torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], 1)
    return x + noise * torch.randn(2 * n, 2, generator=generator), _labels(n)


def moons(n: int, noise: float, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Two interleaving half circles, centred on the origin."""
    t = torch.rand(2 * n, generator=generator) * math.pi
    upper = torch.stack([torch.cos(t[:n]), torch.sin(t[:n])], 1)
    lower = torch.stack([1 - torch.cos(t[n:]), 0.5 - torch.sin(t[n:])], 1)
    x = (torch.cat([upper, lower]) - torch.tensor([0.5, 0.25])) * 1.2
    return x + noise * torch.randn(2 * n, 2, generator=generator), _labels(n)


def spirals(n: int, noise: float, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Two interleaved spirals, one and a half turns each."""
    r = torch.rand(2 * n, generator=generator) * 0.9 + 0.1
    angle = r * 3 * math.pi + torch.cat([torch.zeros(n), torch.full((n,), math.pi)])
    x = torch.stack([r * torch.cos(angle), r * torch.sin(angle)], 1)
    return x + noise * torch.randn(2 * n, 2, generator=generator), _labels(n)


DATASETS: dict[str, Dataset] = {
    "Gaussian clusters": clusters,
    "XOR": xor,
    "Circles": circles,
    "Two moons": moons,
    "Spirals": spirals,
}


def make_dataset(name: str, n: int, noise: float, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw dataset ``name`` with its own generator seeded ``seed``."""
    if name not in DATASETS:
        raise ValueError(f"dataset must be one of: {', '.join(DATASETS)}; not {name!r}.")
    return DATASETS[name](n, noise, torch.Generator().manual_seed(seed))
