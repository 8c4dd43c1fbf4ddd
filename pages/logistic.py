"""Lesson 3: logistic regression as an nn.Module; the decision boundary moves as it learns."""

import inspect
from dataclasses import replace
from functools import partial
from operator import attrgetter

import streamlit as st

from autodiff_core import LogisticConfig, train_logistic
from autodiff_core.figures import logistic_live_payload, logistic_replay_spec
from autodiff_core.logistic import logistic_data
from studio import classroom, presenter
from studio.animation import quiet_interrupted_animations
from studio.charts import plot
from studio.lessons import widget
from studio.live_chart import live_chart, relay_ended
from studio.live_view import status_text, train_section
from studio.page import require_app
from studio.presets import bind_lesson, settings_box
from studio.room.follow import forget_fork, fork_point
from studio.runner import LiveRun
from studio.sidebar import current_settings

require_app()
st.title("3 · Logistic regression with an nn.Module")
intro = st.empty()  # filled once the settings are bound: it names the momentum that trains

D = LogisticConfig()
bind_lesson("logistic")
momentum = st.session_state.lr_momentum
with intro.container():
    presenter.intro(
        "`Linear(2, 1)` followed by `Sigmoid` gives the probability of class 1. `BCELoss` measures the error and "
        + (f"`torch.optim.SGD` with momentum {momentum:g} updates the weights. " if momentum else
           "`torch.optim.SGD` with momentum 0, plain gradient descent, updates the weights. ")
        + "The green line is where the model says 50/50: w0·x₀ + w1·x₁ + b = 0. Training stops once the accuracy "
        "passes the target."
    )


def overlapping_without_zero_grad() -> None:
    st.session_state.update(lr_mean=1.0, lr_forget=True)


def logistic_ui() -> None:
    """The lesson's settings, as widgets."""
    for row in (("lr_n", "lr_mean", "lr_bias", "lr_lr"), ("lr_momentum", "lr_iters", "lr_every", "lr_stop")):
        for column, key in zip(st.columns(4), row, strict=True):
            widget(key, column)
    c = st.columns([3, 2], vertical_alignment="center")
    widget("lr_forget", c[0])
    c[1].button("Show where it hurts: overlapping clusters", key="lr_hurts", on_click=overlapping_without_zero_grad,
                help="Cluster mean 1.0 without zero_grad(): the classes overlap, so some points are always "
                     "wrong, and the growing weights make the model certain of them.")


def logistic_config() -> tuple[LogisticConfig | None, str, dict | None]:
    """The config the session's settings give now, the reason there is none, and the teacher's point it goes
    on from (after "Try it yourself" mid-run; None: from the beginning). Train's callback calls it too."""
    ss, run = st.session_state, current_settings()
    try:
        config = LogisticConfig(
            n_per_class=ss.lr_n, mean=ss.lr_mean, bias=ss.lr_bias, learning_rate=ss.lr_lr,
            momentum=ss.lr_momentum, max_iterations=ss.lr_iters, record_every=1,  # the replay shows every move
            stop_accuracy=ss.lr_stop, zero_grad=not ss.lr_forget, seed=D.seed if run.seed is None else run.seed,
            device=run.device, dtype=run.dtype)
    except ValueError as exc:
        return None, str(exc), None
    fork = fork_point("logistic")  # "Try it yourself" while the teacher's run went
    if fork is not None and fork["step"] + 1 < config.max_iterations:
        config = replace(config, start=tuple(fork["weights"]), first_iteration=fork["step"] + 1)
    return config, "", fork


with settings_box("logistic"):
    logistic_ui()
config, problem, fork = logistic_config()
if problem:
    st.error(problem)
elif fork is not None:
    c = st.columns([4, 1], vertical_alignment="center")
    w0, w1, b = fork["weights"]
    if config.first_iteration:
        c[0].info(f"Train goes on from the teacher's iteration {fork['step']:,} (w0 {w0:.2f}, w1 {w1:.2f}, b {b:.2f}), "
                  "with the momentum starting again from zero.")
    else:
        c[0].info(f"The teacher's iteration {fork['step']:,} is past Max iterations, so Train starts from the "
                  "beginning.")
    c[1].button("Start from the beginning", key="lr_unfork", on_click=forget_fork, args=("logistic",),
                width="stretch", help="Train from the tutorial's starting weights instead of the teacher's.")


