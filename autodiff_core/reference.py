"""The tutorials' own loops, verbatim: the references the trainers are tested against (tests/test_trainers.py)
and timed against (bench/). The trainers in ``two_layer.py`` and ``logistic.py`` must compute what these
compute, step for step.

Each loop is a generator, so a caller reads what it wants and nothing is read that the tutorial does not
read: ``tutorial_two_layer`` pauses after each backward, ``tutorial_logistic`` where the tutorial prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch
from torch import nn

from .functions import MyReLU


def tutorial_two_layer(steps: int = 500, relu: Callable = MyReLU.apply
                       ) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The tutorial's two-layer net on CPU, float32, trained by hand. Yields ``(loss, w1, w2)`` after each
    backward, before the update: the grads are in ``w1.grad`` and ``w2.grad``. Read, never write."""
    dtype, device = torch.float, torch.device("cpu")
    generator = torch.Generator(device).manual_seed(42)
    N, D_in, H, D_out = 64, 1000, 100, 10
    x = torch.randn(N, D_in, device=device, dtype=dtype, generator=generator)
    y = torch.randn(N, D_out, device=device, dtype=dtype, generator=generator)
    w1 = torch.randn(D_in, H, device=device, dtype=dtype, requires_grad=True, generator=generator)
    w2 = torch.randn(H, D_out, device=device, dtype=dtype, requires_grad=True, generator=generator)
    learning_rate = 1e-6
    for _ in range(steps):
        y_pred = relu(x.mm(w1)).mm(w2)  # forward: (N, H) then (N, D_out)
        loss = (y_pred - y).pow(2).sum()  # loss
        loss.backward()  # backward
        yield loss, w1, w2
        with torch.no_grad():  # update
            w1 -= learning_rate * w1.grad
            w2 -= learning_rate * w2.grad
            w1.grad.zero_()  # zero grads
            w2.grad.zero_()


class LR(nn.Module):
    """The tutorial's logistic regression: Linear(2, 1), then a sigmoid."""

    def __init__(self):
        super().__init__()
        self.features = nn.Linear(2, 1)
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        return self.sigmoid(self.features(x))


def tutorial_logistic(zero_grad: bool = True, stop_accuracy: float = 0.99
                      ) -> Iterator[tuple[int, float, float, float, float, float]]:
    """The tutorial's loop with ``optimizer.zero_grad()`` added (``zero_grad=False``: as the tutorial forgets
    it). Yields the row the tutorial prints every 20 iterations, ``(iteration, loss, accuracy, w0, w1, b)``,
    and stops once accuracy exceeds ``stop_accuracy``. Seeds the global RNG as the tutorial does, inside
    ``fork_rng``, so the caller's RNG is left as it was."""
    with torch.random.fork_rng():
        torch.manual_seed(10)
        n_data = torch.ones(100, 2)
        x0 = torch.normal(1.7 * n_data, 1) + 1
        y0 = torch.zeros(100)
        x1 = torch.normal(-1.7 * n_data, 1) + 1
        y1 = torch.ones(100)
        train_x, train_y = torch.cat((x0, x1), 0), torch.cat((y0, y1), 0)
        lr_net = LR()
    loss_fn = nn.BCELoss()
    optimizer = torch.optim.SGD(lr_net.parameters(), lr=0.01, momentum=0.9)
    for iteration in range(1000):
        y_pred = lr_net(train_x)
        loss = loss_fn(y_pred.squeeze(), train_y)
        loss.backward()
        optimizer.step()
        if zero_grad:
            optimizer.zero_grad()
        if iteration % 20 == 0:
            mask = y_pred.ge(0.5).float().squeeze()
            acc = (mask == train_y).sum().item() / train_y.size(0)
            w0, w1 = lr_net.features.weight[0]
            yield iteration, loss.item(), acc, float(w0.item()), float(w1.item()), float(lr_net.features.bias[0].item())
            if acc > stop_accuracy:
                break
