"""Lesson 5's run, whole in a sandboxed worker, when its activation is a student's Function.

Sent one round trip a call (``remote.StudentFunction``), a small MLP pays the trip several times a step. So the
run goes to the worker instead: the ``Playground`` itself, pickled without its activation (the worker compiled
the student's code and puts its own in), trains there, and sends back its snapshots and, with each batch of
them, the state the model is then in (weights, optimizer, batch order, steps), which ``land`` writes into the
server's ``Playground`` in place. So when the run ends or is paused, Step, the weight editor and the export go
on from exactly the step on screen. Everything that comes back is plain data, checked against the server's
own tensors before any is used.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator

from ..functions import get_activation
from ..playground_state import land as write_state
from ..playground_state import training_state
from ..recording import every_step_then_sparser
from .remote import StudentFunctionError


class PlaygroundRun:
    """``every_step_then_sparser(pg.run, total)``, to run in the worker: call it there with the config."""

    def __init__(self, pg, total: int) -> None:
        act = pg.model.act
        pg.model.act = None  # the server's proxy stays here; the worker uses the code it compiled
        try:
            self.blob = pickle.dumps(pg)
        finally:
            pg.model.act = act
        self.total = total
        self.pg = None

    def __getstate__(self) -> dict:
        return {"blob": self.blob, "total": self.total, "pg": None}

    def __call__(self, config) -> Iterator:
        """In the worker: the run's snapshots, the model paused at each one's step while it is handed on."""
        self.pg = pickle.loads(self.blob)
        self.pg.model.act = get_activation(config.activation)
        return every_step_then_sparser(self.pg.run, total=self.total)

    def state(self) -> tuple:
        """In the worker: where the model is now, as plain data (see ``land``)."""
        return training_state(self.pg)


def land(pg, state: tuple) -> None:
    """Write a worker's ``PlaygroundRun.state()`` into the server's Playground, in place (the optimizer holds
    these very Parameters); anything that does not fit the server's own model is refused, and nothing changes."""
    try:
        write_state(pg, state)
    except ValueError as exc:
        raise StudentFunctionError("The sandbox sent back a model that is not this one; the run was stopped.") \
            from exc
