"""Lesson 5: the playground. An MLP with the custom ReLU learns nonlinear boundaries (or a regression), TF
Playground's way, with its gradient flow beside and the run as a PyTorch script."""

import streamlit as st

from autodiff_core.data import DATASET_NAMES, is_regression, label_noise_note
from autodiff_core.diagram import GRID, MAX_WIDTH, drawable, network_state
from autodiff_core.features import ordered
from autodiff_core.figures.gradflow import discretized, gradient_flow_figure, gradient_flow_live
from autodiff_core.figures.network import network_figure, network_live_spec, network_live_state
from autodiff_core.figures.playground import (
    LIVE_WINDOW,
    drawn,
    playground_live_payload,
    playground_replay_figure,
    score_name,
)
from autodiff_core.graph import to_dot
from autodiff_core.playground import MAX_DEPTH, PlaygroundConfig, backward_problem
from autodiff_core.script_export import export_script, exportable
from autodiff_core.slow_step import UNITS, forward_backward_table, function_table, update_table
from studio import classroom, presenter
from studio.animation import quiet_interrupted_animations
from studio.charts import plot
from studio.first_paint import RUN_ROW
from studio.layer_widths import layer_widths
from studio.lessons import FEATURE_KEYS, MAX_NEURONS, widget
from studio.live_chart import live_chart, relay_ended
from studio.live_view import current_run, speed_value, status_text
from studio.page import require_app
from studio.phone import sticky_controls
from studio.playground_classes import softmax_panel
from studio.playground_data import config_fields, data_tools, draw_picker, intro, plane_clicked, with_drawing
from studio.playground_session import PlaygroundSession, fork_bar
from studio.presets import bind_lesson, settings_box
from studio.room import board
from studio.room.follow import following, fork_point, view
from studio.runner import LiveRun
from studio.sidebar import current_settings
from studio.state import drawn_at
from studio.weight_editor import CLICKABLE, weight_editor
from studio.words import graph_words

require_app()
st.title("5 · Classification playground")
D = PlaygroundConfig()
bind_lesson("playground")
INTRO = ("A small network whose activation is a custom autograd Function (the tutorial's `MyReLU` by default) "
         "learns to separate two classes, 0 (orange) and 1 (blue). The background is the probability of class 1 at "
         "every point; filled dots are training points, hollow ones test points.")
REGRESSION_INTRO = (
    "A small network whose activation is a custom autograd Function (the tutorial's `MyReLU` by default) learns a "
    "regression: a number at every point of the plane, from -1 (orange) through 0 (white) to +1 (blue). The "
    "background is the network's output at every point; filled dots are training points, hollow ones test points, "
    "each coloured by its target. The loss is the squared error; the score is the **variance explained** (R²): "
    "1 − squared error / variance of the targets, 100% for a perfect fit, 0% for always answering their mean.")
regression_chosen = st.session_state.pg_dataset in DATASET_NAMES and is_regression(st.session_state.pg_dataset)
presenter.intro(intro(REGRESSION_INTRO if regression_chosen else INTRO))


def playground_ui() -> tuple[PlaygroundConfig | None, str]:
    """Read the widgets into a config, or return the reason there is none."""
    c = st.columns([2, 2, 2, 2, 1.3], vertical_alignment="bottom")
    for column, key in zip(c, ("pg_dataset", "pg_noise", "pg_n", "pg_test"), strict=False):
        widget(key, column)
    if c[4].button("Regenerate", key="pg_regen", help="New random points from the same recipe."):
        st.session_state.pg_data_seed += 1
    data_tools()  # the classes, and your own points: drawing, a file, what the link holds
    for column, key in zip(st.columns(len(FEATURE_KEYS)), FEATURE_KEYS.values(), strict=True):
        widget(key, column)
    hidden = layer_widths(MAX_DEPTH, MAX_NEURONS)
    c = st.columns([4, 3, 2, 2])  # the activation names are long ("BROKEN Tanh: derivative of the input")
    for column, key in zip(c, ("pg_activation", "pg_optimizer", "pg_lr", "pg_batch"), strict=True):
        widget(key, column)
    c = st.columns([3, 3, 2.2, 2.6], vertical_alignment="bottom")  # room for "Discretize output"
    for column, key in zip(c, ("pg_l2", "pg_l1", "pg_show_test", "pg_discretize"), strict=True):
        widget(key, column)
    ss, run = st.session_state, current_settings()
    try:
        config = PlaygroundConfig(
            dataset=ss.pg_dataset, noise=ss.pg_noise, n_per_class=ss.pg_n, test_fraction=ss.pg_test,
            data_seed=ss.pg_data_seed, hidden=hidden, activation=ss.pg_activation,
            init_seed=0 if run.seed is None else run.seed, optimizer=ss.pg_optimizer, learning_rate=ss.pg_lr,
            batch_size=ss.pg_batch, l2=ss.pg_l2, l1=ss.pg_l1, device=run.device, dtype=run.dtype,
            features=ordered([name for name, key in FEATURE_KEYS.items() if ss[key]]), **config_fields())
    except ValueError as exc:
        return None, str(exc)
    return config, ""


