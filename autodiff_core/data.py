"""The one dataset registry: every dataset behind one signature, ``(n, noise, generator) -> (X, y)``.

Lesson 5's playground draws its data the way TF Playground draws them (its ``dataset.ts``), at its scale.
Points span about -6..6 on both axes. ``noise`` runs from 0 to 0.5, as TF's slider does (0 to 50, over
100), and means what it means there: for circles, XOR and the regression sets each point is labelled as if
it sat somewhere else nearby (its coordinates plus ``noise`` times a uniform offset up to the radius), so
labels flip near the boundary while the points stay put. Gaussian clusters widen with noise, and spirals
jitter.

``n`` points in all, ``X`` is ``(n, 2)`` float32. For classification ``y`` is 0 or 1 (TF's -1 and +1); for
regression it lies in [-1, 1]. Every draw comes from the given ``torch.Generator``, never the global RNG, so
a dataset is decided by its seed alone even when many students train at once.

Beyond TF, sets of 2 to 6 classes (blobs, spiral arms, a pie of sectors) take ``classes=`` too, and ``y`` is
the class, 0 to classes - 1. The class's own points (``OWN_DATASETS``) have no generator: they are drawn on
the plane or uploaded, and travel in the config (``own_data.py``).

Lesson 4's two clusters, the tutorial's own points, are ``gaussian_clusters``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

Generator = Callable[[int, float, torch.Generator], tuple[torch.Tensor, torch.Tensor]]
Split = tuple[torch.Tensor, torch.Tensor]  # (points (n, 2), labels (n,))
EXTENT = (-6.0, 6.0, -6.0, 6.0)  # the plane every heatmap shows: x0, x1, y0, y1 (TF's domain)
OWN, OWN_REGRESSION = "Your points", "Your points (regression)"  # drawn on the plane or uploaded


def _uniform(shape, lo: float, hi: float, g: torch.Generator) -> torch.Tensor:
    return torch.rand(shape, generator=g) * (hi - lo) + lo


def _labels(n: int) -> torch.Tensor:
    return torch.cat([torch.zeros(n), torch.ones(n)])


def gaussian_clusters(n: int, noise: float, generator: torch.Generator, *, mean: float = 1.7,
                      bias: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Lesson 4's data, the tutorial's two clusters: ``n`` points *per class*, class 0 around (mean + bias),
    class 1 around (-mean + bias), each with standard deviation ``noise``. ``X`` is ``(2n, 2)``, ``y`` is
    ``(2n,)``: n zeros, then n ones. The tutorial's call is ``noise=1``; with a generator seeded 10 it draws
    exactly the tutorial's points.
    """
    ones = torch.ones(n, 2)  # (n, 2)
    x0 = torch.normal(mean * ones, noise, generator=generator) + bias  # class 0
    x1 = torch.normal(-mean * ones, noise, generator=generator) + bias  # class 1
    return torch.cat([x0, x1]), _labels(n)


