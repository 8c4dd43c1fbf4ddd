"""Lesson 2: the tutorial's two-layer net, trained by hand with MyReLU (or the activation chosen), live."""

import inspect
from functools import partial
from operator import attrgetter

import streamlit as st

from autodiff_core import TwoLayerConfig, train_two_layer
from autodiff_core.figures import two_layer_live_payload
from autodiff_core.functions import BUILTIN_ACTIVATIONS, FUNCTIONS
from studio import classroom, presenter
from studio.lessons import widget
from studio.links import plain
from studio.live_chart import live_chart
from studio.live_view import status_text, train_section
from studio.page import require_app
from studio.presets import bind_lesson, settings_box
from studio.runner import LiveRun
from studio.sidebar import current_settings

require_app()
heading, intro = st.empty(), st.empty()  # filled once the settings are bound: they name the activation that trains

DEFAULTS = TwoLayerConfig()
bind_lesson("two_layer")
act = st.session_state.tl_activation
fn = f"{FUNCTIONS[act].fn.__name__}.apply" if act in FUNCTIONS else act  # "MyReLU.apply", "torch.relu"
ours = act in FUNCTIONS or act in BUILTIN_ACTIVATIONS  # else a student's Function from lesson 6: its name is data
heading.title(f"2 · A two-layer net trained with {fn.removesuffix('.apply') if ours else plain(act)}")
with intro.container():
    presenter.intro(
        f"`y_pred = relu(x @ w1) @ w2` with `relu = {fn}` (the tutorial's `MyReLU.apply`; change it under “ReLU "
        "implementation”), loss = Σ(y_pred − y)². After `loss.backward()` the weights are updated by hand under "
        "`torch.no_grad()` and their gradients zeroed by hand. The data are random numbers, so this shows that "
        "training works, and how fast the loss falls."
    )


def two_layer_ui() -> None:
    """The lesson's settings, as widgets."""
    for column, key in zip(st.columns(4), ("tl_N", "tl_D_in", "tl_H", "tl_D_out"), strict=True):
        widget(key, column)
    for column, key in zip(st.columns(3), ("tl_lr", "tl_steps", "tl_activation"), strict=True):
        widget(key, column)


def two_layer_config() -> tuple[TwoLayerConfig | None, str]:
    """The config the session's settings give now, or the reason there is none (Train's callback calls it too)."""
    ss, run = st.session_state, current_settings()
    try:
        return TwoLayerConfig(
            N=ss.tl_N, D_in=ss.tl_D_in, H=ss.tl_H, D_out=ss.tl_D_out, learning_rate=ss.tl_lr, steps=ss.tl_steps,
            activation=ss.tl_activation, seed=DEFAULTS.seed if run.seed is None else run.seed,
            device=run.device, dtype=run.dtype, record_every=max(1, ss.tl_steps // 2000)), ""
    except ValueError as exc:
        return None, str(exc)


with settings_box("two_layer"):
    two_layer_ui()
config, problem = two_layer_config()
if problem:
    st.error(problem)


def start() -> LiveRun | None:
    now, _ = two_layer_config()  # the settings as they are when Train is pressed
    if now is None:
        return None
    return LiveRun("two_layer", now, partial(train_two_layer, now), attrgetter("step"),
                   remote=lambda worker: worker.train(train_two_layer, now))


def payload(run: LiveRun | None) -> dict:
    snaps, _ = run.view() if run else ([], 0)
    steps = run.config.steps if run else (config.steps if config else DEFAULTS.steps)
    return two_layer_live_payload(snaps, run_id=run.run_id if run else "none", status=run.status if run else "idle",
                                  status_text=status_text(run, "step", steps), steps=steps)


def draw(run: LiveRun | None) -> None:
    live_chart(presenter.payload(payload, extra=classroom.ghost_adder("two_layer", run)), run, key="two_layer_live")


train_section("two_layer", start if config else None, draw, config,
              after=lambda run: classroom.panel("two_layer", run))

with st.expander("Show the code that ran", expanded=False):
    st.code(inspect.getsource(train_two_layer), language="python", wrap_lines=True)
