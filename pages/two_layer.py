"""Lesson 2: the tutorial's two-layer net, trained by hand with MyReLU, live."""

import inspect

import streamlit as st

from autodiff_core import TwoLayerConfig, train_two_layer
from autodiff_core.figures import two_layer_live_payload
from studio import classroom, presenter
from studio.lessons import widget
from studio.live_chart import live_chart
from studio.live_view import controls, current_run, live_section, status_text
from studio.page import require_app
from studio.presets import bind_lesson, settings_box
from studio.runner import LiveRun
from studio.sidebar import current_settings

require_app()
st.title("2 · A two-layer net trained with MyReLU")
presenter.intro(
    "`y_pred = relu(x @ w1) @ w2`, loss = Σ(y_pred − y)². After `loss.backward()` the weights are updated "
    "by hand under `torch.no_grad()` and their gradients zeroed by hand. The data are random numbers, so "
    "this shows that training works, and how fast the loss falls."
)

DEFAULTS = TwoLayerConfig()
bind_lesson("two_layer")


def two_layer_ui() -> tuple[TwoLayerConfig | None, str]:
    """Read the widgets into a config, or return the reason there is none."""
    for column, key in zip(st.columns(4), ("tl_N", "tl_D_in", "tl_H", "tl_D_out"), strict=True):
        widget(key, column)
    for column, key in zip(st.columns(3), ("tl_lr", "tl_steps", "tl_activation"), strict=True):
        widget(key, column)
    ss, run = st.session_state, current_settings()
    try:
        config = TwoLayerConfig(
            N=ss.tl_N, D_in=ss.tl_D_in, H=ss.tl_H, D_out=ss.tl_D_out, learning_rate=ss.tl_lr, steps=ss.tl_steps,
            activation=ss.tl_activation, seed=DEFAULTS.seed if run.seed is None else run.seed,
            device=run.device, dtype=run.dtype, record_every=max(1, ss.tl_steps // 2000))
    except ValueError as exc:
        return None, str(exc)
    return config, ""


with settings_box("two_layer"):
    config, problem = two_layer_ui()
if problem:
    st.error(problem)


def start() -> LiveRun:
    return LiveRun("two_layer", config, lambda: train_two_layer(config), lambda s: s.step,
                   remote=lambda worker: worker.train(train_two_layer, config))


controls("two_layer", start if config else None)


def payload(run: LiveRun | None) -> dict:
    snaps, _ = run.view() if run else ([], 0)
    steps = run.config.steps if run else (config.steps if config else DEFAULTS.steps)
    return two_layer_live_payload(snaps, run_id=run.run_id if run else "none", status=run.status if run else "idle",
                                  status_text=status_text(run, "step", steps), steps=steps)


def draw(run: LiveRun | None) -> None:
    live_chart(presenter.payload(payload, extra=classroom.ghost_adder("two_layer", run)), run, key="two_layer_live")


live_section("two_layer", draw, config)
classroom.panel("two_layer", current_run("two_layer"))

with st.expander("Show the code that ran", expanded=False):
    st.code(inspect.getsource(train_two_layer), language="python", wrap_lines=True)