with settings_box("playground"):
    config, problem = playground_ui()
if problem:
    st.error(problem)
    st.stop()
session = PlaygroundSession.for_config(config)
session.settle()
pg = session.model
if backward_problem(config.activation):
    st.warning(backward_problem(config.activation))
if not presenter.presenting():  # what the settings mean for the run: in the presenter view the teacher says it
    if config.hidden and min(config.hidden) == 1:
        st.info("A layer of 1 neuron squeezes everything through one number: the boundary can barely bend.")
    if config.noise == 0:
        st.info("Noise 0: the points follow their recipe exactly, so a test "
                f"{score_name(config.regression)} of 100% is possible.")
    elif note := label_noise_note(config.dataset, (pg.points_train, pg.y_train), (pg.points_test, pg.y_test)):
        st.caption(note)  # why train and test losses differ so: the flipped labels are not shared out evenly

if following("playground"):
    view("playground")  # the teacher's run, in place of the student's own: the page ends there
if (fork := fork_point("playground")) is not None:  # "Try it yourself" while the teacher's run went
    fork_bar(session, fork)
# on a phone, in reach while the settings above scroll by; everywhere, the buttons still while the slider loads
with sticky_controls(f"pg{RUN_ROW}"):
    c = st.columns([1, 1, 1, 1, 4], vertical_alignment="bottom")
widget("pg_speed", c[4])
speed = speed_value(st.session_state.pg_speed)
running = session.running()
if c[0].button("Play", key="pg_play", type="primary", disabled=running, width="stretch"):
    session.play(speed)
    running = True
c[1].button("Pause", key="pg_pause", disabled=not running, on_click=session.pause, width="stretch")
if c[2].button("Step", key="pg_step", disabled=running, width="stretch", help="Train one mini-batch step."):
    session.step(slow=st.session_state.pg_slow)
    board.remember("playground", session.state_id())  # what Send to class says this state was trained with
if c[3].button("Reset", key="pg_reset", width="stretch", help="Back to step 0, same initial weights."):
    session.reset()
if (run := current_run("playground")) is not None:
    run.set_speed(speed)
if session.brought_back == pg.steps_done and not running:
    st.caption("Your last run, kept by the class: the reload brought it back.")
widget("pg_slow")


train = drawn(pg.points_train, pg.y_train, pg.config.regression)
shown = None if st.session_state.pg_show_test else 0  # none of the test points when they are hidden
test = drawn(pg.points_test[:shown], pg.y_test[:shown], pg.config.regression)
discretize, regression = st.session_state.pg_discretize, pg.config.regression
classes = pg.config.classes


NETWORK_NOTE = ("Each neuron is drawn as what it computes over the plane (orange -1, white 0, blue +1). Links are "
                "blue for positive weights and orange for negative, thicker when larger; each bias is the small square "
                "at its neuron's corner. Hover for values.")
FLOW_NOTE = ("Each layer's gradient norm |dLoss/dW| at each step (log scale), and the share of each hidden layer's "
             "units that are dead: the same output for every training point, so no gradient passes.")


def live_diagram(run: LiveRun | None) -> tuple[dict, dict | None] | None:
    """The diagram at the newest state whose weights the run's tap copied (ten a second)."""
    if run is None or tap is None or not drawable(pg):
        return None
    spec = network_live_spec(pg.config.features, pg.config.hidden, GRID, title="The network", note=NETWORK_NOTE,
                             outputs=pg.config.outputs)
    if tap.latest is None:
        return spec, None
    step, params = tap.latest
    return spec, network_live_state(network_state(pg, params=params, step=step))


def live_flow(run: LiveRun | None, curve: list) -> tuple[dict, dict] | None:
    if run is None:
        return None
    spec, curves = gradient_flow_live(curve, len(pg.config.hidden) + 1)
    spec.update(title="Gradient flow", note=FLOW_NOTE)
    return spec, curves  # both at the presenter's scale in the presenter view (presenter.payload)


# The live feed calls payload() off the script thread, where session state cannot be read: read it now (the
# session object itself can be read from any thread).
idle_id, idle_text = f"idle-{id(pg)}-{session.view}", session.idle_status()
tap = session.tap


