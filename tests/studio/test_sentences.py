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
