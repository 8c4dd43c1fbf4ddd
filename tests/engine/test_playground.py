"""The playground trainer: learnability, Step/Reset, extremes (its datasets: tests/test_data.py)."""

import json
import re

import pytest
import torch

from autodiff_core.figures.playground import playground_live_payload, playground_replay_figure, step_axis
from autodiff_core.figures.theme import FONT_SIZE
from autodiff_core.functions import FUNCTIONS
from autodiff_core.playground import MLP, OPTIMIZERS, Playground, PlaygroundConfig, backward_problem


@pytest.mark.parametrize(("name", "target"), [("XOR", 0.9), ("Circles", 0.85), ("Two moons", 0.95)])
def test_the_default_model_learns_each_dataset(name, target):
    """The default playground (2 x 8 MyReLU units, Adam 0.03, batch 32) within 500 steps."""
    pg = Playground(PlaygroundConfig(dataset=name))
    best = max(s.test_accuracy for s in pg.run(500, record_every=50))
    assert best >= target


def test_reset_restores_the_same_initial_weights_and_step_advances():
    pg = Playground(PlaygroundConfig())
    start = [p.detach().clone() for p in pg.model.parameters()]
    first = pg.snapshot()
    for _ in range(5):
        pg.step()
    assert pg.steps_done == 5
    assert any(not torch.equal(a, b) for a, b in zip(start, pg.model.parameters(), strict=True))
    pg.reset()
    assert pg.steps_done == 0
    assert all(torch.equal(a, b) for a, b in zip(start, pg.model.parameters(), strict=True))
    assert pg.snapshot() == first
    again = Playground(PlaygroundConfig())  # a new playground with the same seed starts the same
    assert all(torch.equal(a, b) for a, b in zip(start, again.model.parameters(), strict=True))


def test_two_runs_after_reset_take_identical_steps():
    pg = Playground(PlaygroundConfig())
    a = [s.train_loss for s in pg.run(40, 10)]
    pg.reset()
    b = [s.train_loss for s in pg.run(40, 10)]
    assert a == b


def test_run_continues_from_where_the_model_is():
    pg = Playground(PlaygroundConfig())
    list(pg.run(20, 10))
    snaps = list(pg.run(20, 10))
    assert [s.step for s in snaps] == [20, 30, 40]


def test_training_settings_change_without_losing_the_weights():
    pg = Playground(PlaygroundConfig())
    list(pg.run(10, 10))
    weights = [p.detach().clone() for p in pg.model.parameters()]
    from dataclasses import replace

    pg.set_training(replace(pg.config, optimizer="SGD (by hand)", learning_rate=0.1))
    assert all(torch.equal(a, b) for a, b in zip(weights, pg.model.parameters(), strict=True))
    with pytest.raises(ValueError, match="new Playground"):
        pg.set_training(replace(pg.config, dataset="Circles"))


def test_the_surface_comes_from_one_batched_forward_pass():
    pg = Playground(PlaygroundConfig(grid=12))
    snap = pg.snapshot()
    with torch.no_grad():
        expected = pg.model(pg.grid_points).reshape(12, 12)
    assert len(snap.surface) == 12 and len(snap.surface[0]) == 12
    assert abs(torch.tensor(snap.surface) - expected).max() <= 5e-4 + 1e-7  # rounded to 3 decimals


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_every_optimizer_learns_xor(optimizer):
    lr = {"Adam": 0.03, "SGD + momentum": 0.1, "SGD (by hand)": 0.5}[optimizer]
    pg = Playground(PlaygroundConfig(optimizer=optimizer, learning_rate=lr))
    assert max(s.test_accuracy for s in pg.run(600, 100)) >= 0.85


def test_the_activation_is_the_custom_function_by_default():
    pg = Playground(PlaygroundConfig())
    x = torch.randn(4, 2)
    hidden = pg.model.act(pg.model.layers[0](x))
    assert type(hidden.grad_fn).__name__ == "MyReLUBackward"
    assert isinstance(pg.model, MLP)


def test_a_huge_learning_rate_says_why_nothing_learns():
    for optimizer in OPTIMIZERS:
        pg = Playground(PlaygroundConfig(optimizer=optimizer, learning_rate=1e6))
        last = list(pg.run(200, 50))[-1]
        assert "learning rate" in last.message and "too large" in last.message or "died" in last.message