def _half_moons(n: int, noise: float, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Two interleaving half circles of ``n`` points each, centred on the origin: class 0 the upper one."""
    t = torch.rand(2 * n, generator=generator) * math.pi
    upper = torch.stack([torch.cos(t[:n]), torch.sin(t[:n])], 1)
    lower = torch.stack([1 - torch.cos(t[n:]), 0.5 - torch.sin(t[n:])], 1)
    x = (torch.cat([upper, lower]) - torch.tensor([0.5, 0.25])) * 1.2
    return x + noise * torch.randn(2 * n, 2, generator=generator), _labels(n)


def circles(n: int, noise: float, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Class 1 inside radius 2.5, class 0 on a ring from 3.5 to 5; labels from the noisy point."""
    radius, half = 5.0, n // 2
    r = torch.cat([_uniform(half, 0, radius * 0.5, g), _uniform(n - half, radius * 0.7, radius, g)])
    angle = _uniform(n, 0, 2 * math.pi, g)
    x = torch.stack([r * torch.sin(angle), r * torch.cos(angle)], 1)  # (n, 2)
    shifted = x + _uniform((n, 2), -radius, radius, g) * noise
    return x, _circle_label(shifted)


def _circle_label(p: torch.Tensor) -> torch.Tensor:
    return (p.norm(dim=1) < 2.5).float()  # class 1 inside half the radius of 5


def xor(n: int, noise: float, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Uniform on -5..5, pushed 0.3 off the axes; class 1 where x * y >= 0, judged at the noisy point."""
    x = _uniform((n, 2), -5, 5, g)
    x = x + torch.where(x > 0, 0.3, -0.3)
    shifted = x + _uniform((n, 2), -5, 5, g) * noise
    return x, _xor_label(shifted)


def _xor_label(p: torch.Tensor) -> torch.Tensor:
    return (p[:, 0] * p[:, 1] >= 0).float()


def gaussians(n: int, noise: float, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Two clouds around (2, 2) (class 1) and (-2, -2) (class 0); their variance grows from 0.5 to 4
    as noise goes from 0 to 0.5."""
    std = math.sqrt(0.5 + noise / 0.5 * 3.5)
    half = n // 2
    centre = torch.cat([torch.full((half, 2), 2.0), torch.full((n - half, 2), -2.0)])
    x = centre + std * torch.randn(n, 2, generator=g)
    return x, torch.cat([torch.ones(half), torch.zeros(n - half)])


def spirals(n: int, noise: float, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Two spirals of radius 5 and 1.75 turns, the second turned by pi; noise jitters each point."""
    half = n // 2
    parts = []
    for count, turn in ((half, 0.0), (n - half, math.pi)):
        i = torch.arange(count, dtype=torch.float32) / max(count, 1)
        r, t = i * 5, 1.75 * i * 2 * math.pi + turn
        parts.append(torch.stack([r * torch.sin(t), r * torch.cos(t)], 1))
    x = torch.cat(parts) + _uniform((n, 2), -1, 1, g) * noise
    return x, torch.cat([torch.ones(half), torch.zeros(n - half)])


def two_moons(n: int, noise: float, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Lesson 5's two moons (not in TF), scaled to the same plane; noise jitters each point."""
    x, y = _half_moons(n // 2, 0.0, g)
    return x * 3 + _uniform((len(y), 2), -2, 2, g) * noise, y


def _plane_label(p: torch.Tensor) -> torch.Tensor:
    return (p[:, 0] + p[:, 1]) / 10  # TF's scale maps -10..10 to -1..1


GAUSSIANS = ((-4, 2.5, 1), (0, 2.5, -1), (4, 2.5, 1), (-4, -2.5, -1), (0, -2.5, 1), (4, -2.5, -1))


def _gaussians_label(p: torch.Tensor) -> torch.Tensor:
    """The bump (of either sign) largest in size at ``p``: 1 at a centre, falling to 0 at distance 2."""
    bumps = torch.stack([s * (1 - (p - torch.tensor([cx, cy])).norm(dim=1) / 2).clamp(0, 1)
                         for cx, cy, s in GAUSSIANS], 1)  # (n, 6)
    return bumps.gather(1, bumps.abs().argmax(1, keepdim=True)).squeeze(1)


def _regression(label: Callable[[torch.Tensor], torch.Tensor]) -> Generator:
    def draw(n: int, noise: float, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        x = _uniform((n, 2), -6, 6, g)
        return x, label(x + _uniform((n, 2), -6, 6, g) * noise)
    return draw


plane = _regression(_plane_label)
plane.__doc__ = "Uniform on -6..6; the target is (x + y) / 10, read at the noisy point."
multi_gaussian = _regression(_gaussians_label)
multi_gaussian.__doc__ = "Uniform on -6..6; the target is six signed bumps, read at the noisy point."


def _shares(n: int, classes: int) -> list[int]:
    """``n`` points shared out over ``classes``, as evenly as they go (the first classes take one more)."""
    return [n // classes + (k < n % classes) for k in range(classes)]


def _by_class(counts: list[int]) -> torch.Tensor:
    return torch.cat([torch.full((m,), float(k)) for k, m in enumerate(counts)])


def blobs(n: int, noise: float, g: torch.Generator, classes: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    """``classes`` Gaussian clouds with centres evenly spaced on a circle of radius 3.2 (class 0 at the top);
    their standard deviation grows from 0.5 to 1.5 as noise goes from 0 to 0.5."""
    counts, std = _shares(n, classes), 0.5 + 2 * noise
    angles = torch.tensor([math.pi / 2 + 2 * math.pi * k / classes for k, m in enumerate(counts) for _ in range(m)])
    centres = 3.2 * torch.stack([torch.cos(angles), torch.sin(angles)], 1)  # (n, 2)
    return centres + std * torch.randn(n, 2, generator=g), _by_class(counts)


def spiral_arms(n: int, noise: float, g: torch.Generator, classes: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    """``classes`` spiral arms from the centre out to radius 5.5, each turned by 1/classes of a circle from the
    last and winding 3/4 of a turn (CS231n's spiral); noise jitters each point, as in TF's spirals."""
    parts = []
    for k, m in enumerate(_shares(n, classes)):
        i = torch.arange(m, dtype=torch.float32) / max(m, 1)
        r, t = 0.3 + 5.2 * i, 2 * math.pi * (k / classes + 0.75 * i)
        parts.append(torch.stack([r * torch.cos(t), r * torch.sin(t)], 1))
    return torch.cat(parts) + _uniform((n, 2), -1, 1, g) * noise * 2, _by_class(_shares(n, classes))


def pie(n: int, noise: float, g: torch.Generator, classes: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    """A disc of radius 5.5 cut into ``classes`` equal sectors, class 0 from angle 0 on, with as many points in
    each (uniform over its sector); noise jitters each point (up to 1.25 at noise 0.5), across the cuts too."""
    counts = _shares(n, classes)
    y = _by_class(counts)
    r = 5.5 * torch.rand(n, generator=g).sqrt()  # sqrt: as many points per area near the centre as at the rim
    angle = (y + torch.rand(n, generator=g)) * (2 * math.pi / classes)
    x = torch.stack([r * torch.cos(angle), r * torch.sin(angle)], 1)
    return x + _uniform((n, 2), -2.5, 2.5, g) * noise, y


@dataclass(frozen=True)
class DataSpec:
    """``draw`` makes the points. ``classes``: ``draw`` takes ``classes=`` (2 to 6); the others have two."""

    draw: Generator
    regression: bool = False
    # the noise-free label of each point, for the sets whose noise flips labels (None: noise moves the points)
    rule: Callable[[torch.Tensor], torch.Tensor] | None = None
    classes: bool = False


PLAYGROUND_DATASETS: dict[str, DataSpec] = {
    "Circles": DataSpec(circles, rule=_circle_label),
    "XOR": DataSpec(xor, rule=_xor_label),
    "Gaussian clusters": DataSpec(gaussians),
    "Spirals": DataSpec(spirals),
    "Two moons": DataSpec(two_moons),
    "Plane (regression)": DataSpec(plane, regression=True),
    "Multi-Gaussian (regression)": DataSpec(multi_gaussian, regression=True),
    "Blobs": DataSpec(blobs, classes=True),
    "Spiral arms": DataSpec(spiral_arms, classes=True),
    "Pie slices": DataSpec(pie, classes=True),
}
# The class's own points, drawn on the plane or uploaded: no generator, the config holds them (own_data.py).
# Each name -> whether it is a regression.
OWN_DATASETS = {OWN: False, OWN_REGRESSION: True}
DATASET_NAMES = (*PLAYGROUND_DATASETS, *OWN_DATASETS)  # every choice of lesson 5's Data


def is_regression(name: str) -> bool:
    return OWN_DATASETS[name] if name in OWN_DATASETS else PLAYGROUND_DATASETS[name].regression


def takes_classes(name: str) -> bool:
    """Whether dataset ``name`` comes in 2 to 6 classes (else it has two, or it is a regression)."""
    return not OWN_DATASETS[name] if name in OWN_DATASETS else PLAYGROUND_DATASETS[name].classes


def is_own(name: str) -> bool:
    """Whether dataset ``name`` is the class's own points, drawn or uploaded (not drawn from a seed)."""
    return name in OWN_DATASETS


def make_playground_data(name: str, n: int, noise: float, seed: int, classes: int = 2
                         ) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw ``n`` points of dataset ``name`` with its own generator seeded ``seed``; ``classes`` for the sets
    that take it."""
    if name not in PLAYGROUND_DATASETS:
        raise ValueError(f"dataset must be one of: {', '.join(PLAYGROUND_DATASETS)}; not {name!r}.")
    spec = PLAYGROUND_DATASETS[name]
    extra = {"classes": classes} if spec.classes else {}
    return spec.draw(n, noise, torch.Generator().manual_seed(seed), **extra)


def flipped_labels(name: str, points: torch.Tensor, y: torch.Tensor) -> torch.Tensor | None:
    """Which of ``points`` (n, 2) noise gave the other class's label ``y``: a bool (n,); None for the sets whose
    labels never flip (clusters, spirals, moons: noise moves their points) and for regression."""
    rule = PLAYGROUND_DATASETS[name].rule if name in PLAYGROUND_DATASETS else None  # own points: as drawn
    return None if rule is None else rule(points) != y.cpu().to(torch.float32)


def label_noise_note(name: str, train: Split, test: Split) -> str:
    """What the train and test losses owe to label noise, for a teacher to read beside them; "" when no label
    flipped. ``train`` and ``test`` are (points, labels) pairs."""
    flips = [flipped_labels(name, *split) for split in (train, test)]
    if flips[0] is None or not any(f.any() for f in flips):
        return ""
    (k, n), (k_test, n_test) = ((int(f.sum()), len(f)) for f in flips)
    return (f"Noise gave {k} of {n} training points ({k / n:.0%}) and {k_test} of {n_test} test points "
            f"({k_test / n_test:.0%}) the other class's label. A network that learns the pattern gets these points "
            "wrong, and each costs far more loss than a point it gets right: once it has learned, the split with the "
            "larger share of them shows the higher loss.")
