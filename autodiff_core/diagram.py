"""What TF Playground draws as its network: each neuron's output over the plane, and every weight and bias.

Computed from a ``Playground`` in one forward pass over a coarse grid; ``figures_network`` draws it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .features import feature_matrix
from .playground import Playground

MAX_WIDTH = 16  # widest layer drawn: beyond it the tiles and links stop being readable


@dataclass(frozen=True)
class NetworkState:
    """``maps[c]``: column c's neurons over the plane, ``(neurons, grid, grid)``, rows along y; column 0 is
    the input features (each scaled to -1..1), the last the output. ``weights[c]``: ``(out, in)`` from
    column c to c + 1; ``biases[c]``: column c + 1's biases. The output map is on the colour scale -1..1 (2p - 1)."""

    step: int
    names: tuple[str, ...]  # the input features
    maps: tuple[np.ndarray, ...]
    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]


def network_state(pg: Playground, grid: int = 12) -> NetworkState:
    """Every neuron of ``pg``'s model evaluated on a ``grid`` x ``grid`` lattice over the plane."""
    x0, x1, y0, y1 = pg.extent
    gy, gx = torch.meshgrid(torch.linspace(y0, y1, grid), torch.linspace(x0, x1, grid), indexing="ij")
    points = torch.stack([gx.reshape(-1), gy.reshape(-1)], 1)  # (grid*grid, 2)
    inputs = feature_matrix(points, pg.config.features).to(pg.device, pg.dtype)
    with torch.no_grad():
        hidden = []
        out = pg.model(inputs, hidden)
    if not pg.config.regression:
        out = 2 * out - 1
    shown = inputs / inputs.abs().amax(0).clamp_min(1e-12)  # each feature on -1..1, as TF draws its inputs
    columns = [shown, *hidden, out[:, None]]
    maps = tuple(c.T.reshape(-1, grid, grid).cpu().float().numpy() for c in columns)
    layers = pg.model.layers
    return NetworkState(pg.steps_done, pg.config.features, maps,
                        tuple(layer.weight.detach().cpu().float().numpy() for layer in layers),
                        tuple(layer.bias.detach().cpu().float().numpy() for layer in layers))


def drawable(pg: Playground) -> bool:
    return max(pg.config.hidden) <= MAX_WIDTH
