"""What TF Playground draws as its network: each neuron's output over the plane, and every weight and bias.

Computed from a ``Playground`` in one forward pass over a coarse grid; ``figures.network`` draws it, and the
live chart paints it while a run goes (``ParamTap`` copies the weights of a few of the run's states for that).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from .features import feature_matrix
from .playground import Playground
from .playground_state import shared_state

MAX_WIDTH = 16  # widest layer drawn: beyond it the tiles and links stop being readable
GRID = 12  # each neuron's map: GRID x GRID points over the plane


@dataclass(frozen=True)
class NetworkState:
    """``maps[c]``: column c's neurons over the plane, ``(neurons, grid, grid)``, rows along y; column 0 is
    the input features (each scaled to -1..1), the last the output. ``weights[c]``: ``(out, in)`` from
    column c to c + 1; ``biases[c]``: column c + 1's biases. The output map is on the colour scale -1..1 (2p - 1):
    P(class 1), or with 3 to 6 classes each class's probability, one output neuron a class."""

    step: int
    names: tuple[str, ...]  # the input features
    maps: tuple[np.ndarray, ...]
    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]


Params = tuple[tuple[torch.Tensor, torch.Tensor], ...]  # (weight (out, in), bias (out,)) per layer


def network_state(pg: Playground, grid: int = GRID, params: Params | None = None, step: int | None = None
                  ) -> NetworkState:
    """Every neuron of ``pg``'s model evaluated on a ``grid`` x ``grid`` lattice over the plane: with the
    model's weights as they are now, or with ``params`` (copies made at ``step``, see ``ParamTap``)."""
    if params is None:
        params, step = tuple((layer.weight.detach(), layer.bias.detach()) for layer in pg.model.layers), pg.steps_done
    inputs = grid_inputs(pg, grid)
    with torch.no_grad():
        hidden, x = [], inputs
        for weight, bias in params[:-1]:  # MLP.forward, with these weights
            x = pg.model.act(torch.nn.functional.linear(x, weight, bias))  # (grid*grid, width)
            hidden.append(x)
        z = torch.nn.functional.linear(x, *params[-1])  # (grid*grid, outputs)
        p = pg.model.head(z)  # (grid*grid,), or (grid*grid, classes) from MySoftmax
    out = (p if pg.config.regression else 2 * p - 1).reshape(len(z), -1)  # (grid*grid, outputs)
    shown = inputs / inputs.abs().amax(0).clamp_min(1e-12)  # each feature on -1..1, as TF draws its inputs
    columns = [shown, *hidden, out]
    maps = tuple(c.T.reshape(-1, grid, grid).cpu().float().numpy() for c in columns)
    # copies: on the CPU, .numpy() of a float32 parameter shares its memory, which training goes on changing
    return NetworkState(step, pg.config.features, maps, tuple(w.cpu().float().numpy().copy() for w, _ in params),
                        tuple(b.cpu().float().numpy().copy() for _, b in params))


def grid_inputs(pg: Playground, grid: int) -> torch.Tensor:
    """The input features of a ``grid`` x ``grid`` lattice over the plane, rows along y: (grid*grid, features)."""
    x0, x1, y0, y1 = pg.extent
    gy, gx = torch.meshgrid(torch.linspace(y0, y1, grid), torch.linspace(x0, x1, grid), indexing="ij")
    points = torch.stack([gx.reshape(-1), gy.reshape(-1)], 1)  # (grid*grid, 2)
    return feature_matrix(points, pg.config.features).to(pg.device, pg.dtype)


SHARE_EVERY = 0.25  # seconds between copies of where training stands (about 4 ms for lesson 5's largest network)


class ParamTap:
    """Copies the model's weights and biases beside some states of a run: the live diagram needs them a few
    times a second, not at every step (a copy costs about as much as 2% of a step).

    ``stream(snaps)`` passes a run's snapshots through. While a snapshot is being handed on, the trainer
    waits at its ``yield``, so the model holds exactly that snapshot's weights. The first snapshot's are
    copied, then one every ``every`` seconds, and the next one after ``want()``; ``latest`` is
    ``(step, params)`` of the newest copy. Once ``shared_state()`` was asked (the run is relayed to a class),
    each copy also keeps where training stands as plain data, for a student to go on from."""

    def __init__(self, pg: Playground, every: float = 0.1) -> None:
        self.pg, self.every = pg, every
        self.wanted, self.copied = True, 0.0
        self.latest: tuple[int, Params] | None = None
        self.share, self.shared, self.shared_at = False, None, 0.0

    def want(self) -> None:
        self.wanted = True

    def shared_state(self) -> dict | None:
        """The newest copy of ``playground_state.shared_state`` (None before the first); asking starts them."""
        if not self.share:
            self.share = self.wanted = True
        return self.shared

    def stream(self, snaps: Iterator) -> Iterator:
        for snap in snaps:
            due = self.wanted or time.perf_counter() - self.copied >= self.every
            if due and not getattr(snap, "diverged", False):
                self.wanted, self.copied = False, time.perf_counter()
                with torch.no_grad():
                    self.latest = (snap.step, tuple((layer.weight.detach().clone(), layer.bias.detach().clone())
                                                    for layer in self.pg.model.layers))
                if self.share and self.copied - self.shared_at >= SHARE_EVERY:
                    self.shared, self.shared_at = shared_state(self.pg), self.copied
            yield snap


def drawable(pg: Playground) -> bool:
    return max(pg.config.hidden) <= MAX_WIDTH
