"""Lesson 5: the classification playground. An MLP with the custom ReLU learns nonlinear boundaries."""

import streamlit as st

from autodiff_core.data import DATASETS
from autodiff_core.figures_playground import playground_live_payload, playground_replay_figure
from autodiff_core.functions import activation_names
from autodiff_core.playground import OPTIMIZERS, Playground, PlaygroundConfig
from studio.charts import plot
from studio.live_chart import live_chart
from studio.live_view import SPEEDS, current_run, live_section, speed_value, status_text
from studio.page import require_app
from studio.runner import LiveRun, current_session_id
from studio.sidebar import current_settings
from studio.state import init_state

require_app()
st.title("5 · Classification playground")
st.markdown("A small network whose activation is a custom autograd Function (the tutorial's `MyReLU` by default) "
            "learns to separate two classes. The background is the probability of class 1 at every point; "
            "filled dots are training points, hollow ones test points.")
D = PlaygroundConfig()
init_state({"pg_dataset": D.dataset, "pg_noise": D.noise, "pg_n": D.n_per_class, "pg_test": D.test_fraction,
            "pg_layers": len(D.hidden), "pg_width": D.hidden[0], "pg_activation": D.activation,
            "pg_optimizer": D.optimizer, "pg_lr": D.learning_rate, "pg_batch": D.batch_size, "pg_l2": D.l2,
            "pg_speed": "100"})
st.session_state.setdefault("pg_data_seed", 0)


def playground_ui() -> tuple[PlaygroundConfig | None, str]:
    """Read the widgets into a config, or return the reason there is none."""
    c = st.columns([2, 2, 2, 2, 1.3], vertical_alignment="bottom")
    c[0].selectbox("Data", list(DATASETS), key="pg_dataset")
    c[1].slider("Noise", 0.0, 1.0, step=0.05, key="pg_noise")
    c[2].slider("Points per class", 10, 500, step=10, key="pg_n")
    c[3].slider("Test fraction", 0.1, 0.5, step=0.05, key="pg_test")
    if c[4].button("Regenerate", key="pg_regen", help="New random points from the same recipe."):
        st.session_state.pg_data_seed += 1
    c = st.columns(6)
    c[0].number_input("Hidden layers", 1, 3, key="pg_layers")
    c[1].number_input("Neurons per layer", 1, 64, key="pg_width")
    c[2].selectbox("Activation", activation_names(), key="pg_activation")
    c[3].selectbox("Optimizer", OPTIMIZERS, key="pg_optimizer")
    c[4].number_input("Learning rate", 1e-5, 1e6, format="%.4g", step=0.01, key="pg_lr")
    c[5].number_input("Batch size", 1, 1000, key="pg_batch")
    st.select_slider("L2 (weight decay)", [0.0, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1], key="pg_l2")
    ss, run = st.session_state, current_settings()
    try:
        config = PlaygroundConfig(
            dataset=ss.pg_dataset, noise=ss.pg_noise, n_per_class=ss.pg_n, test_fraction=ss.pg_test,
            data_seed=ss.pg_data_seed, hidden=(ss.pg_width,) * ss.pg_layers, activation=ss.pg_activation,
            init_seed=0 if run.seed is None else run.seed, optimizer=ss.pg_optimizer, learning_rate=ss.pg_lr,
            batch_size=ss.pg_batch, l2=ss.pg_l2, device=run.device, dtype=run.dtype)
    except ValueError as exc:
        return None, str(exc)
    return config, ""


def playground_for(config: PlaygroundConfig) -> Playground:
    """The session's model: kept while data and model settings stay the same, rebuilt when they change."""
    pg = st.session_state.get("pg_model")
    if pg is None or pg.config.model_key() != config.model_key():
        live = current_run("playground")
        if live is not None:
            live.stop("Settings changed.")
            live.join(1.0)
        pg = st.session_state["pg_model"] = Playground(config)
        st.session_state["pg_history"] = [pg.snapshot()]
    elif pg.config != config and not _running():
        pg.set_training(config)
    return pg


def _running() -> bool:
    run = current_run("playground")
    return run is not None and run.running


def play(pg: Playground, speed: float | None) -> None:
    history = st.session_state["pg_history"]
    run = LiveRun("playground", pg.config, lambda: pg.run(100_000, record_every=10), lambda s: s.step,
                  speed=speed, session_id=current_session_id(), snapshots=list(history[:-1]))
    st.session_state["playground_run"] = run.start()


def pause() -> None:
    run = current_run("playground")
    if run is not None:
        run.stop("Paused.")
        run.join(1.0)
        st.session_state["pg_history"] = run.view()[0]


config, problem = playground_ui()
if problem:
    st.error(problem)
    st.stop()
pg = playground_for(config)
if config.hidden and min(config.hidden) == 1:
    st.info("A layer of 1 neuron squeezes everything through one number: the boundary can barely bend.")
if config.noise == 0:
    st.info("Noise 0: the points follow their recipe exactly, so a test accuracy of 100% is possible.")

c = st.columns([1, 1, 1, 1, 4], vertical_alignment="bottom")
c[4].select_slider("Speed (steps per second)", SPEEDS, key="pg_speed")
speed = speed_value(st.session_state.pg_speed)
running = _running()
if c[0].button("Play", key="pg_play", type="primary", disabled=running, width="stretch"):
    play(pg, speed)
    running = True
c[1].button("Pause", key="pg_pause", disabled=not running, on_click=pause, width="stretch")
if c[2].button("Step", key="pg_step", disabled=running, width="stretch", help="Train one mini-batch step."):
    pg.step()
    st.session_state["pg_history"].append(pg.snapshot())
if c[3].button("Reset", key="pg_reset", width="stretch", help="Back to step 0, same initial weights."):
    pause()
    pg.reset()
    st.session_state["pg_history"] = [pg.snapshot()]
    st.session_state.pop("playground_run", None)
if (run := current_run("playground")) is not None:
    run.set_speed(speed)
train = (pg.x_train.cpu().float().numpy(), pg.y_train.cpu().numpy())
test = (pg.x_test.cpu().float().numpy(), pg.y_test.cpu().numpy())


def shown_snapshots(run: LiveRun | None) -> list:
    """What the chart shows: the live run's snapshots, else the history of steps and paused runs."""
    return run.view()[0] if run is not None else st.session_state["pg_history"]


def payload(run: LiveRun | None) -> dict:
    snaps = shown_snapshots(run)
    last = snaps[-1].step if snaps else 0
    return playground_live_payload(
        snaps, pg.extent, pg.config.grid, train, test, run_id=run.run_id if run else f"idle-{id(pg)}",
        status=run.status if run else "idle", status_text=status_text(run, "step", max(last, 1)) if run else "",
        steps_axis=max(500, int(last * 1.25)))


def draw(run: LiveRun | None) -> None:
    live_chart(payload, run, key="playground_live")


live_section("playground", draw)
history = shown_snapshots(current_run("playground"))
latest = history[-1] if history else st.session_state["pg_history"][-1]  # a run that has yielded nothing yet
if latest.message and not latest.diverged:
    st.warning(latest.message)
if not _running() and len(history) > 2:
    with st.expander("Replay the run as an animation"):
        plot(playground_replay_figure(history, pg.extent, pg.config.grid, train, test),
                        key="pg_replay")
