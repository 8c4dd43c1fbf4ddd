"""Side-by-side runs that make autograd's bookkeeping visible: the same start, one thing changed."""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import nn

from .functions import MyReLU
from .logistic import LogisticConfig, LogisticSnapshot, make_data_and_model, train_logistic
from .stopping import checkpoint
from .two_layer import TwoLayerConfig, make_problem


def zero_grad_comparison(config: LogisticConfig) -> tuple[list[LogisticSnapshot], list[LogisticSnapshot]]:
    """The same logistic run with and without ``optimizer.zero_grad()`` (same data, same start)."""
    return (list(train_logistic(replace(config, zero_grad=True))),
            list(train_logistic(replace(config, zero_grad=False))))


@dataclass(frozen=True, slots=True)
class SGDStep:
    iteration: int
    manual: tuple[float, float, float]  # w0, w1, b after a hand-written momentum update
    optim: tuple[float, float, float]  # w0, w1, b after torch.optim.SGD.step()
    manual_buffer: tuple[float, ...]  # the hand-kept momentum buffer (the gradient when momentum == 0)
    optim_buffer: tuple[float, ...]  # optimizer.state[p]["momentum_buffer"]; empty when momentum == 0


def manual_vs_optim_sgd(config: LogisticConfig, iterations: int = 200) -> list[SGDStep]:
    """Train two copies of the logistic model from one start: one by hand, one with torch.optim.SGD.

    By hand, momentum SGD is: ``buf = g`` on the first step, then ``buf = momentum * buf + g``, and
    ``w -= lr * buf``, all under ``torch.no_grad()``. Written as ``w.add_(buf, alpha=-lr)`` it rounds once,
    as the optimizer does, and the two runs agree bit for bit.
    """
    x, y, model_a = make_data_and_model(config)
    _, _, model_b = make_data_and_model(config)
    loss_fn = nn.BCELoss()
    opt = torch.optim.SGD(model_b.parameters(), lr=config.learning_rate, momentum=config.momentum)
    params_a = [model_a.features.weight, model_a.features.bias]
    params_b = [model_b.features.weight, model_b.features.bias]
    buffers: list[torch.Tensor | None] = [None, None]
    steps = []
    for it in range(iterations):
        checkpoint()
        loss_fn(model_a(x).squeeze(), y).backward()
        with torch.no_grad():
            for i, p in enumerate(params_a):
                buffers[i] = p.grad.clone() if buffers[i] is None else buffers[i].mul_(config.momentum).add_(p.grad)
                p.add_(buffers[i], alpha=-config.learning_rate)  # w -= lr * buf, rounded once
                p.grad.zero_()
        loss_fn(model_b(x).squeeze(), y).backward()
        opt.step()
        opt.zero_grad()
        optim_buffers = [opt.state[p].get("momentum_buffer") for p in params_b]  # None when momentum == 0
        steps.append(SGDStep(it, _flat(params_a), _flat(params_b), _flat(buffers), _flat(optim_buffers)))
    return steps


def _flat(tensors) -> tuple[float, ...]:
    """All values of the tensors in one tuple; empty when there are none (no momentum buffer)."""
    if any(t is None for t in tensors):
        return ()
    return tuple(torch.cat([t.detach().reshape(-1) for t in tensors]).tolist())


@dataclass(frozen=True, slots=True)
class ReluStep:
    step: int
    loss_custom: float
    loss_builtin: float
    max_grad_diff: float  # largest |grad| difference over w1 and w2 at this step
    exact_zeros: int  # pre-activations exactly 0.0 in the MyReLU run at this step


def custom_vs_builtin(config: TwoLayerConfig) -> list[ReluStep]:
    """Train the two-layer net twice from one start, with MyReLU and with torch.relu, in lockstep.

    The two backwards differ only where a pre-activation is exactly 0: MyReLU zeroes the gradient
    where input < 0, so it lets it through at 0; torch.relu's gradient at 0 is 0.
    """
    runs = [make_problem(config), make_problem(config)]
    relus = [MyReLU.apply, torch.relu]
    out = []
    for t in range(config.steps):
        checkpoint()
        losses, grads, zeros = [], [], 0
        for i, ((x, y, w1, w2), relu) in enumerate(zip(runs, relus, strict=True)):
            h = x.mm(w1)  # (N, H)
            loss = (relu(h).mm(w2) - y).pow(2).sum()
            loss.backward()
            if i == 0:  # the MyReLU run
                zeros = int((h.detach() == 0).sum())
            losses.append(loss.item())
            grads.append((w1.grad.clone(), w2.grad.clone()))
            with torch.no_grad():
                w1 -= config.learning_rate * w1.grad
                w2 -= config.learning_rate * w2.grad
                w1.grad.zero_()
                w2.grad.zero_()
        diff = max(float((a - b).abs().max()) for a, b in zip(*grads, strict=True))
        out.append(ReluStep(t, losses[0], losses[1], diff, zeros))
    return out
