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

import torch

from ..functions import get_activation
from ..recording import every_step_then_sparser
from .remote import StudentFunctionError, decode, encode


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
        pg = self.pg
        params = tuple(encode(p.detach()) for p in pg.params)
        optimizer = () if pg.optimizer is None else tuple(
            tuple(sorted((k, encode(v) if isinstance(v, torch.Tensor) else float(v)) for k, v in s.items()))
            for s in (pg.optimizer.state.get(p, {}) for p in pg.params))
        batches = bytes(pg.batches.get_state().numpy().tobytes())
        return params, optimizer, batches, int(pg.steps_done), encode(pg.grad_norms.detach())


def land(pg, state: tuple) -> None:
    """Write a worker's ``PlaygroundRun.state()`` into the server's Playground, in place (the optimizer holds
    these very Parameters); anything that does not fit the server's own model is refused, and nothing changes."""
    try:
        params, optimizer, batches, steps, grad_norms = state
        new = [_like(p, value) for p, value in zip(pg.params, params, strict=True)]
        moments = [] if pg.optimizer is None else [{k: _moment(p, v) for k, v in entries}
                                                   for p, entries in zip(pg.params, optimizer, strict=True)]
        norms = _like(pg.grad_norms, grad_norms)
        generator = torch.frombuffer(bytearray(batches), dtype=torch.uint8)
        if not isinstance(steps, int) or steps < pg.steps_done or generator.numel() != pg.batches.get_state().numel():
            raise ValueError("steps or batch order")
    except (TypeError, ValueError) as exc:
        raise StudentFunctionError("The sandbox sent back a model that is not this one; the run was stopped.") \
            from exc
    with torch.no_grad():
        for p, value in zip(pg.params, new, strict=True):
            p.copy_(value)
    for p, entries in zip(pg.params, moments, strict=False):  # no moments: plain SGD
        if entries:
            pg.optimizer.state[p] = {k: v.to(p.device) if isinstance(v, torch.Tensor) else v
                                     for k, v in entries.items()}
    pg.batches.set_state(generator)
    pg.steps_done, pg.grad_norms = steps, norms.to(pg.grad_norms.device)


def _moment(p: torch.Tensor, value):
    """One entry of the optimizer's state for ``p``: a tensor of its shape (momentum, Adam's averages), a 0-d
    tensor (Adam's step count), or a number."""
    if isinstance(value, float):
        return value
    if isinstance(value, tuple) and len(value) == 3 and tuple(value[1]) == ():
        return decode(*_checked_scalar(value))
    return _like(p, value)


def _checked_scalar(value) -> tuple:
    dtype, shape, data = value
    if not isinstance(data, bytes) or len(data) > 8:
        raise ValueError("scalar")
    return dtype, (), data


def _like(t: torch.Tensor, value) -> torch.Tensor:
    dtype, shape, data = value
    if dtype != str(t.dtype).removeprefix("torch.") or tuple(shape) != tuple(t.shape) \
            or len(data) != t.numel() * t.element_size():
        raise ValueError("shape")
    return decode(dtype, tuple(shape), data)
