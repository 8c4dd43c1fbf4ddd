"""Lesson 5's "Dead ReLUs" (SGD + momentum at learning rate 10): the run stalls with every weight's gradient at
exactly 0, and its snapshot says why in words whose numbers PyTorch itself confirms: the dead units, the outputs
pinned at exactly 0 or 1, and the BCE's cap of 100 that makes the train loss about 22."""

from __future__ import annotations

import re

import torch

from autodiff_core.playground import Playground, PlaygroundConfig

DEAD_RELUS = PlaygroundConfig(optimizer="SGD + momentum", learning_rate=10.0)  # the preset's settings


def test_a_stalled_run_says_why_with_numbers_pytorch_confirms():
    pg = Playground(DEAD_RELUS)
    last = list(pg.run(60, 1))[-1]
    assert last.grad_norms == (0.0, 0.0, 0.0) and not last.diverged
    message = last.message
    assert message.startswith("The last step gave every weight a gradient of exactly 0")

    # the whole training set, through PyTorch's own autograd: no weight gets any gradient
    hidden = []
    p = pg.model.forward(pg.x_train, hidden)
    loss = torch.nn.functional.binary_cross_entropy(p, pg.y_train)
    grads = torch.autograd.grad(loss, pg.model.weights)
    assert all(bool((g == 0).all()) for g in grads)
    with torch.no_grad():
        dead = [int((h.amin(0) == h.amax(0)).sum()) for h in hidden]  # units with one output for every point
        pinned = (p == 0) | (p == 1)
        wrong = (p >= 0.5) != pg.y_train.bool()
        per_point = torch.nn.functional.binary_cross_entropy(p, pg.y_train, reduction="none")
    for layer, count in enumerate(dead, 1):
        width = DEAD_RELUS.hidden[layer - 1]
        assert (f"{count} of the {width} units of layer {layer}" in message) == (count > 0)
    assert f"pinned at exactly 0 or 1 for {pinned.float().mean().item():.0%} of the training points" in message
    assert torch.equal(per_point[pinned & wrong], torch.full_like(per_point[pinned & wrong], 100.0))  # the cap
    share = (pinned & wrong).float().mean().item()
    assert f"{100 * share:.3g} of the train loss of {loss.item():.3g}" in message
    assert abs(loss.item() - last.train_loss) < 1e-3
    right = f"{1 - wrong.float().mean().item():.1%} of the training points right (test {last.test_accuracy:.1%})"
    assert right in message and re.search(r"The learning rate 10 is likely too large; try [\d.]+", message)


def test_a_run_that_learns_has_no_such_sentence():
    last = list(Playground(PlaygroundConfig()).run(30, 10))[-1]
    assert any(last.grad_norms) and "exactly 0" not in last.message
