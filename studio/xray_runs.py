"""Lesson 4's three comparison runs, computed once per config and process, and ready before anyone asks.

Each takes a few tenths of a second (two logistic runs of 1,000 iterations, two two-layer runs of 200 steps);
together they made lesson 4's first visit the slowest page of all, and each is what opening its tab waits for now
that the page draws only its open tab. They depend on the config alone, so a
process keeps the last few (``functools.lru_cache``: the snapshots are frozen, shared read-only), and the
server computes the ones the page's defaults ask for in the background after the first page (``warm``). One
computes at a time: a page that asks for a run the warm-up is computing waits for it, rather than computing
it again beside it.
"""

from __future__ import annotations

import functools
import threading

from autodiff_core import LogisticConfig, TwoLayerConfig, gradcheck_report, resolve_dtype
from autodiff_core.compare import custom_vs_builtin, manual_vs_optim_sgd, zero_grad_comparison
from autodiff_core.figures.xray import jacobian_figure, relu_compare_figure, sgd_figure, zero_grad_figure
from autodiff_core.inspector import trace_function
from autodiff_core.logistic import logistic_data

from .charts import panel_specs

KEEP = 8  # configs kept per comparison
SGD_STEPS = 200
RELU_STEPS = 200
ZG_MEANS = (1.0, 1.7)  # the cluster means lesson 4's zero_grad() tab offers (studio.lessons.ZG_DATA)


_waiting = [0]  # page runs waiting for a result another thread is computing
_waiting_lock = threading.Lock()


def someone_waits() -> bool:
    """Whether a page waits for a run the warm-up is computing: then the warm-up must not give way to pages."""
    return _waiting[0] > 0


def _kept(compute):
    """``compute(config)``, kept for the last ``KEEP`` configs, computed one at a time."""
    cached = functools.lru_cache(maxsize=KEEP)(compute)
    lock = threading.Lock()

    @functools.wraps(compute)
    def call(config):
        if not lock.acquire(blocking=False):
            with _waiting_lock:
                _waiting[0] += 1
            try:
                lock.acquire()
            finally:
                with _waiting_lock:
                    _waiting[0] -= 1
        try:
            return cached(config)
        finally:
            lock.release()

    call.cache_info, call.cache_clear = cached.cache_info, cached.cache_clear
    return call


@_kept
def zero_grad_runs(config: LogisticConfig):
    """The run with ``zero_grad()`` and the run without it (``compare.zero_grad_comparison``)."""
    return zero_grad_comparison(config)


@_kept
def sgd_steps(config: LogisticConfig):
    """The same run updated by hand and by ``torch.optim.SGD`` (``compare.manual_vs_optim_sgd``)."""
    return manual_vs_optim_sgd(config, SGD_STEPS)


@_kept
def relu_steps(config: TwoLayerConfig):
    """The two-layer net with MyReLU and with torch.relu from the same start (``compare.custom_vs_builtin``)."""
    return custom_vs_builtin(config)


@_kept
def zero_grad_panels(config: LogisticConfig) -> tuple[dict, ...]:
    """The zero_grad() tab's panels for ``config``, as specs (``charts.panel_specs``): building and styling them
    cost more than drawing them, at every visit."""
    right, forgot = zero_grad_runs(config)
    return panel_specs(zero_grad_figure(right, forgot, *(t.numpy() for t in logistic_data(config))))


@_kept
def sgd_panels(config: LogisticConfig) -> tuple[dict, ...]:
    return panel_specs(sgd_figure(sgd_steps(config)))


@_kept
def relu_panels(config: TwoLayerConfig) -> tuple[dict, ...]:
    return panel_specs(relu_compare_figure(relu_steps(config)))


@functools.lru_cache(maxsize=4 * KEEP)
def gradcheck_lab(name: str, points: tuple[float, ...], float64: bool):
    """The Gradcheck lab at a built-in Function, points and dtype: its report and its panels' specs."""
    import torch

    report = gradcheck_report(name, torch.tensor(points, dtype=torch.float64 if float64 else torch.float32),
                              gradgrad=True)
    return report, panel_specs(jacobian_figure(report))


@functools.lru_cache(maxsize=4)
def ctx_traces(dtype: str) -> dict:
    """The ctx inspector's two traces of MyReLU (classic and modern form) on its fixed input, in ``dtype``."""
    import torch

    x = torch.tensor([-1.0, 0.5, 2.0, -0.25], dtype=resolve_dtype(dtype))
    g = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=resolve_dtype(dtype))
    forms = (("classic forward(ctx, input)", "ReLU"), ("modern forward + setup_context", "ReLU (modern form)"))
    return {label: trace_function(name, x, g) for label, name in forms}


def zero_grad_config(mean: float, device: str, dtype: str) -> LogisticConfig:
    return LogisticConfig(mean=mean, record_every=1, device=device, dtype=dtype)


def sgd_config(device: str, dtype: str) -> LogisticConfig:
    return LogisticConfig(device=device, dtype=dtype)


def relu_config(device: str, dtype: str) -> TwoLayerConfig:
    return TwoLayerConfig(device=device, dtype=dtype, steps=RELU_STEPS)


def warm(device: str = "cpu", dtype: str = "float32", before_each=lambda: None) -> None:
    """Compute what lesson 4 shows at the sidebar's defaults (both of the zero_grad() tab's data sets), runs and
    panels, calling ``before_each()`` before each of the four (the server waits there for a quiet moment)."""
    for compute, config in ((zero_grad_panels, zero_grad_config(ZG_MEANS[0], device, dtype)),
                            (relu_panels, relu_config(device, dtype)), (sgd_panels, sgd_config(device, dtype)),
                            (zero_grad_panels, zero_grad_config(ZG_MEANS[1], device, dtype))):
        before_each()
        compute(config)
    from .inputs import parse_vector
    from .lessons import setting

    before_each()
    ctx_traces(dtype)
    points, _ = parse_vector(setting("xr_points").default, name="the points")
    gradcheck_lab(setting("xr_fn").default, tuple(points), setting("xr_float64").default)
