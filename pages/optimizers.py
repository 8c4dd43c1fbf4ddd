"""Lesson 7: five optimizers, written by hand, on a loss landscape of two weights."""

import functools
import inspect
from operator import attrgetter

import streamlit as st

from autodiff_core import optimizers
from autodiff_core.figures.landscape import landscape_live_payload, landscape_replay_spec
from autodiff_core.landscape import LandscapeConfig, first_difference, surface_of, train_landscape, whole_run
from autodiff_core.landscape_story import story
from studio import classroom, presenter
from studio.animation import quiet_interrupted_animations
from studio.charts import plot
from studio.lessons import widget
from studio.live_chart import live_chart, relay_ended
from studio.live_view import current_run, keep_run, status_text, train_section
from studio.page import require_app
from studio.presets import bind_lesson, settings_box
from studio.runner import LiveRun
from studio.sidebar import current_settings

LESSON = "optimizers"
require_app()
st.title("7 · Optimizers on a loss landscape")
presenter.intro(
    "Five optimizers start from the same point (○) on a loss of two weights, with the same learning rate, and "
    "step downhill side by side. The contours are the loss, the ★ its minimum, and the dashed line the floor of "
    "a narrow valley; below, each one's loss above the lowest, on a log scale. Every update is written by hand "
    "(the code is at the bottom) and takes exactly `torch.optim`'s step. Move a setting and every path is "
    "computed again at once; **Train** draws them live."
)

D = LandscapeConfig()
bind_lesson(LESSON)


def settings_now() -> tuple[LandscapeConfig | None, str]:
    """The config from the settings as the session holds them now, or the reason there is none (the page and
    Train share it, so a run is always the settings of the moment it starts)."""
    ss, run = st.session_state, current_settings()
    try:  # on the CPU whatever the sidebar says: a GPU would spend a run launching kernels for two numbers
        return LandscapeConfig(
            landscape=ss.op_landscape, conditioning=ss.op_kappa, learning_rate=ss.op_lr, momentum=ss.op_momentum,
            steps=ss.op_steps, seed=D.seed if run.seed is None else run.seed, device="cpu", dtype=run.dtype), ""
    except ValueError as exc:
        return None, str(exc)


def landscape_ui() -> tuple[LandscapeConfig | None, str]:
    """Draw the widgets and read them into a config, or return the reason there is none."""
    top, bottom = st.columns([2, 1, 1]), st.columns(2)
    widget("op_landscape", top[0])
    widget("op_kappa", top[1], disabled=st.session_state.op_landscape != "Narrow bowl")
    widget("op_steps", top[2])
    widget("op_lr", bottom[0])
    widget("op_momentum", bottom[1])
    if current_settings().device != "cpu":
        st.caption("Two weights are too few for a GPU to help: this lesson computes on the CPU.")
    return settings_now()


with settings_box(LESSON):
    config, problem = landscape_ui()
if problem:
    st.error(problem)

shown_run = current_run(LESSON)
if config is not None and (shown_run is None or (not shown_run.running and shown_run.config != config)):
    # A run takes a fraction of a second (bench/landscape.py): every setting that moves computes all five paths
    # whole, at once, and that is the lesson's finished run.
    snaps = whole_run(config)
    keep_run(LESSON, LiveRun.ended(LESSON, config, list(snaps), lambda s: s.step,
                                   status="diverged" if snaps[-1].diverged else "done", message=snaps[-1].message))


def start() -> LiveRun | None:
    now, _ = settings_now()
    if now is None:
        return None
    # a partial of the trainer, not a closure: a process that trains runs off the server's GIL can rebuild it
    return LiveRun(LESSON, now, functools.partial(train_landscape, now), attrgetter("step"))


def draw(run: LiveRun | None) -> None:
    shown = run.config if run else (config or D)
    surface = surface_of(shown)

    def payload(run: LiveRun | None) -> dict:  # the live feed calls it too, off the script thread
        snaps, _ = run.view() if run else ([], 0)
        return landscape_live_payload(snaps, surface, run_id=run.run_id if run else "none",
                                      status=run.status if run else "idle", steps=shown.steps,
                                      status_text=status_text(run, "step", shown.steps + 1))

    def live():  # what the live chart is given (the ghosts computed now, once: only where it is drawn)
        return presenter.payload(payload, extra=classroom.ghost_adder(LESSON, run))

    if run is not None and run.running:
        live_chart(live(), run, key=f"{LESSON}_live", live=True)
        return
    relay_ended(run, live)  # a teacher's run that ended before it was drawn live: the class gets it all the same
    snaps = run.view()[0] if run else list(whole_run(shown))
    said = (status_text(run, "step", shown.steps + 1) if run is not None and run.began is not None
            else f"All {shown.steps + 1:,} steps (0 to {shown.steps:,}) of each path, computed as the settings "
                 "changed. Press Train to watch them drawn.")
    st.caption(said)  # in the presenter view at its size, 18 px and not greyed (presenter._CSS), as lesson 2's
    quiet_interrupted_animations()
    spec = classroom.add_ghosts_to_spec(landscape_replay_spec(snaps, surface, shown.steps), LESSON, run)
    facts = story(shown, snaps)
    if presenter.presenting():  # the chart fills the projector; what happened follows it, read from the back row
        plot(spec, key=f"{LESSON}_replay", fit=True)
        st.html(f"<style>.st-key-{LESSON}_story :is(p, li) {{ font-size: 1.35rem !important; }}</style>")
        what_happened(facts)
        return
    chart, words = st.columns([3, 2])
    with chart:
        plot(spec, key=f"{LESSON}_replay", fit=True)
    with words:
        what_happened(facts)


def what_happened(facts) -> None:
    """The run's story, each sentence computed from the paths on the chart."""
    with st.container(key=f"{LESSON}_story"):
        st.markdown("**What happened**")
        st.markdown("\n".join(f"- {fact.text}" for fact in facts) or "Nothing to say yet.")


train_section(LESSON, start if config else None, draw, config,
              after=lambda run: classroom.panel(LESSON, run, live_png=False))

with st.expander("Checked against torch.optim, bit for bit", expanded=False):
    st.markdown("Each update by hand runs again beside the `torch.optim` call it reproduces, from the same start on "
                "the same landscape, and every step's weights are compared bit for bit, as stored (a NaN or inf "
                "included).")
    if st.button("Compare every step now", key="op_compare", disabled=config is None):
        rows = [{"Optimizer": name, "torch.optim": spec.torch_call, "Steps compared": config.steps,
                 "Same bits": "every step" if (step := first_difference(config, name)) is None
                 else f"differs from step {step}"} for name, spec in optimizers.OPTIMIZERS.items()]
        st.table(rows)

with st.expander("Show the code that ran", expanded=False):
    hand = (optimizers.SGD, optimizers.Momentum, optimizers.Nesterov, optimizers.velocity_after, optimizers.RMSprop,
            optimizers.Adam, train_landscape)
    st.code("\n\n".join(inspect.getsource(x) for x in hand), language="python")
