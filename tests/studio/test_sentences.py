"""Every sentence is true of what is beside it: a lesson's words follow the settings its presets change (read at the
defaults and at each preset, as a class opens them by link)."""

from __future__ import annotations

import pytest


def opened(new_app, page: str, preset: str | None = None):
    at = new_app()
    if preset:
        at.query_params["preset"] = preset
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize(("preset", "name", "relu"), [
    (None, "MyReLU", "MyReLU.apply"),
    ("torch-relu-instead-of-myrelu", "torch.relu", "torch.relu"),  # was titled "trained with MyReLU"
])
def test_lesson_2_names_the_activation_that_trains(new_app, preset, name, relu):
    at = opened(new_app, "pages/two_layer.py", preset)
    assert at.title[0].value == f"2 · A two-layer net trained with {name}"
    assert f"`y_pred = relu(x @ w1) @ w2` with `relu = {relu}`" in at.markdown[0].value


@pytest.mark.parametrize(("preset", "said"), [
    (None, "`torch.optim.SGD` with momentum 0.9 updates the weights"),
    ("no-momentum-slow", "`torch.optim.SGD` with momentum 0, plain gradient descent, updates the weights"),
])
def test_lesson_3_says_the_momentum_that_trains(new_app, preset, said):
    at = opened(new_app, "pages/logistic.py", preset)
    assert said in at.markdown[0].value  # was "with momentum" at momentum 0 too


def test_lesson_5_s_noise_note_claims_the_higher_loss_only_once_the_network_has_learned(new_app):
    """At 'Vanishing gradients' the test split holds the larger share of flipped labels (3% against 1%), but the
    untrained network's test loss is not the higher one: the note said the split 'shows the higher loss' anyway."""
    at = opened(new_app, "pages/playground.py", "vanishing-gradients-sigmoid-6-layers")
    for _ in range(3):
        at.button(key="pg_step").click().run()
    last = at.session_state["pg_session"].history[-1]
    [note] = [c.value for c in at.caption if c.value.startswith("Noise gave")]
    assert "2 of 60 test points (3%)" in note and last.test_loss < last.train_loss  # beside it: not (yet) higher
    assert "once it has learned, the split with the larger share of them shows the higher loss" in note