def start() -> LiveRun | None:
    now, _, _ = logistic_config()  # the settings as they are when Train is pressed
    return None if now is None else LiveRun("logistic", now, partial(train_logistic, now), attrgetter("iteration"))


def draw(run: LiveRun | None) -> None:
    shown = run.config if run else (config or D)
    x, y = (t.numpy() for t in logistic_data(shown))
    snaps, _ = run.view() if run else ([], 0)
    running = run is not None and run.running
    every = st.session_state["lr_every"]  # every iteration is recorded; the live chart draws every n-th

    def payload(run: LiveRun | None) -> dict:  # the live feed calls it too: the data are made once, here
        snaps, _ = run.view() if run else ([], 0)
        snaps = [s for i, s in enumerate(snaps) if s.iteration % every == 0 or i == len(snaps) - 1]
        return logistic_live_payload(snaps, x, y, run_id=run.run_id if run else "none",
                                     status=run.status if run else "idle",
                                     status_text=status_text(run, "iteration", shown.max_iterations),
                                     max_iterations=shown.max_iterations)

    def live():  # what the live chart is given (the ghosts computed now, once: only where it is drawn)
        return presenter.payload(payload, extra=classroom.ghost_adder("logistic", run))

    if run is not None and not running and snaps and not snaps[0].diverged:
        relay_ended(run, live)  # a teacher's run that ended before it was drawn live: the class gets it all the same
        last = run.last
        ended = (f"Stuck at iteration {last.iteration:,}." if last.stuck
                 else status_text(run, "iteration", shown.max_iterations))
        st.caption(ended)  # in the presenter view at its size, 18 px and not greyed (presenter._CSS), as lesson 2's
        quiet_interrupted_animations()
        plot(classroom.add_ghosts_to_spec(logistic_replay_spec(snaps, x, y, shown.max_iterations), "logistic", run),
             key="logistic_replay", fit=True)
        if last.message and not last.diverged:  # stuck, or ended on a saturated sigmoid
            st.warning(last.message)
        if not shown.zero_grad:
            st.info(zero_grad_sentence(shown, last))
        return

    live_chart(live(), run, key="logistic_live", live=running)


@st.cache_data(show_spinner="Training the same run with zero_grad()…", max_entries=8)
def run_with_zero_grad(config: LogisticConfig):
    """The last snapshot of the same run (same data, same start) with optimizer.zero_grad()."""
    return list(train_logistic(replace(config, zero_grad=True)))[-1]


def zero_grad_sentence(config: LogisticConfig, forgot) -> str:
    """What forgetting zero_grad() did to this run, against the same run with it, in one sentence."""
    right = run_with_zero_grad(config)
    ratio = (abs(forgot.w0) + abs(forgot.w1)) / max(abs(right.w0) + abs(right.w1), 1e-12)
    if forgot.loss > right.loss:
        harm = f"and the model ends sure of its wrong answers: loss {forgot.loss:.3g} against {right.loss:.3g}."
    else:
        where = ("in “Settings and presets” at the top of the page" if presenter.presenting()
                 else "beside the “Forget optimizer.zero_grad()” switch above")
        harm = ("which only looks like faster learning here; on overlapping clusters (the “Show where it hurts: "
                f"overlapping clusters” button, {where}) the model ends sure of its wrong answers.")
    return (f"Not an improvement: `backward()` adds into `.grad`, so without `zero_grad()` the gradient used at "
            f"iteration {forgot.iteration:,} is the sum of all {forgot.iteration + 1:,} gradients so far, the "
            f"steps keep growing, and the weights end {ratio:.0f}× larger than with it, {harm}")


train_section("logistic", start if config else None, draw,
              after=lambda run: classroom.panel("logistic", run, live_png=False))

with st.expander("Show the code that ran", expanded=False):
    st.code(inspect.getsource(train_logistic), language="python", wrap_lines=True)
