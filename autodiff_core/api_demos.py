"""What lesson 8 shows of each part of the ``autograd.Function`` API, computed: each part's Function run on the
student's numbers beside PyTorch's own op, and the errors autograd raises when a Function is used in a way it
does not support, caught and kept as text (never a traceback). The Functions are ``function_api.py``'s.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.autograd.forward_ad as fwAD
from torch.autograd import gradcheck, gradgradcheck
from torch.utils._python_dispatch import TorchDispatchMode

from .function_api import (
    MyMatMul,
    MyMatMulEveryGrad,
    MyReLUInPlace,
    MyReLUInPlaceUnmarked,
    MySigmoidJvp,
    MySinh,
    MySinhOnce,
    MySinhSavedExp,
    MySort,
    MyTanhModern,
)
from .functions import MySigmoid, MyTanh

MAX_ERROR = 700  # characters of an error's message kept
PARTS = {"double_backward": "Double backward", "forward_mode": "Forward mode", "in_place": "In place",
         "non_differentiable": "Non-differentiable outputs", "needs_input_grad": "needs_input_grad, timed",
         "torch_func": "torch.func transforms"}  # the lesson's parts: key -> title


def error_text(exc: BaseException) -> str:
    """An error as PyTorch words it: "RuntimeError: ..." (its first paragraph, on one line)."""
    text = " ".join(str(exc).split("\n\n")[0].split())
    return f"{type(exc).__name__}: {text}"[:MAX_ERROR]


def raised(run: Callable[[], object]) -> str:
    """What ``run()`` raised, in PyTorch's words (``error_text``); "" if it raised nothing."""
    try:
        run()
    except Exception as exc:  # the point: show what autograd says
        return error_text(exc)
    return ""


def values(t: torch.Tensor) -> list[float]:
    return [float(v) for v in t.detach().reshape(-1)]


def checks(apply, x: torch.Tensor, **kw) -> bool:
    """gradcheck's verdict, without its exception."""
    return bool(gradcheck(apply, (x.detach().clone().requires_grad_(),), raise_exception=False, **kw))


# ---- Double backward ----


