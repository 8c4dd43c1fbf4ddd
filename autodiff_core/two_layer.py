"""The tutorial's two-layer net, trained by hand with a custom ReLU, streamed as snapshots.

    y_pred = relu(x @ w1) @ w2        x: (N, D_in)   w1: (D_in, H)   w2: (H, D_out)
    loss   = sum((y_pred - y) ** 2)

The weights are plain tensors updated under ``torch.no_grad()``; their gradients are zeroed by hand.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy
import torch

from .devices import resolve_device, resolve_dtype
from .footprint import Footprint
from .functions import activation_names, get_activation
from .stopping import checkpoint
from .validation import require_choice, require_device_name, require_dtype, require_float, require_int

MAX_ELEMENTS = 100_000_000  # data plus weights; about 400 MB in float32


@dataclass(frozen=True)
class TwoLayerConfig:
    """Everything that decides a run. The defaults are the tutorial's."""

    N: int = 64  # batch size
    D_in: int = 1000  # input dimension
    H: int = 100  # hidden dimension
    D_out: int = 10  # output dimension
    learning_rate: float = 1e-6
    steps: int = 500
    seed: int = 42  # seeds the torch.Generator on the chosen device
    activation: str = "ReLU"  # a registry name (MyReLU by default) or "torch.relu"
    device: str = "cpu"
    dtype: str = "float32"
    record_every: int = 1  # yield a snapshot every this many steps (and always the last)

    def __post_init__(self) -> None:
        for field in ("N", "D_in", "H", "D_out"):
            require_int(field, getattr(self, field), 1, 100_000)
        elements = self.N * self.D_in + self.N * self.D_out + self.D_in * self.H + self.H * self.D_out
        if elements > MAX_ELEMENTS:
            raise ValueError(f"N, D_in, H and D_out together need {elements:,} numbers; the limit is "
                             f"{MAX_ELEMENTS:,}. Make N, D_in or H smaller.")
        require_float("learning_rate", self.learning_rate, 0.0, 1e6, lo_open=True)
        require_int("steps", self.steps, 1, 1_000_000)
        require_int("seed", self.seed, 0, 2**63 - 1)
        require_choice("activation", self.activation, activation_names())
        require_device_name(self.device)
        require_dtype(self.dtype)
        require_int("record_every", self.record_every, 1, 1_000_000)

    def footprint(self) -> Footprint:
        """x, y, w1, w2 and their gradients, the hidden layer and its gradients (4 N·H), the update's
        temporaries, and 10 % on top: within 10 % of the peak RSS measured for sizes from 10 to 130 million
        numbers. A step: 6·N·H·(D_in + D_out) flops for the matrix products, and the elementwise rest."""
        n, d_in, h, d_out = self.N, self.D_in, self.H, self.D_out
        numbers = n * d_in + 6 * n * d_out + 3 * d_in * h + 3 * h * d_out + 4 * n * h
        return Footprint(1.1 * numbers, 6 * n * h * (d_in + d_out) + 10 * (n * h + n * d_out),
                         hint="Make N, D_in or H smaller.", activation_elements=n * h, activation_steps=self.steps)


@dataclass(frozen=True, slots=True)
class TwoLayerSnapshot:
    """The state at one step, before that step's update."""

    step: int
    loss: float
    w1_norm: float
    w2_norm: float
    grad_w1_norm: float
    grad_w2_norm: float
    diverged: bool = False
    message: str = ""


def make_problem(config: TwoLayerConfig) -> tuple[torch.Tensor, ...]:
    """Random data and weights drawn, in the tutorial's order, from one generator on the device."""
    device, dtype = resolve_device(config.device), resolve_dtype(config.dtype)
    g = torch.Generator(device=device).manual_seed(config.seed)
    kw = {"device": device, "dtype": dtype, "generator": g}
    x = torch.randn(config.N, config.D_in, **kw)  # (N, D_in)
    y = torch.randn(config.N, config.D_out, **kw)  # (N, D_out)
    w1 = torch.randn(config.D_in, config.H, requires_grad=True, **kw)  # (D_in, H)
    w2 = torch.randn(config.H, config.D_out, requires_grad=True, **kw)  # (H, D_out)
    return x, y, w1, w2