def test_nan_weights_end_the_run_as_diverged():
    pg = Playground(PlaygroundConfig())
    with torch.no_grad():
        pg.model.layers[0].weight.fill_(float("nan"))
    snaps = list(pg.run(30, 10))
    assert len(snaps) == 1 and snaps[0].diverged and "diverged at step 0" in snaps[0].message


def test_one_neuron_layers_and_zero_noise_still_train():
    pg = Playground(PlaygroundConfig(hidden=(1, 1, 1), noise=0.0, dataset="Gaussian clusters"))
    snaps = list(pg.run(100, 50))
    assert not snaps[-1].diverged and len(snaps) == 3


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"hidden": ()}, "hidden must list 1 to 6"), ({"hidden": (8,) * 7}, "hidden"),
    ({"hidden": (0,)}, "hidden layer width"), ({"dataset": "iris"}, "dataset must be one of"),
    ({"optimizer": "RMSprop"}, "optimizer"), ({"batch_size": 0}, "batch_size"), ({"noise": -1}, "noise"),
    ({"test_fraction": 0.99}, "test_fraction"), ({"learning_rate": 0}, "learning_rate"),
])
def test_bad_playground_configs_raise(kwargs, field):
    with pytest.raises(ValueError, match=field):
        PlaygroundConfig(**kwargs)


def _suggested(message: str) -> float:
    [value] = re.findall(r"try ([0-9.e+-]+)", message)
    return float(value)


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_a_huge_learning_rate_suggests_one_that_trains(optimizer):
    """The suggestion is run: it must learn XOR, with no complaint on the way."""
    pg = Playground(PlaygroundConfig(optimizer=optimizer, learning_rate=1e6))
    message = next(s.message for s in pg.run(200, 20) if s.message)
    lr = _suggested(message)
    assert lr <= 1.0
    snaps = list(Playground(PlaygroundConfig(optimizer=optimizer, learning_rate=lr)).run(1000, 100))
    assert not any(s.message for s in snaps) and max(s.test_accuracy for s in snaps) >= 0.9


def test_a_diverged_run_suggests_a_rate_that_trains():
    """Exp's outputs blow up at Adam's 0.03 on TF's -6..6 plane (exp(6) is 400); following the suggestions,
    each a tenth of the last, a rate that trains comes within two."""
    pg = Playground(PlaygroundConfig(activation="Exp"))
    last = list(pg.run(1000, 20))[-1]
    assert last.diverged and "learning rate 0.03" in last.message
    for _ in range(2):
        config = PlaygroundConfig(activation="Exp", learning_rate=_suggested(last.message))
        snaps = list(Playground(config).run(1000, 100))
        last = snaps[-1]
        if not last.diverged:
            break
    assert not any(s.diverged for s in snaps) and max(s.test_accuracy for s in snaps) >= 0.85


def _torch_gradcheck(name: str) -> bool:
    x = torch.linspace(-2.9, 2.9, 8, dtype=torch.float64).requires_grad_()  # off the kink at 0
    return torch.autograd.gradcheck(FUNCTIONS[name].apply, (x,), raise_exception=False)


@pytest.mark.parametrize("name", [n for n, spec in FUNCTIONS.items() if not spec.correct])
def test_a_broken_backward_is_blamed_not_the_learning_rate(name):
    assert not _torch_gradcheck(name)
    assert f"backward of {name} is wrong" in backward_problem(name) and "gradcheck fails" in backward_problem(name)
    for lr in (0.03, 1e6):
        messages = [s.message for s in Playground(PlaygroundConfig(activation=name, learning_rate=lr)).run(300, 20)]
        assert all("try" not in m and "is wrong" in m for m in messages if m), messages


@pytest.mark.parametrize("name", [n for n, spec in FUNCTIONS.items() if spec.correct])
def test_a_correct_backward_is_not_blamed(name):
    assert _torch_gradcheck(name) and backward_problem(name) == ""


def _xor_run(n=300):
    pg = Playground(PlaygroundConfig())
    return pg, list(pg.run(n, 10))