def hvp(f, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """H·v for the loss ½·Σ f(x)², by double backward. Its grad_output into f's backward is f(x) itself, a
    tensor that needs a gradient, so the first backward's result depends on x through f's backward."""
    x = x.detach().requires_grad_()
    y = f(x)
    loss = (y * y).sum() / 2
    (g,) = torch.autograd.grad(loss, x, create_graph=True)  # backward 1, recorded as a graph of its own
    g.backward(v)  # backward 2, through that graph: x.grad = H·v
    return x.grad


def derivatives(f, x: torch.Tensor) -> tuple[list[float], list[float], list[float]]:
    """f(x), f'(x) from one backward, and f''(x) from a backward through that backward (element-wise f)."""
    x = x.detach().requires_grad_()
    y = f(x)
    (dy,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    (d2y,) = torch.autograd.grad(dy.sum(), x)
    return values(y), values(dy), values(d2y)


@dataclass(frozen=True)
class DoubleBackward:
    x: list[float]
    v: list[float]
    gradcheck: bool  # MySinh
    gradgradcheck: bool
    saved_exp_gradcheck: bool  # MySinhSavedExp
    saved_exp_gradgradcheck: bool
    hvp: list[float]  # MySinh's H·v
    saved_exp_hvp: list[float]
    torch_hvp: list[float]  # torch.sinh's
    once_error: str  # MySinhOnce, asked for H·v
    grid: list[float]
    curves: dict[str, list[float]]  # sinh, its first and second derivatives: MySinh's and torch's


def double_backward(x: torch.Tensor, v: torch.Tensor) -> DoubleBackward:
    x, v = x.double(), v.double()
    grid = torch.linspace(-2.5, 2.5, 101, dtype=torch.float64)
    ours, reference = derivatives(MySinh.apply, grid), derivatives(torch.sinh, grid)
    return DoubleBackward(
        values(x), values(v), checks(MySinh.apply, x),
        bool(gradgradcheck(MySinh.apply, (x.clone().requires_grad_(),), raise_exception=False)),
        checks(MySinhSavedExp.apply, x),
        bool(gradgradcheck(MySinhSavedExp.apply, (x.clone().requires_grad_(),), raise_exception=False)),
        values(hvp(MySinh.apply, x, v)), values(hvp(MySinhSavedExp.apply, x, v)), values(hvp(torch.sinh, x, v)),
        raised(lambda: hvp(MySinhOnce.apply, x, v)), values(grid),
        {"sinh(x)": ours[0], "MySinh: backward": ours[1], "torch.sinh: backward": reference[1],
         "MySinh: double backward": ours[2], "torch.sinh: double backward": reference[2]})


# ---- Forward mode ----


def dual_tangent(f, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """The output's tangent by ``torch.autograd.forward_ad``: x carries t along as a dual number."""
    with fwAD.dual_level():
        out = f(fwAD.make_dual(x, t))
        return fwAD.unpack_dual(out).tangent


@dataclass(frozen=True)
class ForwardMode:
    x: list[float]
    tangent: list[float]
    dual: list[float]  # MySigmoidJvp through forward_ad
    func_jvp: list[float]  # MySigmoidJvp through torch.func.jvp
    torch_jvp: list[float]  # torch.sigmoid through torch.func.jvp
    gradcheck_forward: bool  # gradcheck(..., check_forward_ad=True)
    classic_dual_error: str  # lesson 1's MySigmoid: classic form, no jvp
    classic_func_error: str


def forward_mode(x: torch.Tensor, t: torch.Tensor) -> ForwardMode:
    x, t = x.double(), t.double()
    return ForwardMode(
        values(x), values(t), values(dual_tangent(MySigmoidJvp.apply, x, t)),
        values(torch.func.jvp(MySigmoidJvp.apply, (x,), (t,))[1]), values(torch.func.jvp(torch.sigmoid, (x,), (t,))[1]),
        checks(MySigmoidJvp.apply, x, check_forward_ad=True),
        raised(lambda: dual_tangent(MySigmoid.apply, x, t)),
        raised(lambda: torch.func.jvp(MySigmoid.apply, (x,), (t,))))


# ---- In place ----


def chain_grad(relu_, x: torch.Tensor) -> torch.Tensor:
    """The gradient of Σ 2·relu(x) when another in-place op follows the ReLU: y = relu_(h); y.mul_(2).
    (``torch.relu_`` itself refuses this: it saves its output for backward, and mul_ changes it.)"""
    a = x.detach().clone().requires_grad_()
    y = relu_(a * 1)  # a * 1: an in-place op may not change a leaf that needs a gradient
    y.mul_(2)
    (g,) = torch.autograd.grad(y.sum(), a)
    return g


def out_of_place_grad(x: torch.Tensor, scale: float) -> torch.Tensor:
    """The gradient of Σ scale·relu(x) by PyTorch's out-of-place op: what either in-place chain must give."""
    a = x.detach().clone().requires_grad_()
    (g,) = torch.autograd.grad((scale * torch.relu(a)).sum(), a)
    return g


def later_grad(relu_, x: torch.Tensor) -> torch.Tensor:
    """The gradient of Σ 3·h where h went through relu_ before: the input tensor, used after the call."""
    a = x.detach().clone().requires_grad_()
    h = a * 1
    relu_(h)
    (g,) = torch.autograd.grad((3 * h).sum(), a)
    return g


@dataclass(frozen=True)
class InPlace:
    x: list[float]
    output: list[float]
    same_tensor: bool  # forward returned its input itself
    chain: list[float]  # MyReLUInPlace
    torch_chain: list[float]  # 2 * torch.relu, out of place
    unmarked_chain_error: str  # MyReLUInPlaceUnmarked
    later: list[float]
    torch_later: list[float]
    unmarked_later: list[float]
    gradcheck: bool


def in_place(x: torch.Tensor) -> InPlace:
    x = x.double()
    h = x.clone().requires_grad_() * 1
    out = MyReLUInPlace.apply(h)
    return InPlace(
        values(x), values(out), out is h, values(chain_grad(MyReLUInPlace.apply, x)),
        values(out_of_place_grad(x, 2.0)), raised(lambda: chain_grad(MyReLUInPlaceUnmarked.apply, x)),
        values(later_grad(MyReLUInPlace.apply, x)), values(later_grad(torch.relu_, x)),
        values(later_grad(MyReLUInPlaceUnmarked.apply, x)), checks(lambda a: MyReLUInPlace.apply(a.clone()), x))


# ---- Non-differentiable outputs ----


def received(x: torch.Tensor, materialize: bool) -> tuple[str, str]:
    """What MySort's backward receives, with materialized grads on or off, when only the values are used."""
    seen = []

    class Spy(MySort):
        @staticmethod
        def forward(ctx, input):
            out = MySort.forward(ctx, input)
            ctx.set_materialize_grads(materialize)
            return out

        @staticmethod
        def backward(ctx, grad_values, grad_indices):
            seen.append((grad_values, grad_indices))
            return MySort.backward(ctx, grad_values, grad_indices)

    a = x.detach().clone().requires_grad_()
    v, _ = Spy.apply(a)
    v.sum().backward()
    return tuple(_describe(g) for g in seen[0])


def _describe(g) -> str:
    if g is None:
        return "None"
    kind = str(g.dtype).removeprefix("torch.")
    return f"{kind} zeros, shape {tuple(g.shape)}" if not g.any() else f"{kind} {values(g)}"


def ranked_grad(sort, x: torch.Tensor) -> torch.Tensor:
    """The gradient of Σ (k+1)·values[k]: the k-th smallest value weighs k+1."""
    a = x.detach().clone().requires_grad_()
    v = sort(a)[0]
    (g,) = torch.autograd.grad((v * torch.arange(1, len(v) + 1, dtype=v.dtype)).sum(), a)
    return g


@dataclass(frozen=True)
class NonDifferentiable:
    x: list[float]
    values: list[float]
    indices: list[int]
    torch_values: list[float]
    torch_indices: list[int]
    values_need_grad: bool
    indices_need_grad: bool
    materialized: tuple[str, str]  # what backward received: grad_values, grad_indices
    not_materialized: tuple[str, str]
    grad: list[float]
    torch_grad: list[float]
    gradcheck: bool


def non_differentiable(x: torch.Tensor) -> NonDifferentiable:
    x = x.double()
    v, i = MySort.apply(x.clone().requires_grad_())
    tv, ti = torch.sort(x)
    return NonDifferentiable(
        values(x), values(v), i.tolist(), values(tv), ti.tolist(), v.requires_grad, i.requires_grad,
        received(x, True), received(x, False), values(ranked_grad(MySort.apply, x)),
        values(ranked_grad(torch.sort, x)), checks(lambda a: MySort.apply(a)[0], x))


# ---- needs_input_grad, timed ----


@dataclass(frozen=True)
class TimingConfig:
    """y = x @ W with data x (N, K), which needs no gradient, and a weight W (K, M), which does."""

    n: int = 256
    k: int = 512
    m: int = 512
    repeats: int = 15  # backwards timed of each Function, alternating


@dataclass(frozen=True)
class Timing:
    config: TimingConfig
    skipping: tuple[float, ...]  # seconds of each backward of MyMatMul
    every: tuple[float, ...]  # of MyMatMulEveryGrad
    products: tuple[int, int]  # matrix products in one backward of each
    threads: int

    @property
    def ratio(self) -> float:
        """Median time of a backward that skips grad_x over one that computes it."""
        return statistics.median(self.skipping) / statistics.median(self.every)


class _Products(TorchDispatchMode):
    """Counts the matrix products run inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += func.overloadpacket in (torch.ops.aten.mm, torch.ops.aten.matmul)
        return func(*args, **(kwargs or {}))


def backward_seconds(fn, x: torch.Tensor, w: torch.Tensor) -> float:
    y = fn.apply(x, w)
    g = torch.ones_like(y)
    t0 = time.perf_counter()
    torch.autograd.grad(y, w, g)
    return time.perf_counter() - t0


def time_needs_input_grad(config: TimingConfig = TimingConfig()) -> Timing:
    """Backward of MyMatMul against MyMatMulEveryGrad on the same tensors, alternating, after a warm-up."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(config.n, config.k, generator=gen)
    w = torch.randn(config.k, config.m, generator=gen).requires_grad_()
    products = []
    for fn in (MyMatMul, MyMatMulEveryGrad):
        backward_seconds(fn, x, w)  # warm-up
        with _Products() as counted:
            y = fn.apply(x, w)
            torch.autograd.grad(y, w, torch.ones_like(y))
        products.append(counted.count - 1)  # the forward's own product is not backward's
    skipping, every = [], []
    for _ in range(config.repeats):
        skipping.append(backward_seconds(MyMatMul, x, w))
        every.append(backward_seconds(MyMatMulEveryGrad, x, w))
    return Timing(config, tuple(skipping), tuple(every), (products[0], products[1]), torch.get_num_threads())


# ---- torch.func ----


@dataclass(frozen=True)
class TorchFunc:
    batch: list[list[float]]
    vmapped: list[list[float]]  # torch.func.vmap(MyTanhModern.apply)(batch)
    looped: list[list[float]]  # MyTanhModern.apply on each row, one at a time
    torch_out: list[list[float]]
    grads: list[list[float]]  # vmap(grad(Σ MyTanhModern)): one gradient per row
    looped_grads: list[list[float]]  # torch.autograd.grad row by row
    torch_grads: list[list[float]]
    gradcheck: bool
    classic_error: str  # lesson 1's MyTanh (classic form) under vmap
    no_rule_error: str  # the modern form without generate_vmap_rule


def rows(t: torch.Tensor) -> list[list[float]]:
    return [values(r) for r in t]


def looped_grads(f, batch: torch.Tensor) -> torch.Tensor:
    out = []
    for row in batch:
        r = row.clone().requires_grad_()
        (g,) = torch.autograd.grad(f(r).sum(), r)
        out.append(g)
    return torch.stack(out)


def torch_func(x: torch.Tensor) -> TorchFunc:
    x = x.double()
    batch = torch.stack([x, x / 2, -x])  # (3, n): three samples
    per_row = torch.func.vmap(torch.func.grad(lambda r: MyTanhModern.apply(r).sum()))
    no_rule = type("MyTanhNoRule", (MyTanhModern,), {"generate_vmap_rule": False})
    return TorchFunc(
        rows(batch), rows(torch.func.vmap(MyTanhModern.apply)(batch)),
        rows(torch.stack([MyTanhModern.apply(r) for r in batch])), rows(torch.tanh(batch)), rows(per_row(batch)),
        rows(looped_grads(MyTanhModern.apply, batch)), rows(looped_grads(torch.tanh, batch)),
        checks(MyTanhModern.apply, x), raised(lambda: torch.func.vmap(MyTanh.apply)(batch)),
        raised(lambda: torch.func.vmap(no_rule.apply)(batch)))
