"""Lesson 5's label noise: it flips training and test labels alike, and the page says what the flipped labels
do to the two losses (the default XOR run's training loss is several times its test loss because noise
happened to flip 5 of its 140 training labels and none of its 60 test labels)."""

import pytest
import torch

from autodiff_core.data import PLAYGROUND_DATASETS, flipped_labels, label_noise_note, make_playground_data
from autodiff_core.playground import Playground, PlaygroundConfig


@pytest.mark.parametrize("name", ["Circles", "XOR"])
def test_flipped_labels_are_the_ones_noise_changed(name):
    """Noise leaves the points put (the same draw at noise 0), so the flipped labels are the ones that differ
    from the noise-free draw's."""
    x, y = make_playground_data(name, 400, 0.3, seed=2)
    clean_x, clean_y = make_playground_data(name, 400, 0.0, seed=2)
    assert torch.equal(x, clean_x)
    flipped = flipped_labels(name, x, y)
    assert torch.equal(flipped, y != clean_y) and flipped.any()
    assert not flipped_labels(name, clean_x, clean_y).any()


def test_sets_whose_labels_never_flip_have_no_flips():
    for name in PLAYGROUND_DATASETS:
        if name not in ("Circles", "XOR"):
            x, y = make_playground_data(name, 50, 0.3, seed=0)
            assert flipped_labels(name, x, y) is None and label_noise_note(name, (x, y), (x, y)) == ""


def test_noise_is_drawn_before_the_split_for_both_parts():
    """The train and test points are one draw, shuffled: the same noise reaches both, and at a large noise
    both hold flipped labels."""
    config = PlaygroundConfig(noise=0.5)
    pg = Playground(config)
    x, y = make_playground_data(config.dataset, 2 * config.n_per_class, config.noise, config.data_seed)
    points = torch.cat([pg.points_train, pg.points_test])
    labels = torch.cat([pg.y_train, pg.y_test])
    order, drawn = points[:, 0].argsort(), x[:, 0].argsort()
    assert torch.equal(points[order], x[drawn]) and torch.equal(labels[order], y[drawn])
    assert flipped_labels("XOR", pg.points_train, pg.y_train).any()
    assert flipped_labels("XOR", pg.points_test, pg.y_test).any()


def test_note_counts_each_splits_flipped_labels():
    train = (torch.tensor([[1.0, 1.0], [1.0, -1.0], [-2.0, -2.0], [2.0, 3.0]]), torch.tensor([0.0, 0.0, 1.0, 0.0]))
    test = (torch.tensor([[1.0, 1.0], [-1.0, 1.0]]), torch.tensor([1.0, 0.0]))
    note = label_noise_note("XOR", train, test)
    assert "2 of 4 training points (50%)" in note and "0 of 2 test points (0%)" in note
    assert label_noise_note("XOR", test, test) == ""  # nothing flipped: nothing to explain


def test_page_explains_the_losses_with_the_flipped_labels(app):
    at = app.switch_page("pages/playground.py").run()
    pg = at.session_state["pg_session"].model
    k = int(flipped_labels("XOR", pg.points_train, pg.y_train).sum())
    k_test = int(flipped_labels("XOR", pg.points_test, pg.y_test).sum())
    assert k != k_test  # the default data: the two splits got unequal shares of flipped labels
    [note] = [c.value for c in at.caption if "the other class's label" in c.value]
    assert f"{k} of {len(pg.y_train)} training points" in note and f"{k_test} of {len(pg.y_test)} test" in note
    at.slider(key="pg_noise").set_value(0.0).run()
    assert not [c for c in at.caption if "the other class's label" in c.value] and not at.exception
