"""What only a machine with a CUDA GPU can show: the GPU is in the sidebar's selector, training runs there,
and no training step waits for the host unless it records a snapshot. Skipped elsewhere; elsewhere
tests/studio/test_app.py checks the sidebar against made-up device lists."""

from __future__ import annotations

import contextlib

import pytest
import torch

from autodiff_core import logistic, playground, two_layer
from autodiff_core.devices import available_devices
from tests.conftest import wait_for_run

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@contextlib.contextmanager
def syncs_only_through_tolist():
    """Inside, any host-device sync (``.item()``, ``float(t)``, a mask's ``nonzero``, a synchronize) raises,
    except a ``Tensor.tolist()``: the one batched copy a trainer makes when it records. Yields the list
    of ``tolist`` calls made."""
    calls, tolist = [], torch.Tensor.tolist

    def recording(tensor):
        calls.append(tensor.shape)
        torch.cuda.set_sync_debug_mode("default")
        try:
            return tolist(tensor)
        finally:
            torch.cuda.set_sync_debug_mode("error")

    mode = torch.cuda.get_sync_debug_mode()
    torch.Tensor.tolist = recording
    torch.cuda.set_sync_debug_mode("error")
    try:
        yield calls
    finally:
        torch.cuda.set_sync_debug_mode(mode)
        torch.Tensor.tolist = tolist


def test_every_gpu_is_in_the_selector(new_app):
    at = new_app()
    at.run()
    selector = at.sidebar.selectbox(key="device")
    names = [f"GPU {i}: {torch.cuda.get_device_name(i)}" for i in range(torch.cuda.device_count())]
    assert selector.options == ["CPU", *names]
    assert not any("No GPU" in c.value for c in at.sidebar.caption)
    assert [d.id for d in available_devices()][1] == "cuda:0"


def test_lesson_2_trains_on_the_gpu_chosen_in_the_sidebar(new_app):
    at = new_app()
    at.query_params["device"] = "cuda"
    at.run()
    assert at.sidebar.selectbox(key="device").value == "cuda:0"
    at.switch_page("pages/two_layer.py").run()
    at.number_input(key="tl_steps").set_value(40).run()
    at.select_slider(key="two_layer_speed").set_value("max").run()
    at.button(key="two_layer_train").click().run()
    run = wait_for_run(at, "two_layer")
    assert run.status == "done" and run.count == 40 and not at.exception


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_two_layer_steps_sync_only_when_they_record(dtype):
    run = two_layer.train_two_layer(two_layer.TwoLayerConfig(device="cuda", dtype=dtype, steps=60, record_every=20))
    first = next(run)  # setting up (data, weights) may sync; the steps after it may not, except to record
    with syncs_only_through_tolist() as copies:
        rest = list(run)
    assert first.step == 0 and [s.step for s in rest] == [20, 40, 59]
    assert len(copies) == len(rest)  # one copy per record, none in the 58 steps between


def test_logistic_steps_sync_only_when_they_record():
    config = logistic.LogisticConfig(device="cuda", max_iterations=100, record_every=20, stop_accuracy=1.0)
    run = logistic.train_logistic(config)
    first = next(run)
    with syncs_only_through_tolist() as copies:
        rest = list(run)
    assert first.iteration == 0 and rest[-1].iteration == 99
    assert len(copies) <= len(rest)


def test_playground_steps_sync_only_when_they_record():
    model = playground.Playground(playground.PlaygroundConfig(device="cuda"))
    run = model.run(40, record_every=10)
    next(run)
    with syncs_only_through_tolist() as copies:
        rest = list(run)
    assert [s.step for s in rest] == [10, 20, 30, 40]
    assert len(copies) <= 2 * len(rest)  # the numbers and the decision surface, per record
