"""Going on from another run's state (lesson 5's "Try it yourself" mid-run): the teacher's weights, optimizer state,
batch order and step, as JSON, into a student's model of the same settings. The reference is the teacher's own run,
uninterrupted: a model that went on from its state at step k takes exactly its steps from k on."""

import copy
import json

import pytest
import torch

from autodiff_core.playground import Playground, PlaygroundConfig
from autodiff_core.playground_state import MAX_BYTES, go_on_from, shared_state


def _through_json(pg) -> dict:
    return json.loads(json.dumps(shared_state(pg), allow_nan=False))


def _params(pg) -> list:
    return [p.detach().clone() for p in pg.params]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("optimizer", ["Adam", "SGD + momentum", "SGD (by hand)"])
def test_a_model_that_goes_on_from_the_teacher_s_state_takes_the_teacher_s_steps(optimizer, dtype):
    settings = {"optimizer": optimizer, "dtype": dtype, "learning_rate": 0.03, "batch_size": 10}
    teacher = Playground(PlaygroundConfig(init_seed=3, **settings))
    for _ in range(37):
        teacher.step()
    shared = _through_json(teacher)
    student = Playground(PlaygroundConfig(init_seed=11, **settings))  # its own seed: the state replaces it
    for _ in range(5):
        student.step()  # and what it had trained itself
    assert go_on_from(student, shared) == 37 == student.steps_done and student.forked_at == 37
    assert all(torch.equal(a, b) for a, b in zip(_params(student), _params(teacher), strict=True))
    ahead = [(s.step, s.train_loss, s.test_loss, s.grad_norms) for s in teacher.run(40, record_every=1)]
    mine = [(s.step, s.train_loss, s.test_loss, s.grad_norms) for s in student.run(40, record_every=1)]
    assert mine == ahead  # every step the same, to the last bit: the same batches, moments and updates
    assert all(torch.equal(a, b) for a, b in zip(_params(student), _params(teacher), strict=True))
    student.reset()  # back to the student's own start
    assert student.steps_done == 0 and student.forked_at is None


def test_the_largest_network_of_the_lesson_goes_on_from_the_teacher_s_state_in_float64():
    """Six hidden layers of 64 neurons on all seven features, Adam, float64: the largest state the page can make,
    under the store's bounds."""
    from autodiff_core.features import FEATURES
    from autodiff_core.playground_state import MAX_BYTES

    config = PlaygroundConfig(hidden=(64,) * 6, features=tuple(FEATURES), dtype="float64", optimizer="Adam",
                              n_per_class=20, grid=5)
    teacher = Playground(config)
    for _ in range(3):
        teacher.step()
    shared = _through_json(teacher)
    assert len(json.dumps(shared)) < MAX_BYTES * 4 // 3
    student = Playground(config)
    assert go_on_from(student, shared) == 3
    assert [s.train_loss for s in student.run(3, 1)] == [s.train_loss for s in teacher.run(3, 1)]


def test_a_state_from_another_model_is_refused_in_words_and_changes_nothing():
    teacher = Playground(PlaygroundConfig(optimizer="Adam"))
    teacher.step()
    shared = _through_json(teacher)
    for other in ({"optimizer": "SGD + momentum"}, {"hidden": (8, 4)}, {"data_seed": 2}, {"dtype": "float64"},
                  {"features": ("X1", "X2", "X1X2")}):
        student = Playground(PlaygroundConfig(**other))
        before = _params(student)
        with pytest.raises(ValueError, match="other data, another network or another optimizer"):
            go_on_from(student, shared)
        assert all(torch.equal(a, b) for a, b in zip(before, _params(student), strict=True))
        assert student.steps_done == 0


def _spoilt(shared: dict, how) -> dict:
    bad = copy.deepcopy(shared)
    how(bad["state"])
    return bad


SPOILT = {
    "bytes that do not fill the shape": lambda s: s["params"][0].__setitem__(2, s["params"][0][2][:-8]),
    "another shape": lambda s: s["params"][0].__setitem__(1, [2, 8]),
    "another dtype": lambda s: s["params"][0].__setitem__(0, "int64"),
    "not base64": lambda s: s["params"][0].__setitem__(2, "@@@@"),
    "a moment of another optimizer": lambda s: s["optimizer"][0][0].__setitem__(0, "momentum_buffer"),
    "a moment missing": lambda s: s["optimizer"][0].pop(),
    "a step count that is text": lambda s: s.__setitem__("steps", "12"),
    "a negative step count": lambda s: s.__setitem__("steps", -1),
    "a short batch order": lambda s: s.__setitem__("batches", s["batches"][:40]),
    "a layer missing": lambda s: s["params"].pop(),
    "a list where a state is": lambda s: s.clear(),
    "too large": lambda s: s["params"][0].__setitem__(2, "A" * (MAX_BYTES * 2)),
}


