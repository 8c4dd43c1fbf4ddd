"""Lesson 5's state in one browser session, as one object: the model, what the chart shows, and the run the
chart follows. The page, the weight editor and the live feed call its methods; it is kept in
``st.session_state`` under one key, and nothing else of the lesson's state lives there but widgets.

What the chart shows is ``history`` (whole snapshots, surfaces included, for the replay; thinned in a long run)
and ``curve`` (a light state for every recorded step, which the loss, accuracy and gradient flow curves are
drawn from). Play starts a ``LiveRun`` from the model's current state; once it ends (Pause, divergence, the time
limit) ``settle`` makes its snapshots the history that Step continues from and the replay shows.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

import streamlit as st

from autodiff_core.diagram import ParamTap
from autodiff_core.grading.remote_runs import PlaygroundRun, land
from autodiff_core.playground import Playground, PlaygroundConfig
from autodiff_core.playground_state import curve_rows, from_curve_rows, go_on_from, restore, shared_state
from autodiff_core.recording import every_step_then_sparser
from autodiff_core.runs_io import from_json, run_record, to_json
from autodiff_core.slow_step import slow_step

from .keeping import evenly, spread
from .live_view import current_run, forget_run, start_run, status_text
from .room import keep
from .room.follow import forget_fork
from .runner import LiveRun, current_session_id

log = logging.getLogger(__name__)
KEY = "pg_session"
LESSON = "playground"
OPEN_ENDED = 100_000  # steps a Play may run: it goes until Pause (or the run's time limit)
KEPT_STATES, KEPT_CURVE = 40, 2000  # whole states and curve points a class keeps for a reload


@dataclass(eq=False)
class PlaygroundSession:
    model: Playground
    history: list
    curve: list
    view: int = 0  # bumped whenever the history is replaced: the chart draws it afresh (a new id)
    settled: str | None = None  # the ended run whose snapshots the history holds now
    settled_step: int | None = None  # where that run left the model: what idle_status names
    tap: ParamTap | None = None  # the live diagram's weights, copied from the run a few times a second
    slow_trace: Any = None  # the last Step in slow motion
    forked: tuple | None = None  # (run id, step) of the teacher's state the model took ("Try it yourself")
    brought_back: int | None = None  # the step a reload brought the model back to (the class kept it)
    settled_view: int | None = None  # the view when the last run settled: the chart shows that run's end
    uid: str = field(default_factory=lambda: uuid.uuid4().hex[:8])

    @classmethod
    def current(cls) -> PlaygroundSession | None:
        return st.session_state.get(KEY)

    @classmethod
    def for_config(cls, config: PlaygroundConfig) -> PlaygroundSession:
        """The session's playground: kept while data and model settings stay the same, rebuilt when they change.
        A rebuilt model drops the run and the history of the old one: they belong to other data. The class's own
        points are the exception: a point drawn or erased changes the data, and training goes on (``set_points``)."""
        session = cls.current()
        if session is None and (session := cls._kept(config)) is not None:
            st.session_state[KEY] = session
        if session is None or session.model.config.model_key() != config.model_key():
            live = forget_run(LESSON)
            if live is not None:
                live.stop("Settings changed.")
                live.join(1.0)
            pg = Playground(config)
            session = st.session_state[KEY] = cls(pg, [], [], view=session.view if session else 0)
            session.new_history([pg.snapshot()])
            return session
        if session.model.config.points != config.points:
            session.set_points(config.points)
        if session.model.config != config and not session.running():
            session.model.set_training(config)
        return session

    @classmethod
    def _kept(cls, config: PlaygroundConfig) -> PlaygroundSession | None:
        """After a reload in a class: the model where the student's last run left it, with its history and curves,
        when its data and network are the page's (``keep``); None otherwise."""
        kept = keep.saved_state(LESSON)
        if kept is None:
            return None
        try:
            kind, saved, history, _ = from_json(kept["history"])
            curve = from_curve_rows(kept["curve"])
            saved = replace(saved, device=config.device)  # weights are numbers wherever they trained
            if kind != LESSON or not history or saved.model_key() != config.model_key():
                return None  # other data or another network than the page's: the page starts afresh
            pg = Playground(saved)
            restore(pg, kept["model"])
        except (KeyError, TypeError, ValueError):
            log.exception("a kept lesson 5 state could not be read back")
            return None
        if pg.config != config:
            pg.set_training(config)  # the page's training settings (the optimizer's state goes with its own)
        session = cls(pg, [], [])
        session.new_history(history, curve)
        if session.history[-1].step != pg.steps_done:
            session.record(pg.snapshot())
        session.brought_back = pg.steps_done
        return session

    def keep(self) -> None:
        """In a class: keep where the model stands, with its history (thinned) and curves, for a reload."""
        step, pg = (lambda s: s.step), self.model
        history = spread(self.history, step, KEPT_STATES) if len(self.history) > KEPT_STATES else self.history
        curve = evenly(self.curve, step, KEPT_CURVE) if len(self.curve) > KEPT_CURVE else self.curve
        keep.save_state(LESSON, {"history": to_json(run_record(LESSON, pg.config, history)),
                                 "curve": curve_rows(curve), "model": shared_state(pg)})

    def running(self) -> bool:
        run = current_run(LESSON)
        return run is not None and run.running

    def live_run(self) -> LiveRun | None:
        """The run the chart follows: only one that is going. An ended run is in the history by now."""
        run = current_run(LESSON)
        return run if run is not None and run.running else None

    def new_history(self, snaps: list, curve: list | None = None) -> None:
        """Replace what the chart shows; the chart draws it afresh, not as more of the same."""
        self.history = snaps
        self.curve = curve if curve is not None else [s.light() for s in snaps]
        self.view += 1

    def record(self, snap) -> None:
        """Add the model's state after a Step (or where a run stopped) to the history and the curves."""
        self.history.append(snap)
        self.curve.append(snap.light())

    def shown(self, run: LiveRun | None) -> tuple[list, list]:
        """What the chart shows and the curves are drawn from: the live run's, else the history's."""
        if run is not None:
            return run.view()[0], run.trail_view()
        return self.history, self.curve

    def settle(self) -> None:
        """Once a run has ended, its snapshots become the history; the model's state is recorded if it moved on
        after the last snapshot."""
        run = current_run(LESSON)
        if run is None or run.running or self.settled == run.run_id:
            return
        run.join(2.0)  # the worker may still be finishing the step in hand
        snaps = run.view()[0]
        if snaps:
            self.new_history(snaps, run.trail_view() or None)
        if self.history[-1].step != self.model.steps_done:
            self.record(self.model.snapshot())
        self.settled, self.settled_step, self.settled_view = run.run_id, self.model.steps_done, self.view
        if keep.in_class():
            self.keep()  # a finished run: what a reload in a class gives back

    def play(self, speed: float | None) -> LiveRun:
        """Train on from the model's state, live, until Pause; the run carries the history on."""
        pg, tap = self.model, ParamTap(self.model)
        self.tap = tap
        run = LiveRun(LESSON, pg.config, lambda: tap.stream(every_step_then_sparser(pg.run, total=OPEN_ENDED)),
                      lambda s: s.step, speed=speed, lead=0.0, session_id=current_session_id(),
                      snapshots=list(self.history[:-1]), light=lambda s: s.light(),
                      trail=[s for s in self.curve if s.step < pg.steps_done], fork_state=tap.shared_state,
                      remote=lambda worker: tap.stream(worker.train(PlaygroundRun(pg, OPEN_ENDED), pg.config,
                                                                    land=lambda state: land(pg, state))))
        return start_run(LESSON, run)

    def pause(self) -> None:
        run = current_run(LESSON)
        if run is not None:
            run.stop("Paused.")
            run.join(1.0)
            self.settle()

    def step(self, slow: bool) -> None:
        """One mini-batch step; in slow motion, with its forward, backward and update kept to show."""
        if slow:
            self.slow_trace = slow_step(self.model)
        else:
            self.model.step()
        self.record(self.model.snapshot())

    def reset(self) -> None:
        """Back to step 0, the same initial weights; the run is forgotten."""
        self.pause()
        self.model.reset()
        self.new_history([self.model.snapshot()])
        forget_run(LESSON)

    def take_fork(self, fork: dict) -> str:
        """Once per fork (``room.follow.fork_point``): the model goes on from the teacher's state, its weights,
        optimizer state, batch order and step; the history starts there. Returns why it could not ("" when it did);
        the model is then as it was."""
        if self.forked == (fork.get("run"), fork.get("step")):
            return ""
        self.forked = (fork.get("run"), fork.get("step"))
        self.pause()
        try:
            go_on_from(self.model, fork.get("shared"))
        except ValueError as exc:
            return str(exc)
        forget_run(LESSON)
        self.new_history([self.model.snapshot()])
        return ""

    def set_weight(self, layer: int, target: int, source: int | None, value: float) -> None:
        """Set one parameter by hand; the model's new state replaces the history's state at this step."""
        if self.running():
            return
        self.model.set_weight(layer, target, source, value)
        snap = self.model.snapshot()
        self.new_history([s for s in self.history if s.step < snap.step] + [snap],
                         [s for s in self.curve if s.step < snap.step] + [snap.light()])

    def state_id(self) -> str | None:
        """The name "Send to class" gives the model's state when it is worth sending and no run's end: trained (by
        Step, or a run and then Step or a weight set by hand) and not training now; None otherwise."""
        run, pg = current_run(LESSON), self.model
        if pg.steps_done in (0, pg.forked_at) or self.running():
            return None  # untrained, or where the teacher's run was: nothing of the student's own yet
        if run is not None and self.settled == run.run_id and self.view == self.settled_view \
                and self.history[-1].step == self.settled_step:
            return None  # the last run's end: the run is what is sent
        return f"{self.uid}-{self.view}-{pg.steps_done}"

    def set_points(self, points: tuple) -> None:
        """The class's own points changed: the model takes them at the step it is at, the new data's state
        replaces the history's state at that step, and a run that was going goes on from there (paused, given the
        new data, played on at its speed: the run's worker may be a sandbox, which holds its own copy)."""
        run = self.live_run()
        if run is not None:
            speed = run.speed
            self.pause()
        self.model.set_points(points)
        snap = self.model.snapshot()
        self.new_history([s for s in self.history if s.step < snap.step] + [snap],
                         [s for s in self.curve if s.step < snap.step] + [snap.light()])
        if run is not None:
            self.play(speed)

    def idle_status(self) -> str:
        """What ended the last run, while the chart still shows where it ended."""
        run = current_run(LESSON)
        if run is None or run.running or run.last is None or self.history[-1].step != self.settled_step:
            return ""  # no run, or Step has moved on since it ended
        if run.status == "stopped" and run.message == "Paused.":  # at full speed the model may be past the last record
            return f"Paused at step {self.history[-1].step:,}."
        return status_text(run, "step", None)


def fork_bar(session: PlaygroundSession, fork: dict) -> None:
    """Above the controls of a student who forked the teacher's run: the model takes the teacher's state once, and
    the bar says so while the model goes on from it, with the way back to the student's own start."""
    problem = session.take_fork(fork)
    if problem:
        st.info(f"{problem} Play starts from your own model.")
        forget_fork(LESSON)
        return
    if session.model.forked_at is None:  # Reset since: the student's own start
        return
    c = st.columns([4, 1], vertical_alignment="center")
    c[0].info(f"Your network went on from the teacher's step {session.model.forked_at:,}: its weights, its "
              "optimizer's state and its order of mini-batches, so it trains on as the teacher's run would have.")
    c[1].button("Start from the beginning", key="pg_unfork", on_click=_unfork, args=(session,), width="stretch",
                help="Back to step 0 with your own initial weights, instead of the teacher's state.")


def _unfork(session: PlaygroundSession) -> None:
    session.reset()
    forget_fork(LESSON)
