"""Both trainers against the tutorial's own loops (autodiff_core/reference.py, the tutorial verbatim)."""

import subprocess
import sys
import threading
import warnings

import pytest
import torch

from autodiff_core import (
    DeviceUnavailableError,
    LogisticConfig,
    TwoLayerConfig,
    available_devices,
    resolve_device,
    resolve_dtype,
    train_logistic,
    train_two_layer,
)
from autodiff_core.functions import MyReLU
from autodiff_core.logistic import boundary_y, logistic_data, make_data_and_model
from autodiff_core.reference import tutorial_logistic, tutorial_two_layer


def tutorial_two_layer_losses(steps=500, relu=MyReLU.apply):
    """The tutorial's loop (``autodiff_core.reference``), on CPU, float32: its loss at every step."""
    return [loss.item() for loss, _, _ in tutorial_two_layer(steps, relu)]


def test_two_layer_losses_equal_the_tutorial_step_for_step():
    snaps = list(train_two_layer(TwoLayerConfig()))
    assert [s.step for s in snaps] == list(range(500))
    assert [s.loss for s in snaps] == tutorial_two_layer_losses()


def test_two_layer_with_torch_relu_agrees_to_1e6_in_float64():
    custom = [s.loss for s in train_two_layer(TwoLayerConfig(dtype="float64"))]
    builtin = [s.loss for s in train_two_layer(TwoLayerConfig(dtype="float64", activation="torch.relu"))]
    for a, b in zip(custom, builtin, strict=True):
        assert abs(a - b) <= 1e-6 * abs(b)