@pytest.mark.parametrize("name", SPOILT)
def test_a_spoilt_state_is_refused_and_changes_nothing(name):
    teacher = Playground(PlaygroundConfig(optimizer="Adam"))
    for _ in range(3):
        teacher.step()
    bad = _spoilt(_through_json(teacher), SPOILT[name])
    student = Playground(PlaygroundConfig(optimizer="Adam"))
    student.step()
    before = _params(student)
    with pytest.raises(ValueError, match="The teacher's state could not be used"):
        go_on_from(student, bad)
    assert all(torch.equal(a, b) for a, b in zip(before, _params(student), strict=True))
    assert student.steps_done == 1 and student.forked_at is None
    assert [s.step for s in student.run(2, 1)] == [1, 2, 3]  # it trains on as before


def test_weights_that_are_no_longer_finite_are_refused():
    teacher = Playground(PlaygroundConfig())
    with torch.no_grad():
        teacher.params[0][0, 0] = float("nan")
    student = Playground(PlaygroundConfig())
    with pytest.raises(ValueError, match="no longer finite"):
        go_on_from(student, _through_json(teacher))
    assert student.steps_done == 0 and bool(student.params[0].isfinite().all())


def test_a_model_put_back_after_a_reload_keeps_its_hand_edits_and_trains_on_as_before():
    """``restore``: a student's own model, kept as JSON across a reload, with the weights set by hand (which its
    exported script makes again) and the step it forked at, if it did."""
    from autodiff_core.playground_state import restore
    from autodiff_core.script_export import export_script

    mine = Playground(PlaygroundConfig(optimizer="SGD + momentum", learning_rate=0.05))
    for _ in range(4):
        mine.step()
    mine.set_weight(0, 2, 1, 0.75)
    mine.step()
    kept = _through_json(mine)
    back = Playground(PlaygroundConfig(optimizer="SGD + momentum", learning_rate=0.05))
    assert restore(back, kept) == 5 and back.edits == mine.edits and back.forked_at is None
    assert export_script(back) == export_script(mine)
    assert [s.train_loss for s in back.run(20, 1)] == [s.train_loss for s in mine.run(20, 1)]
    forked = Playground(PlaygroundConfig(optimizer="SGD + momentum", learning_rate=0.05))
    go_on_from(forked, kept)
    again = Playground(forked.config)
    restore(again, _through_json(forked))
    assert again.forked_at == forked.forked_at == 5 and again.edits == []


@pytest.mark.parametrize("edits", [[[0, 9, 0, 0, 1.0]], [[0, 0, 0, 0, "1"]], [[0, 0, 99, None, 1.0]],
                                   [[99, 0, 0, 0, 1.0]], [[0, 0, 0, 0, 1e300]], "x", [[0, 0, 0, 0]]])
def test_hand_edits_that_do_not_fit_the_network_are_refused(edits):
    from autodiff_core.playground_state import restore

    mine = Playground(PlaygroundConfig())
    mine.step()
    kept = {**_through_json(mine), "edits": edits}
    back = Playground(PlaygroundConfig())
    with pytest.raises(ValueError, match="Your kept state could not be used"):
        restore(back, kept)
    assert back.steps_done == 0 and back.edits == []


def test_a_run_s_curves_come_back_from_their_rows_and_odd_rows_are_refused():
    from dataclasses import replace

    from autodiff_core.playground_state import curve_rows, from_curve_rows

    light = [s.light() for s in Playground(PlaygroundConfig()).run(30, 1)]
    light[-1] = replace(light[-1], train_loss=float("nan"), test_loss=float("nan"), diverged=True)  # no JSON NaN
    back = from_curve_rows(json.loads(json.dumps(curve_rows(light), allow_nan=False)))
    assert [repr(s) for s in back] == [repr(s) for s in light]  # NaN == NaN in their reprs
    for odd in ([[0, 1.0, 1.0, 0.5, 0.5, False, [], []]] * 10_001, [[0, "1", 1.0, 0.5, 0.5, False, [], []]],
                [[-1, 1.0, 1.0, 0.5, 0.5, False, [], []]], [[0, 1.0, 1.0, 0.5, 0.5, 0, [], []]], {"rows": []},
                [[0, 1.0, 1.0, 0.5, 0.5, False, [1.0] * 20, []]]):
        with pytest.raises(ValueError):
            from_curve_rows(odd)
