"""Lesson 5's state in one browser session, as one object: the model, what the chart shows, and the run the
chart follows. The page, the weight editor and the live feed call its methods; it is kept in
``st.session_state`` under one key, and nothing else of the lesson's state lives there but widgets.

What the chart shows is ``history`` (whole snapshots, surfaces included, for the replay; thinned in a long run)
and ``curve`` (a light state for every recorded step, which the loss, accuracy and gradient flow curves are
drawn from). Play starts a ``LiveRun`` from the model's current state; once it ends (Pause, divergence, the time
limit) ``settle`` makes its snapshots the history that Step continues from and the replay shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from autodiff_core.diagram import ParamTap
from autodiff_core.grading.remote_runs import PlaygroundRun, land
from autodiff_core.playground import Playground, PlaygroundConfig
from autodiff_core.recording import every_step_then_sparser
from autodiff_core.slow_step import slow_step

from .live_view import current_run, forget_run, keep_run, status_text
from .runner import LiveRun, current_session_id

KEY = "pg_session"
LESSON = "playground"
OPEN_ENDED = 100_000  # steps a Play may run: it goes until Pause (or the run's time limit)


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

    @classmethod
    def current(cls) -> PlaygroundSession | None:
        return st.session_state.get(KEY)

    @classmethod
    def for_config(cls, config: PlaygroundConfig) -> PlaygroundSession:
        """The session's playground: kept while data and model settings stay the same, rebuilt when they change.
        A rebuilt model drops the run and the history of the old one: they belong to other data. The class's own
        points are the exception: a point drawn or erased changes the data, and training goes on (``set_points``)."""
        session = cls.current()
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
        self.settled, self.settled_step = run.run_id, self.model.steps_done

    def play(self, speed: float | None) -> LiveRun:
        """Train on from the model's state, live, until Pause; the run carries the history on."""
        pg, tap = self.model, ParamTap(self.model)
        self.tap = tap
        run = LiveRun(LESSON, pg.config, lambda: tap.stream(every_step_then_sparser(pg.run, total=OPEN_ENDED)),
                      lambda s: s.step, speed=speed, lead=0.0, session_id=current_session_id(),
                      snapshots=list(self.history[:-1]), light=lambda s: s.light(),
                      trail=[s for s in self.curve if s.step < pg.steps_done],
                      remote=lambda worker: tap.stream(worker.train(PlaygroundRun(pg, OPEN_ENDED), pg.config,
                                                                    land=lambda state: land(pg, state))))
        return keep_run(LESSON, run.start())

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

    def set_weight(self, layer: int, target: int, source: int | None, value: float) -> None:
        """Set one parameter by hand; the model's new state replaces the history's state at this step."""
        if self.running():
            return
        self.model.set_weight(layer, target, source, value)
        snap = self.model.snapshot()
        self.new_history([s for s in self.history if s.step < snap.step] + [snap],
                         [s for s in self.curve if s.step < snap.step] + [snap.light()])

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