def train_two_layer(config: TwoLayerConfig) -> Iterator[TwoLayerSnapshot]:
    """Train the tutorial's net and yield a snapshot every ``config.record_every`` steps.

    Nothing leaves the device except on a recorded step, so on a GPU the other steps never wait
    for the host. A non-finite loss ends the stream with a snapshot marked ``diverged``.
    """
    x, y, w1, w2 = make_problem(config)
    relu = get_activation(config.activation)
    lr, last = config.learning_rate, config.steps - 1
    first = None  # step 0's numbers: they size the learning rate to suggest if the run diverges
    read = LossAndNorms(w1, w2)
    for t in range(config.steps):
        checkpoint()  # Stop ends the run here, or between the phases of a long step
        # forward
        y_pred = relu(x.mm(w1)).mm(w2)  # (N, D_out)
        # loss
        loss = (y_pred - y).pow(2).sum()
        checkpoint()
        # backward
        loss.backward()
        checkpoint()
        record = t % config.record_every == 0 or t == last
        if record:
            stats = read(loss)
        # update
        with torch.no_grad():
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
            # zero grads
            w1.grad.zero_()
            w2.grad.zero_()
        if record:
            first = first or stats
            snap = _snapshot(t, stats, lr, first)
            yield snap
            if snap.diverged:
                return


class LossAndNorms:
    """Reads [loss, |w1|, |w2|, |grad w1|, |grad w2|] after a backward, before the update.

    Squared norms as BLAS dot products: a third of the cost of ``Tensor.norm`` here. The flat views are made
    once: the update and the zeroing change the weights and their gradients in place, so each view keeps
    reading its own tensor (a gradient autograd replaces gets a new view). On the CPU the views are NumPy
    arrays over the tensors' memory: ``numpy.vdot`` is the same BLAS call without PyTorch's dispatch, which was
    most of the cost (about 45 µs a step against 15, on the tutorial's sizes). On an accelerator the numbers
    come back in one host sync.
    """

    def __init__(self, w1: torch.Tensor, w2: torch.Tensor) -> None:
        self.weights = (w1, w2)
        self.on_host = w1.device.type == "cpu" and w1.dtype in (torch.float32, torch.float64)
        self.flat = [self._view(w) for w in self.weights] + [None, None]
        self.grads: list[torch.Tensor | None] = [None, None]

    def _view(self, tensor: torch.Tensor):
        flat = tensor.detach().view(-1)
        return flat.numpy() if self.on_host else flat

    def __call__(self, loss: torch.Tensor) -> list[float]:
        w1, w2 = self.weights
        if w1.grad is not self.grads[0] or w2.grad is not self.grads[1]:  # the first step's, or replaced since
            self.grads = [w1.grad, w2.grad]
            self.flat[2:] = [self._view(g) for g in self.grads]
        if self.on_host:  # vdot: the same BLAS call as dot, and no warning for a diverging run's inf (its data),
            # so no numpy.errstate around it (a context manager each step, 0.8 µs)
            a, b, c, d = self.flat
            vdot, sqrt = numpy.vdot, math.sqrt
            return [loss.item(), sqrt(vdot(a, a)), sqrt(vdot(b, b)), sqrt(vdot(c, c)), sqrt(vdot(d, d))]
        squares = torch.stack([loss.detach(), *(torch.dot(v, v) for v in self.flat)]).tolist()
        return [squares[0], *(math.sqrt(s) for s in squares[1:])]


def _snapshot(step: int, stats: list[float], lr: float, first: list[float]) -> TwoLayerSnapshot:
    if all(map(math.isfinite, stats)):
        return TwoLayerSnapshot(step, *stats)
    loss = stats[0]
    what = (f"the loss grew to {loss:.3g} and the gradients overflowed" if math.isfinite(loss)
            else f"the loss became {loss}")
    return TwoLayerSnapshot(
        step, *stats, diverged=True,
        message=f"Training diverged at step {step}: {what}. The learning rate {lr:g} is too large; "
                f"try {suggest_learning_rate(first, lr):g}.",
    )


def suggest_learning_rate(first: list[float], lr: float) -> float:
    """A learning rate that moves each weight matrix by about a tenth of its size in the first step.

    ``first`` is step 0's [loss, |w1|, |w2|, |grad w1|, |grad w2|]. Plain gradient descent is stable
    when ``lr * |grad|`` stays well below ``|w|``; the answer is rounded down to 1, 2 or 5 times a
    power of ten, and is always at most a tenth of ``lr``.
    """
    ratios = [w / g for w, g in zip(first[1:3], first[3:5], strict=True) if g > 0 and math.isfinite(w / g)]
    safe = min([0.1 * r for r in ratios] + [lr / 10])
    p = 10 ** math.floor(math.log10(safe))
    return next(m * p for m in (5, 2, 1) if m * p <= safe * (1 + 1e-9))