def test_the_replay_is_smooth_light_and_in_the_house_font():
    pg, snaps = _xor_run()
    train = (pg.x_train.numpy(), pg.y_train.numpy())
    test = (pg.x_test.numpy(), pg.y_test.numpy())
    fig = playground_replay_figure(snaps, pg.extent, pg.config.grid, train, test)
    assert fig.data[0].type == "heatmap" and fig.data[0].zsmooth == "best"  # as smooth as the live canvas
    assert len(fig.frames) <= 200 and len(fig.to_json()) < 2_000_000
    assert fig.layout.font.size == FONT_SIZE and fig.layout.legend.font.size == FONT_SIZE
    assert fig.layout.sliders[0].currentvalue.font.size == FONT_SIZE
    captions = [f.layout.title.text for f in fig.frames]
    assert len(set(captions)) == len(captions) and captions[-1] == fig.layout.title.text  # one per frame
    play, pause = fig.layout.updatemenus[0].buttons
    assert play.args[1]["fromcurrent"] and play.args[1]["frame"]["redraw"]  # Play goes on from the paused frame
    live = playground_live_payload(snaps, pg.extent, pg.config.grid, train, test, run_id="r", status="done",
                                   status_text="", steps_axis=500)
    assert live["layout"]["font"]["size"] == FONT_SIZE and live["layout"]["legend"]["font"]["size"] == FONT_SIZE
    assert json.loads(json.dumps(live))  # plain JSON


def test_a_run_keeps_light_records_of_every_step_evenly_when_it_must_thin_them():
    """Light records (no surface) of every recorded step; past MAX_TRAIL they are thinned evenly over the
    steps, not by index (which would keep the dense start of a run and starve its end)."""
    from autodiff_core.recording import every_step_then_sparser
    from studio.keeping import MAX_TRAIL, evenly
    from studio.runner import LiveRun

    pg = Playground(PlaygroundConfig(hidden=(4,)))
    snap = pg.snapshot()
    assert snap.light().surface == () and snap.light().train_loss == snap.train_loss and snap.surface
    records = [type("R", (), {"step": s})() for s in list(range(400)) + list(range(400, 20_000, 16))]
    kept = evenly(records, lambda r: r.step, 100)
    steps = [r.step for r in kept]
    assert steps[0] == 0 and steps[-1] == records[-1].step and len(kept) <= 102
    assert max(b - a for a, b in zip(steps, steps[1:], strict=False)) <= 2 * 20_000 / 100
    run = LiveRun("playground", pg.config, lambda: every_step_then_sparser(pg.run, total=3000), lambda s: s.step,
                  light=lambda s: s.light())
    for s in every_step_then_sparser(pg.run, total=3000):
        run._produce(s)
    assert [r.step for r in run.trail_view()] == [s.step for s in run.trail] and len(run.trail) == run.count
    assert run.count <= MAX_TRAIL and all(r.surface == () for r in run.trail)


@pytest.mark.parametrize("last", [1, 3, 7, 99, 100, 151, 400, 404, 500, 999, 1000, 2044, 6368, 100_000])
def test_the_step_axis_last_tick_stays_clear_of_the_accuracy_axis(last):
    """The step axis's ticks are round and few, and the last one sits at most 88% along the axis, whatever the
    run's length: its label, centred on it, cannot reach the "0%" of the accuracy axis at the right edge (on a
    phone, Plotly's own ticks put "400" on the very end of a 404-step run)."""
    axis = step_axis(last)
    end, dtick = axis["range"][1], axis["dtick"]
    ticks = [t for t in range(0, int(end) + 1, dtick)]
    assert axis["tickmode"] == "linear" and axis["tick0"] == 0
    assert end >= last and len(ticks) <= 5
    assert ticks[-1] <= 0.88 * end * (1 + 1e-9)
    assert str(dtick).lstrip("125").strip("0") == ""  # 1, 2 or 5 × 10^k
    pg, snaps = _xor_run(min(last, 30))
    fig = playground_replay_figure(snaps, pg.extent, pg.config.grid, (pg.x_train.numpy(), pg.y_train.numpy()),
                                   (pg.x_test.numpy(), pg.y_test.numpy()))
    assert fig.layout.xaxis2.dtick == step_axis(snaps[-1].step)["dtick"]  # the replay uses it
