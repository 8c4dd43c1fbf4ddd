"""Lesson 3's trainer: when it stops, when it is stuck, and the learning rate it suggests, checked
against PyTorch itself (the tutorial's loop, autograd's gradient and Hessian)."""

import re
from dataclasses import replace

import pytest
import torch
from torch import nn

from autodiff_core import LogisticConfig, train_logistic
from autodiff_core.logistic import SATURATED, logistic_data, suggested_learning_rate
from autodiff_core.reference import tutorial_logistic


@pytest.mark.parametrize("record_every", [1, 20, 100])
def test_the_stop_check_follows_the_tutorial_whatever_is_drawn(record_every):
    """The tutorial checks the accuracy every 20 iterations; drawing more or less often changes nothing."""
    expected = list(tutorial_logistic())[-1]  # (iteration, loss, accuracy, w0, w1, b) where the tutorial breaks
    snaps = list(train_logistic(LogisticConfig(record_every=record_every)))
    last = snaps[-1]
    assert (last.iteration, last.loss, last.accuracy, last.w0, last.w1, last.b) == expected
    assert last.stopped and not any(s.stopped for s in snaps[:-1])
    drawn = [s.iteration for s in snaps[:-1]]
    assert drawn == list(range(0, last.iteration, record_every))


def test_check_every_is_its_own_setting():
    tutorial = [s.iteration for s in train_logistic(LogisticConfig())][-1]
    every_iteration = [s.iteration for s in train_logistic(LogisticConfig(check_every=1))][-1]
    assert every_iteration <= tutorial  # checked more often, it can only stop sooner
    with pytest.raises(ValueError, match="check_every"):
        LogisticConfig(check_every=0)


def bce_and_grad(x, y, w0, w1, b):
    """The mean BCE loss at these weights and its gradient, by autograd."""
    w = torch.tensor([w0, w1, b], dtype=torch.float64, requires_grad=True)
    p = torch.sigmoid(x.double() @ w[:2] + w[2])
    loss = nn.functional.binary_cross_entropy(p, y.double())
    (grad,) = torch.autograd.grad(loss, w)
    return p.detach(), grad


def test_a_huge_learning_rate_ends_stuck_and_says_why():
    config = LogisticConfig(learning_rate=1e6)
    snaps = list(train_logistic(config))
    last = snaps[-1]
    assert last.stuck and not last.stopped and not last.diverged
    assert last.iteration < config.max_iterations - 1  # it ends once the weights stop moving
    # What the message claims, checked with autograd at the final weights: the misclassified points'
    # sigmoid is saturated and the gradient has vanished, while the loss is far from small.
    x, y = logistic_data(config)
    p, grad = bce_and_grad(x, y, last.w0, last.w1, last.b)
    wrong = (p >= 0.5) != y.bool()
    assert last.saturated == int((wrong & (p * (1 - p) < SATURATED)).sum()) > 0
    assert grad.norm() < 1e-9 and last.loss > 1
    assert "learning rate 1e+06 is too large" in last.message and "no gradient" in last.message
    assert last.message.startswith(f"Stuck at iteration {last.iteration}")


@pytest.mark.parametrize("kwargs", [{}, {"mean": 2.5}, {"mean": 10.0, "bias": 10.0}, {"momentum": 0.0},
                                    {"momentum": 0.5}, {"dtype": "float64"}])
def test_the_suggested_learning_rate_trains(kwargs):
    stuck = list(train_logistic(LogisticConfig(learning_rate=1e6, **kwargs)))[-1]
    if stuck.stopped:  # far-apart clusters: even 1e6 separates them at once; nothing to suggest
        assert not stuck.message
        return
    suggestion = float(re.search(r"Try learning rate ([0-9.e+-]+)\.", stuck.message).group(1))
    assert suggestion == suggested_learning_rate(logistic_data(LogisticConfig(**kwargs))[0])
    trained = list(train_logistic(LogisticConfig(learning_rate=suggestion, **kwargs)))[-1]
    assert trained.stopped and not trained.message and trained.saturated == 0


@pytest.mark.parametrize("kwargs", [{}, {"mean": 0.5, "bias": -3.0}, {"mean": 10.0, "bias": 10.0}])
def test_the_suggestion_is_below_one_over_the_loss_curvature(kwargs):
    """At w = 0 the sigmoid's slope is at its largest (1/4), so autograd's Hessian there is the curvature
    bound; the suggestion is 1/L rounded down to 1, 2 or 5 x 10^k."""
    x, y = logistic_data(LogisticConfig(**kwargs))

    def loss(w):
        return nn.functional.binary_cross_entropy(torch.sigmoid(x.double() @ w[:2] + w[2]), y.double())

    hessian = torch.autograd.functional.hessian(loss, torch.zeros(3, dtype=torch.float64))
    limit = 1 / float(torch.linalg.eigvalsh(hessian)[-1])
    suggestion = suggested_learning_rate(x)
    assert limit / 2.5 <= suggestion <= limit


@pytest.mark.parametrize("kwargs", [
    {"learning_rate": 50.0, "momentum": 0.0, "zero_grad": False},  # the loss sits flat, the weights move
    {"learning_rate": 10.0, "momentum": 0.9, "zero_grad": False},
    {"learning_rate": 50.0, "momentum": 0.99},
    {"learning_rate": 300.0, "momentum": 0.0},
])
def test_a_run_that_still_learns_is_never_called_stuck(kwargs):
    snaps = list(train_logistic(LogisticConfig(**kwargs)))
    assert snaps[-1].stopped and not any(s.stuck for s in snaps)


def test_forgotten_zero_grad_on_overlapping_clusters_is_blamed_not_the_learning_rate():
    last = list(train_logistic(LogisticConfig(mean=1.0, zero_grad=False)))[-1]
    assert last.saturated > 0 and "without optimizer.zero_grad() the gradients piled up" in last.message
    assert "Put zero_grad() back" in last.message and "learning rate" not in last.message
    right = list(train_logistic(LogisticConfig(mean=1.0)))[-1]
    assert right.saturated == 0 and not right.message


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_run_that_goes_on_from_another_s_weights_is_that_run_without_momentum(dtype):
    """A fork: the weights after iteration k, and iterations from k + 1. Without momentum (whose velocity a fork
    does not carry over) it is the uninterrupted run, to the last digit; with momentum it is a fresh start there."""
    base = LogisticConfig(momentum=0.0, max_iterations=120, record_every=1, stop_accuracy=1.0, dtype=dtype)
    whole = list(train_logistic(base))
    k = 59
    at = whole[k]
    fork = replace(base, start=(at.w0, at.w1, at.b), first_iteration=k + 1)
    rest = list(train_logistic(fork))
    assert [s.iteration for s in rest] == [s.iteration for s in whole[k + 1:]]
    tol = 1e-6 if dtype == "float32" else 1e-12
    for a, b in zip(rest, whole[k + 1:], strict=True):
        assert (a.loss, a.w0, a.w1, a.b) == pytest.approx((b.loss, b.w0, b.w1, b.b), rel=tol, abs=tol)
    with pytest.raises(ValueError, match="start must be three weights"):
        replace(base, start=(1.0, 2.0))
    with pytest.raises(ValueError, match="first_iteration"):
        replace(base, first_iteration=120)
