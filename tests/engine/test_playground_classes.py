"""Lesson 5 with 3 to 6 classes and with the class's own points: datasets, config, training, drawing, export."""

import numpy as np
import pytest
import torch

from autodiff_core import runs_io
from autodiff_core.data import OWN, OWN_REGRESSION, make_playground_data
from autodiff_core.diagram import network_state
from autodiff_core.figures.classroom import PLAYGROUND, difference_label, replay_figure, standalone_html
from autodiff_core.figures.gradflow import discretized
from autodiff_core.figures.playground import drawn, playground_live_payload, playground_replay_figure
from autodiff_core.figures.theme import MANY_CLASS_COLORS
from autodiff_core.own_data import starter
from autodiff_core.playground import Playground, PlaygroundConfig
from autodiff_core.script_export import export_script
from autodiff_core.slow_step import slow_step
from tests.conftest import run_exported

MANY = ("Blobs", "Spiral arms", "Pie slices")


@pytest.mark.parametrize("name", MANY)
@pytest.mark.parametrize("classes", [2, 3, 6])
def test_many_class_sets_share_their_points_evenly_and_are_decided_by_their_seed(name, classes):
    x, y = make_playground_data(name, 60, 0.1, seed=5, classes=classes)
    again, _ = make_playground_data(name, 60, 0.1, seed=5, classes=classes)
    other, _ = make_playground_data(name, 60, 0.1, seed=6, classes=classes)
    assert x.shape == (60, 2) and torch.equal(x, again) and not torch.equal(x, other)
    assert torch.bincount(y.long()).tolist() == [60 // classes] * classes
    assert x.abs().max() < 7.5  # on TF's plane


def test_a_pie_without_noise_has_each_class_in_its_own_sector():
    x, y = make_playground_data("Pie slices", 120, 0.0, seed=0, classes=4)
    angle = torch.atan2(x[:, 1], x[:, 0]).remainder(2 * torch.pi)
    assert torch.equal((angle / (torch.pi / 2)).floor(), y)


@pytest.mark.parametrize(("name", "classes", "hidden", "target"), [
    ("Blobs", 5, (8, 8), 0.9), ("Spiral arms", 3, (16, 16), 0.9),
    ("Pie slices", 4, (8, 8), 0.85)])
def test_the_softmax_network_learns_many_classes(name, classes, hidden, target):
    pg = Playground(PlaygroundConfig(dataset=name, classes=classes, hidden=hidden))
    assert pg.model.layers[-1].out_features == classes
    best = max(s.test_accuracy for s in pg.run(800, record_every=100))
    assert best >= target


def test_two_classes_keep_the_sigmoid_and_bce():
    pg = Playground(PlaygroundConfig(dataset="Blobs", classes=2))
    assert pg.model.layers[-1].out_features == 1 and pg.loss_fn is torch.nn.functional.binary_cross_entropy
    assert all(0 <= v <= 1 for row in pg.snapshot().surface for v in row)


def test_the_config_says_what_does_not_fit():
    with pytest.raises(ValueError, match="classes must be 2 for XOR"):
        PlaygroundConfig(dataset="XOR", classes=3)
    with pytest.raises(ValueError, match="classes must be an integer from 2 to 6"):
        PlaygroundConfig(dataset="Pie slices", classes=7)
    with pytest.raises(ValueError, match="points are for the datasets of your own points"):
        PlaygroundConfig(points=((0.0, 0.0, 0.0),) * 4)
    with pytest.raises(ValueError, match="points must be 4 to 2,000"):
        PlaygroundConfig(dataset=OWN, classes=3)
    with pytest.raises(ValueError, match="classes must be at least 4: the points use class 3"):
        PlaygroundConfig(dataset=OWN, classes=3, points=((0.0, 0.0, 3.0),) * 4)
    with pytest.raises(ValueError, match="target 2 is outside -1 to 1"):
        PlaygroundConfig(dataset=OWN_REGRESSION, points=((0.0, 0.0, 2.0),) * 4)


def test_the_surface_is_class_plus_strength_and_discretize_makes_it_certain():
    pg = Playground(PlaygroundConfig(dataset="Blobs", classes=3))
    *_, snap = pg.run(300, 300)
    z = np.array(snap.surface)
    assert set(np.floor(z).astype(int).ravel()) == {0, 1, 2} and z.max() < 3
    top = z[-1, len(z) // 2]  # the top middle of the plane: class 0's blob sits at the top
    assert int(top) == 0 and top - int(top) > 0.5
    [flat] = discretized([snap], 1, classes=3)
    assert np.allclose(np.array(flat.surface) % 1, 0.999) and np.array_equal(np.floor(flat.surface), np.floor(z))


def test_the_figures_draw_a_colour_for_each_class():
    pg = Playground(PlaygroundConfig(dataset="Pie slices", classes=5, n_per_class=20))
    snaps = list(pg.run(20, 10))
    train, test = drawn(pg.points_train, pg.y_train, False), drawn(pg.points_test, pg.y_test, False)
    data = playground_live_payload(snaps, pg.extent, pg.config.grid, train, test, run_id="r", status="done",
                                   status_text="", steps_axis=20, classes=5)
    points = [t for t in data["base"] if t.get("mode") == "markers"]
    assert [t["marker"]["color"] for t in points[:5]] == list(MANY_CLASS_COLORS[:5])
    assert [t["name"] for t in points[:5]] == [f"class {k}" for k in range(5)]
    assert sorted(data["curves"])[:3] == [10, 11, 12]
    assert data["surface"]["classes"][2] == [round(247 + (c - 247) * 0.6) for c in (0, 158, 115)]  # green, lighter
    assert data["layout"]["yaxis2"]["title"]["text"] == "cross-entropy"
    fig = playground_replay_figure(snaps, pg.extent, pg.config.grid, train, test, classes=5)
    assert fig.data[0].zmax == 5 and fig.data[0].zsmooth == "fast"
    assert list(fig.frames[-1].traces) == [0] and fig.data[11].name == "train loss"  # a frame moves the surface


def test_the_diagram_and_slow_motion_have_one_output_a_class():
    pg = Playground(PlaygroundConfig(dataset="Spiral arms", classes=4, hidden=(5,)))
    state = network_state(pg)
    assert state.maps[-1].shape[0] == 4 and np.allclose(((state.maps[-1] + 1) / 2).sum(0), 1, atol=1e-5)
    before = pg.snapshot()
    trace = slow_step(pg)
    assert len(trace.layers[-1].post) == 4 and sum(trace.layers[-1].post) == pytest.approx(1, abs=1e-5)
    assert trace.target in (0, 1, 2, 3) and pg.steps_done == 1 and pg.snapshot() != before


def test_own_points_train_and_a_new_point_keeps_the_weights_and_the_others_split():
    points = starter(3, False, seed=0)
    pg = Playground(PlaygroundConfig(dataset=OWN, classes=3, points=points))
    list(pg.run(20, 20))
    weights = [p.detach().clone() for p in pg.params]
    train_before = {tuple(p) for p in pg.points_train.tolist()}
    pg.set_points((*points, (5.0, -5.0, 2.0)))
    assert pg.steps_done == 20 and all(torch.equal(a, b) for a, b in zip(weights, pg.params, strict=True))
    assert train_before <= {tuple(p) for p in pg.points_train.tolist()}  # nobody else moved between the splits
    assert len(pg.y_train) + len(pg.y_test) == len(points) + 1
    snaps = list(pg.run(5, 5))
    assert snaps[-1].step == 25 and not snaps[-1].diverged


def test_points_far_out_widen_the_plane():
    points = ((-40.0, 3.0, 0.0), (2.0, 2.0, 1.0), (0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    pg = Playground(PlaygroundConfig(dataset=OWN, points=points))
    assert pg.extent == (-42.0, 42.0, -42.0, 42.0)
    pg.set_points(points[1:] + ((0.5, 0.5, 1.0),))
    assert pg.extent == (-6.0, 6.0, -6.0, 6.0)


@pytest.mark.parametrize("config", [
    dict(dataset="Spiral arms", classes=3, optimizer="SGD (by hand)", learning_rate=0.1, l2=0.001),
    dict(dataset=OWN, classes=4, points=starter(4, False, 3), activation="Tanh", optimizer="SGD + momentum"),
    dict(dataset=OWN_REGRESSION, points=starter(2, True, 1), activation="torch.tanh", learning_rate=0.01),
])
def test_the_exported_script_reproduces_classes_and_own_points(config, tmp_path):
    pg = Playground(PlaygroundConfig(**config))
    snaps = list(pg.run(30, 1))
    source = export_script(pg)
    assert "autodiff_core" not in source
    steps, final_test = run_exported(source, tmp_path)
    torch.testing.assert_close(torch.tensor(steps), torch.tensor([s.train_loss for s in snaps[1:]]), rtol=1e-5,
                               atol=1e-6)
    assert final_test == pytest.approx(snaps[-1].test_loss, rel=1e-5)
    if pg.config.outputs > 1:
        assert "class MySoftmax(Function):" in source and "softmax = MySoftmax.apply" in source


def test_a_run_file_holds_the_classes_and_the_points():
    import studio.lessons  # noqa: F401  (registers lesson 5's run files)

    config = PlaygroundConfig(dataset=OWN, classes=3, points=starter(3, False, 2), grid=8)
    snaps = list(Playground(config).run(4, 2))
    text = runs_io.to_json(runs_io.run_record("playground", config, snaps))
    lesson, loaded, states, _ = runs_io.from_json(text)
    assert loaded == config and states == snaps
    record = runs_io.run_record("playground", config, snaps)
    record["config"]["points"][1] = [1, 2]
    with pytest.raises(ValueError, match="points is a list of at most 2,000 points, each a list of three numbers"):
        runs_io.from_json(runs_io.to_json(record))
    record["config"]["points"][1] = [1, 2, 9]
    with pytest.raises(ValueError, match="class 9 is not a whole number from 0 to 5"):
        runs_io.from_json(runs_io.to_json(record))
    fig = replay_figure(PLAYGROUND, loaded, states)  # a loaded file's replay, and the HTML export of it
    assert fig.data[0].zmax == 3 and [t.name for t in fig.data[1:4]] == ["class 0", "class 1", "class 2"]
    html = standalone_html(fig, "run")
    assert '"class 2"' in html and '"traces":[0]' in html and 'train loss' in html  # a frame moves the surface
    other = PlaygroundConfig(dataset=OWN, classes=3, points=starter(3, False, 5), grid=8)
    assert difference_label(loaded, other) == "15 own points"  # a ghost's label names how many, not each


def test_noise_and_points_per_class_leave_a_model_of_your_own_points_alone():
    """They do not apply to your own points: moving them must not throw the trained model away."""
    own = PlaygroundConfig(dataset=OWN, classes=3, points=starter(3, False, 0))
    assert own.model_key() == PlaygroundConfig(dataset=OWN, classes=3, points=starter(3, False, 1), noise=0.4,
                                               n_per_class=20).model_key()
    assert PlaygroundConfig().model_key() != PlaygroundConfig(noise=0.4).model_key()