def payload(run: LiveRun | None) -> dict:
    snaps, curve = session.shown(run)
    if discretize:  # only the newest states carry a surface
        snaps = discretized(snaps, LIVE_WINDOW + 1, classes)
    last = snaps[-1].step if snaps else 0
    return playground_live_payload(
        snaps, pg.extent, pg.config.grid, train, test, run_id=run.run_id if run else idle_id,
        status=run.status if run else "idle", status_text=status_text(run, "step", None) if run else idle_text,
        steps_axis=max(500, int(last * 1.25) if run else last), curve=curve,  # room to grow only while live
        diagram=live_diagram(run), flow=live_flow(run, curve), regression=regression, classes=classes)


run = session.live_run()
draw_picker()  # your own points: what a click on the plane adds
ghosts = classroom.ghost_adder("playground", current_run("playground"), pg.config)
live = presenter.payload(with_drawing(payload), extra=ghosts)
live_chart(live, run, key="playground_live", live=run is not None, on_click=plane_clicked)  # to its end
if run is None:  # a teacher's Play that ended (diverged) before it was drawn live: the class gets it all the same
    relay_ended(current_run("playground"), lambda: live)
history, curve_shown = session.shown(run)
latest = history[-1] if history else session.history[-1]  # a run that has yielded nothing yet
if latest.message:
    st.warning(latest.message)
ended = current_run("playground")
if ended is not None and not ended.running and ended.status == "error" and idle_text:
    st.error(ended.message)
# A toggle, not an expander: the replay gets the page's whole width (a phone has none to spare), and it
# is built only when asked for.
if run is None and len(history) > 2 and st.toggle("Replay the run as an animation", key="pg_replay_on",
                                                        **drawn_at("toggle", "pg_replay_on")):
    quiet_interrupted_animations()
    replay = discretized(history, len(history), classes) if discretize else history
    plot(playground_replay_figure(replay, pg.extent, pg.config.grid, train, test, curve=curve_shown,
                                  regression=regression, classes=classes), key="pg_replay")
trace = session.slow_trace
if run is None and st.session_state.pg_slow and trace is not None and trace.step == pg.steps_done - 1:
    st.subheader(f"Step {trace.step + 1} in slow motion")
    widest = max(len(layer.pre) for layer in trace.layers)
    units = f" (each layer's first {UNITS} units)" if widest > UNITS else ""
    st.markdown(f"**1 · Forward.** A batch of {trace.batch} points; the first of them (target {trace.target:g}), "
                f"layer by layer{units}: z, then the activation. **3 · Backward** comes back up the table, from "
                "the output: grad_output (dLoss/d activation) flows into the activation's backward, and grad_input "
                "(dLoss/dz) comes out.")
    presenter.table(forward_backward_table(trace))
    st.markdown(f"**2 · Loss** over the batch: {trace.loss:.4f}. **3 · Backward**: autograd walks this graph "
                "from the loss up; the orange node is the custom Function, whose ctx holds what forward saved.")
    st.graphviz_chart(to_dot(trace.graph, key="slow", **presenter.dot_options()))
    graph_words(trace.graph)
    if trace.function is not None:
        layer1 = len(trace.layers[0].pre)
        first_units = f"; x[0] to x[{UNITS - 1}] of its {layer1} units" if layer1 > UNITS else ""
        st.markdown(f"Inside the backward of **{trace.function.name}** on layer 1 (the first point"
                    f"{first_units}): grad_output flows in, grad_input flows out.")
        presenter.table(function_table(trace))
    st.markdown("**4 · Update.** Each weight matrix moved by the optimizer, against its gradient:")
    presenter.table(update_table(trace), width="content")
if run is None:
    st.subheader("The network")
    st.caption(NETWORK_NOTE)
    if drawable(pg):
        plot(network_figure(network_state(pg)), key="pg_network", **CLICKABLE)
    else:
        st.info(f"The diagram is drawn for layers of at most {MAX_WIDTH} neurons.")
    weight_editor(session)
if run is None and len(history) > 1:
    st.subheader("Gradient flow")
    st.caption(FLOW_NOTE)
    plot(gradient_flow_figure(curve_shown), key="pg_gradflow")
if run is None:
    softmax_panel(pg)  # with 3 to 6 classes: MySoftmax's Jacobian beside torch.softmax's
if run is None and pg.steps_done > 0 and pg.config.device == "cpu" and exportable(pg.config.activation) \
        and pg.forked_at is None:  # a script retrains from step 0: it cannot start from the teacher's state
    st.download_button("Export the run as a PyTorch script", export_script(pg), file_name="playground_run.py",
                       mime="text/x-python", key="pg_export", on_click="ignore",
                       help="Data, network, the Function's source, optimizer and seeds as plain PyTorch: "
                            "`python playground_run.py` retrains from step 0 and prints the loss at every step.")
state = session.state_id()  # Send to class sends the model's state, not the last run, once Step moved on from it
classroom.panel("playground", current_run("playground"), shown=(pg.config, history),  # the exports: what is on screen
                state=state and (lambda: board.state_entry("playground", state, history[-1], pg.steps_done)))
