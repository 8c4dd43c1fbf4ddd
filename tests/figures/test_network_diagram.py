"""The network diagram: every tile is what its neuron computes, every link and bias its parameter."""

import numpy as np
import torch

from autodiff_core.diagram import network_state
from autodiff_core.figures.network import network_figure
from autodiff_core.playground import Playground, PlaygroundConfig


def _pg():
    pg = Playground(PlaygroundConfig(dataset="Circles", hidden=(4, 2), activation="Tanh",
                                     features=("X1", "X2", "X1²")))
    list(pg.run(50, 50))
    return pg


def test_tiles_are_each_neurons_output_over_the_plane():
    pg, grid = _pg(), 6
    state = network_state(pg, grid)
    xs = torch.linspace(-6, 6, grid)
    gy, gx = torch.meshgrid(xs, xs, indexing="ij")
    x1, x2 = gx.reshape(-1), gy.reshape(-1)
    inputs = torch.stack([x1, x2, x1 * x1], 1)
    w1, b1 = pg.model.layers[0].weight.detach(), pg.model.layers[0].bias.detach()
    h1 = torch.tanh(inputs @ w1.T + b1)  # (grid*grid, 4) by the built-in
    np.testing.assert_allclose(state.maps[1][2], h1[:, 2].reshape(grid, grid).numpy(), rtol=1e-5, atol=1e-6)
    p = pg.model(inputs).detach()
    np.testing.assert_allclose(state.maps[-1][0], (2 * p - 1).reshape(grid, grid).numpy(), rtol=1e-5, atol=1e-6)
    assert [len(m) for m in state.maps] == [3, 4, 2, 1] and np.abs(state.maps[0]).max() <= 1
    np.testing.assert_array_equal(state.weights[1], pg.model.layers[1].weight.detach().numpy())
    np.testing.assert_array_equal(state.biases[2], pg.model.layers[2].bias.detach().numpy())


def test_figure_has_a_tile_per_neuron_and_hover_for_every_weight_and_bias():
    pg = _pg()
    fig = network_figure(network_state(pg))
    heatmaps = [t for t in fig.data if t.type == "heatmap"]
    assert len(heatmaps) == 3 + 4 + 2 + 1
    texts = [s for t in fig.data if t.type == "scatter" and t.text is not None for s in t.text]
    weights = [s for s in texts if s.startswith("weight")]
    biases = [s for s in texts if s.startswith("bias")]
    assert len(weights) == 3 * 4 + 4 * 2 + 2 and len(biases) == 4 + 2 + 1
    w = pg.model.layers[0].weight.detach()[0, 0].item()
    assert f"weight {w:+.3f}" in weights
    assert fig.to_json()


def test_each_input_tile_is_named_at_its_left():
    """TF Playground's habit: X1, X2, X1², ... beside their tiles, not only on hover (a phone has no hover)."""
    pg = _pg()
    state = network_state(pg)
    fig = network_figure(state)
    named = {a.text: a for a in fig.layout.annotations if a.text in state.names}
    assert list(named) == ["X1", "X2", "X1²"]
    tiles = [t for t in fig.data if t.type == "heatmap"][:3]  # the input column, top to bottom
    for a, tile in zip(named.values(), tiles, strict=True):
        assert a.xanchor == "right" and a.x < min(tile.x) and a.x - 1.2 > fig.layout.xaxis.range[0]  # room left
        assert min(tile.y) < a.y < max(tile.y)  # level with its tile