class ReLUZeroAtZero(torch.autograd.Function):
    """MyReLU with torch.relu's convention at exactly 0: no gradient there (mask input <= 0)."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input <= 0] = 0
        return grad_input


def test_float32_differs_from_torch_relu_only_through_an_exact_zero():
    """In float32 one pre-activation is exactly 0.0 at some step. MyReLU (mask ``input < 0``) lets the
    gradient through there; torch.relu does not. Before that step the runs are identical, and a MyReLU
    that masks ``input <= 0`` is identical to torch.relu at every step."""
    custom = [s.loss for s in train_two_layer(TwoLayerConfig())]
    builtin = [s.loss for s in train_two_layer(TwoLayerConfig(activation="torch.relu"))]
    assert tutorial_two_layer_losses(relu=ReLUZeroAtZero.apply) == builtin
    first = next(i for i, (a, b) in enumerate(zip(custom, builtin, strict=True)) if a != b)
    assert first > 10 and custom[:first] == builtin[:first]


def test_two_layer_norms_match_a_direct_computation():
    first = next(train_two_layer(TwoLayerConfig()))
    _, w1, w2 = next(tutorial_two_layer(relu=torch.relu))  # after the first backward, before the update
    assert first.w1_norm == pytest.approx(w1.norm().item())
    assert first.grad_w2_norm == pytest.approx(w2.grad.norm().item())


def test_record_every_thins_the_stream_and_keeps_the_last_step():
    snaps = list(train_two_layer(TwoLayerConfig(steps=50, record_every=20)))
    assert [s.step for s in snaps] == [0, 20, 40, 49]


def test_float64_trains_too():
    snaps = list(train_two_layer(TwoLayerConfig(steps=20, dtype="float64")))
    assert snaps[-1].loss < snaps[0].loss


def test_logistic_stops_where_the_tutorial_stops():
    expected = list(tutorial_logistic())
    snaps = list(train_logistic(LogisticConfig()))
    got = [(s.iteration, s.loss, s.accuracy, s.w0, s.w1, s.b) for s in snaps]
    assert got == expected
    assert snaps[-1].stopped and snaps[-1].accuracy > 0.99
    assert not any(s.stopped for s in snaps[:-1])


def test_forgotten_zero_grad_reproduces_the_tutorial_and_grows_the_weights():
    expected = list(tutorial_logistic(zero_grad=False))
    forgot = list(train_logistic(LogisticConfig(zero_grad=False)))
    assert [(s.iteration, s.loss, s.w0, s.w1, s.b) for s in forgot] == [(r[0], r[1], r[3], r[4], r[5])
                                                                         for r in expected]
    right = list(train_logistic(LogisticConfig()))
    assert abs(forgot[-1].w0) > 5 * abs(right[-1].w0)


def test_boundary_passes_through_half_probability():
    snap = list(train_logistic(LogisticConfig()))[-1]
    xs = [-3.0, 0.0, 4.0]
    for x, y in zip(xs, boundary_y(snap.w0, snap.w1, snap.b, xs), strict=True):
        assert snap.w0 * x + snap.w1 * y + snap.b == pytest.approx(0.0, abs=1e-9)
    assert boundary_y(1.0, 0.0, 1.0, xs) is None


def test_runs_in_threads_at_once_are_decided_by_their_config_alone():
    reference_two = [s.loss for s in train_two_layer(TwoLayerConfig(steps=60))]
    reference_log = list(train_logistic(LogisticConfig()))
    results, stop = {}, threading.Event()

    def disturb():  # another student's code playing with the global RNG
        while not stop.is_set():
            torch.manual_seed(int(torch.randint(0, 1000, (1,))))
            torch.rand(100)

    def two(i):
        results[f"two{i}"] = [s.loss for s in train_two_layer(TwoLayerConfig(steps=60))]

    def log(i):
        results[f"log{i}"] = list(train_logistic(LogisticConfig()))

    noise = threading.Thread(target=disturb)
    noise.start()
    threads = [threading.Thread(target=f, args=(i,)) for i in range(2) for f in (two, log)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    noise.join()
    assert results["two0"] == results["two1"] == reference_two
    assert results["log0"] == results["log1"] == reference_log


def test_the_engine_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    before = torch.get_rng_state()
    list(train_logistic(LogisticConfig(max_iterations=30)))
    list(train_two_layer(TwoLayerConfig(steps=3)))
    assert torch.equal(before, torch.get_rng_state())


def test_divergence_ends_the_stream_with_a_clear_message():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a diverging run's inf and nan are its data, not a warning on the console
        snaps = list(train_two_layer(TwoLayerConfig(learning_rate=1e-3)))
    last = snaps[-1]
    assert last.diverged and all(not s.diverged for s in snaps[:-1])
    assert f"step {last.step}" in last.message and "learning rate" in last.message
    assert len(snaps) < 500


def test_logistic_nan_probabilities_end_the_run_with_a_message(monkeypatch):
    # Logistic regression's gradient is bounded, so within the allowed ranges it cannot overflow;
    # make the model emit NaN from iteration 5 on to exercise the path a blow-up would take.
    from autodiff_core import logistic

    calls = {"n": 0}
    real_forward = logistic.LogisticRegression.forward

    def forward(self, x):
        calls["n"] += 1
        out = real_forward(self, x)
        return out * float("nan") if calls["n"] > 5 else out

    monkeypatch.setattr(logistic.LogisticRegression, "forward", forward)
    snaps = list(train_logistic(LogisticConfig(record_every=1)))
    assert [s.iteration for s in snaps] == [0, 1, 2, 3, 4, 5]
    assert snaps[-1].diverged and "iteration 5" in snaps[-1].message
    assert all(not s.diverged for s in snaps[:-1])


def test_logistic_at_the_largest_learning_rate_stays_finite():
    snaps = list(train_logistic(LogisticConfig(learning_rate=1e6, max_iterations=200)))
    assert not snaps[-1].diverged and all(abs(s.w0) < float("inf") for s in snaps)


def test_closing_the_generator_stops_the_run_at_once():
    stream = train_two_layer(TwoLayerConfig(steps=1_000_000))
    first = next(stream)
    stream.close()
    assert first.step == 0
    with pytest.raises(StopIteration):
        next(stream)


@pytest.mark.parametrize(("config", "kwargs", "field"), [
    (TwoLayerConfig, {"N": 0}, "N must be an integer from 1"),
    (TwoLayerConfig, {"H": -5}, "H must be an integer"),
    (TwoLayerConfig, {"D_in": 100_000, "H": 100_000}, "the limit is"),
    (TwoLayerConfig, {"learning_rate": 0}, r"learning_rate must be a number in \(0"),
    (TwoLayerConfig, {"learning_rate": float("nan")}, "learning_rate"),
    (TwoLayerConfig, {"steps": 0}, "steps"),
    (TwoLayerConfig, {"activation": "relu6"}, "activation must be one of"),
    (TwoLayerConfig, {"dtype": "float16"}, "dtype must be one of"),
    (TwoLayerConfig, {"N": 2.5}, "N must be an integer"),
    (LogisticConfig, {"momentum": 1.0}, r"momentum must be a number in \[0, 1\)"),
    (LogisticConfig, {"momentum": -0.1}, "momentum"),
    (LogisticConfig, {"learning_rate": -1}, "learning_rate"),
    (LogisticConfig, {"n_per_class": 0}, "n_per_class"),
    (LogisticConfig, {"spread": 0}, "spread"),
    (LogisticConfig, {"stop_accuracy": 1.5}, "stop_accuracy"),
    (LogisticConfig, {"record_every": 0}, "record_every"),
    (LogisticConfig, {"zero_grad": "yes"}, "zero_grad"),
    (LogisticConfig, {"device": ""}, "device must be"),
])
def test_bad_configs_raise_before_any_tensor(config, kwargs, field):
    with pytest.raises(ValueError, match=field):
        config(**kwargs)


def test_devices_are_listed_and_resolved():
    devices = available_devices()
    assert devices[0].id == "cpu" and devices[0].label == "CPU"
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_dtype("float64") is torch.float64
    if torch.cuda.is_available():
        assert any(d.id == "cuda:0" for d in devices)


def test_a_missing_device_names_the_ones_that_exist():
    with pytest.raises(DeviceUnavailableError, match="Available: cpu"):
        resolve_device("cuda:7")
    with pytest.raises(DeviceUnavailableError, match="'tpu'"):
        list(train_two_layer(TwoLayerConfig(device="tpu")))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_two_layer_matches_cpu_closely():
    gpu = [s.loss for s in train_two_layer(TwoLayerConfig(device="cuda", steps=50, dtype="float64"))]
    assert gpu[-1] < gpu[0]


def test_engine_imports_no_ui_library():
    code = ("import sys, autodiff_core; "
            "bad = [m for m in ('streamlit', 'plotly') if m in sys.modules]; print(bad); assert not bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_logistic_data_are_the_points_the_trainer_uses():
    config = LogisticConfig(dtype="float64", mean=2.0)
    x, y = logistic_data(config)
    tx, ty, _ = make_data_and_model(config)
    assert x.dtype == torch.float32 and torch.equal(x.double(), tx) and torch.equal(y.double(), ty)
