"""Lesson 7's loss landscapes: problems of two weights (w0, w1), so that the whole loss can be drawn as contours
and an optimizer's path on it. Each is a registry entry with one signature: ``height(w0, w1)`` takes two tensors
of one shape (a point, or a grid of them) and returns the loss at each, built from differentiable ops so that
``loss.backward()`` gives the gradient.

* **A narrow bowl**, ½(λmin·w0² + λmax·w1²): a quadratic whose conditioning κ = λmax/λmin is a setting. Plain
  gradient descent converges on it exactly when lr < 2/λmax.
* **Logistic regression**: lesson 3's two clusters and its loss (binary cross-entropy of a sigmoid), with the
  bias fixed at 0 so that the two weights are all there is.
* **Rosenbrock's valley**, ((1 − w0)² + 100·(w1 − w0²)²)/100: a curved, flat-bottomed valley with its minimum
  at (1, 1). It is divided by 100 so that one learning rate suits all five optimizers: for SGD this is lr/100
  on the usual function, while RMSprop and Adam divide any such scale away.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from .devices import resolve_device, resolve_dtype

STEEP = 4.0  # the bowl's steepest curvature λmax; its gentlest is λmax/κ
ROSENBROCK_SCALE = 100.0
LOGISTIC_BIAS = 0.0  # the logistic surface's fixed bias
NARROW = 2.0  # a bowl at least this many times steeper across than along is a valley with a floor


@dataclass(frozen=True)
class Surface:
    """A loss of two weights, with where the optimizers start, where its minimum is, and the view drawn."""

    name: str
    height: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (w0, w1), both of one shape -> loss there
    start: tuple[float, float]
    minimum: tuple[float, float]
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    quadratic: bool = False  # a bowl: its curvature is the same everywhere, and the 2/λmax rule is exact
    floor: Callable[[np.ndarray], np.ndarray] | None = None  # a narrow valley's floor: w1 there, for each w0

    def across(self, w0: np.ndarray, w1: np.ndarray) -> np.ndarray:
        """How far above (+) or below (−) the valley's floor each point is, in w1: a path that changes its sign
        has crossed the valley."""
        return w1 - self.floor(w0)

    def loss(self, w: torch.Tensor) -> torch.Tensor:
        """The loss at ``w`` (2,): a scalar that ``backward()`` differentiates."""
        return self.height(w[0], w[1])

    def lowest(self) -> float:
        """The loss at the minimum, in float64."""
        return self.at(self.minimum)

    def at(self, point: tuple[float, float]) -> float:
        """The loss at ``point``, in float64."""
        return float(self.height(*torch.tensor(point, dtype=torch.float64)))

    def curvatures(self) -> tuple[float, float]:
        """(λmin, λmax): the eigenvalues of the loss's Hessian at the minimum, computed by autograd in float64.
        On a bowl they are its curvature everywhere."""
        at = torch.tensor(self.minimum, dtype=torch.float64)
        hessian = torch.autograd.functional.hessian(lambda w: self.height(w[0], w[1]), at)  # (2, 2)
        low, high = torch.linalg.eigvalsh(hessian).tolist()
        return low, high

    def grid(self, nx: int, ny: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The loss on a grid of ``nx`` x ``ny`` points over the view, in float64: (xs (nx,), ys (ny,), heights
        (ny, nx)), a row per y, from the bottom up."""
        xs = torch.linspace(*self.x_range, nx, dtype=torch.float64)
        ys = torch.linspace(*self.y_range, ny, dtype=torch.float64)
        w1, w0 = torch.meshgrid(ys, xs, indexing="ij")  # (ny, nx) each
        with torch.no_grad():
            z = self.height(w0, w1)
        return xs.numpy(), ys.numpy(), z.numpy()


def bowl(conditioning: float, dtype: torch.dtype, device: torch.device, seed: int) -> Surface:
    gentle = STEEP / conditioning

    def height(w0: torch.Tensor, w1: torch.Tensor) -> torch.Tensor:
        return 0.5 * (gentle * w0 ** 2 + STEEP * w1 ** 2)

    floor = (lambda w0: 0 * w0) if conditioning >= NARROW else None  # along w0, where w1 = 0
    return Surface("Narrow bowl", height, (-4.0, 1.5), (0.0, 0.0), (-4.5, 2.5), (-3.0, 3.0), quadratic=True,
                   floor=floor)


def rosenbrock(conditioning: float, dtype: torch.dtype, device: torch.device, seed: int) -> Surface:
    def height(w0: torch.Tensor, w1: torch.Tensor) -> torch.Tensor:
        return ((1 - w0) ** 2 + 100 * (w1 - w0 ** 2) ** 2) / ROSENBROCK_SCALE

    return Surface("Rosenbrock's valley", height, (-1.5, 2.0), (1.0, 1.0), (-2.0, 2.0), (-1.0, 3.5),
                   floor=lambda w0: w0 ** 2)  # the parabola w1 = w0², where the steep term is 0


def logistic(conditioning: float, dtype: torch.dtype, device: torch.device, seed: int) -> Surface:
    from .logistic import LogisticConfig, logistic_data

    x, y = logistic_data(LogisticConfig(seed=seed))  # lesson 3's points, (2n, 2) and (2n,)
    x, y = x.to(device, dtype), y.to(device, dtype)

    def height(w0: torch.Tensor, w1: torch.Tensor) -> torch.Tensor:
        logits = x[:, 0] * w0[..., None] + x[:, 1] * w1[..., None] + LOGISTIC_BIAS  # (..., 2n)
        # lesson 3's BCELoss of a sigmoid, computed from the logits so that it never rounds to log(0)
        bce = F.binary_cross_entropy_with_logits(logits, y.expand_as(logits), reduction="none")  # (..., 2n)
        return bce.mean(-1)

    return Surface("Logistic regression", height, (2.0, -1.0), _logistic_minimum(seed), (-7.5, 2.5), (-6.5, 2.0))


@functools.lru_cache(maxsize=16)
def _logistic_minimum(seed: int) -> tuple[float, float]:
    """Where the logistic loss is lowest, by Newton's method in float64 (the loss is convex)."""
    from .logistic import LogisticConfig, logistic_data

    x, y = (t.double() for t in logistic_data(LogisticConfig(seed=seed)))
    w = torch.zeros(2, dtype=torch.float64)
    for _ in range(50):
        p = torch.sigmoid(x @ w + LOGISTIC_BIAS)  # (2n,)
        grad = x.T @ (p - y) / len(y)  # (2,)
        hessian = (x.T * (p * (1 - p))) @ x / len(y)  # (2, 2)
        w = w - torch.linalg.solve(hessian, grad)
        if grad.abs().max() < 1e-14:
            break
    return float(w[0]), float(w[1])


SURFACES: dict[str, Callable[[float, torch.dtype, torch.device, int], Surface]] = {
    "Narrow bowl": bowl, "Logistic regression": logistic, "Rosenbrock's valley": rosenbrock}


def make_surface(name: str, conditioning: float = 10.0, *, seed: int = 10, device: str = "cpu",
                 dtype: str = "float32") -> Surface:
    """The surface ``name``, its data (if any) on ``device`` in ``dtype``."""
    return SURFACES[name](conditioning, resolve_dtype(dtype), resolve_device(device), seed)
