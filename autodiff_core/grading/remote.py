"""A student's Function as an activation, computed in a sandboxed worker: the server never runs its code.

The server holds a ``StudentActivation``: the student's *source* and a handle on a worker process forked from
the sandbox's zygote (``sandbox.Sandbox.open``). Calling it runs ``StudentFunction``, a ``torch.autograd.Function``
whose forward sends the input to the worker and whose backward sends ``grad_output``; the worker compiled
the code itself, runs the student's forward and backward there and sends back plain numbers. So trainers,
snapshots, slow-motion steps and the weight editor use a student's Function exactly like ``MyReLU``, and
every call of the student's code happens in the worker, under the worker's limits.

What crosses the boundary, both ways, is data only: a tuple of an operation name, integers, a dtype name, a
shape and the tensor's raw bytes. The server reads the worker's answers with an unpickler that allows no
class at all, and checks each answer's dtype and shape against what it sent (an element-wise Function
returns its input's shape), so an answer can never be bigger than the question.
"""

from __future__ import annotations

import dataclasses
import itertools
import pickle
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator

import numpy as np
import torch

from ..functions import bind_student_activations
from ..playground import PlaygroundSnapshot
from ..two_layer import TwoLayerSnapshot
from .challenges import CHALLENGES
from .sandbox import Channel, Limits, SandboxError, shared_sandbox
from .validator import explain_error, load

DTYPES = {"float32": torch.float32, "float64": torch.float64}
KEPT_CALLS = 64  # forward calls whose ctx the worker keeps for their backward (oldest dropped first)
INTERACTIVE = Limits(cpu_seconds=60, memory_mb=512, wall_seconds=30 * 60)  # snapshots, Step, the editor
IDLE_SECONDS = 120  # an interactive worker nobody called for this long ends; the next call starts another
CALL_SECONDS = 10.0  # wall-clock seconds one call may take unless the run allows more


class StudentFunctionError(RuntimeError):
    """The student's Function failed or hit a limit; the message is one sentence for the student."""


def encode(t: torch.Tensor) -> tuple[str, tuple[int, ...], bytes]:
    name = str(t.dtype).removeprefix("torch.")
    if name not in DTYPES:
        raise StudentFunctionError(f"A Function from lesson 6 works in float32 or float64, not {name}.")
    return name, tuple(t.shape), t.detach().cpu().contiguous().numpy().tobytes()


def decode(dtype: str, shape: tuple[int, ...], data: bytes) -> torch.Tensor:
    if dtype not in DTYPES:
        raise StudentFunctionError("The sandbox sent back something it should not have.")
    return torch.frombuffer(bytearray(data), dtype=DTYPES[dtype]).reshape(shape)


class StudentFunction(torch.autograd.Function):
    """Forward and backward of a student's Function, each one round trip to its worker."""

    @staticmethod
    def forward(ctx, input, activation):
        keep = bool(ctx.needs_input_grad[0])
        call, out = activation.forward(input, keep)
        ctx.call = call  # when autograd frees this ctx, the worker may drop the call's own
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return ctx.call.backward(grad_output), None


class _Call:
    """One forward call whose ctx the worker keeps for its backward; dropped there once autograd frees it here."""

    def __init__(self, link: _Link, call_id: int) -> None:
        self.link, self.id = link, call_id

    def backward(self, grad_output: torch.Tensor) -> torch.Tensor:
        return self.link.backward(self.id, grad_output)

    def __del__(self) -> None:
        self.link.dropped.append(self.id)  # sent with the next request (no I/O from a finalizer)


class _Link:
    """The server's end of one worker: one call at a time, each checked on the way back."""

    def __init__(self, channel: Channel, call_seconds: float) -> None:
        self.channel, self.call_seconds = channel, call_seconds
        self.lock = threading.Lock()
        self.ids = itertools.count()
        self.dropped: list[int] = []

    def ask(self, message: tuple) -> tuple:
        with self.lock:
            dropped, self.dropped[:] = list(self.dropped), []
            try:
                answer = self.channel.call(pickle.dumps((dropped, *message)), timeout=self.call_seconds)
            except SandboxError as exc:
                raise StudentFunctionError(str(exc)) from None
        kind, *rest = answer
        if kind == "error":
            raise StudentFunctionError(str(rest[0]))
        return tuple(rest)

    def forward(self, input: torch.Tensor, keep: bool) -> tuple[_Call | None, torch.Tensor]:
        call_id = next(self.ids)
        dtype, shape, data = encode(input)
        out = self._tensor(self.ask(("forward", call_id, keep, dtype, shape, data)), input, "forward")
        return (_Call(self, call_id) if keep else None), out.to(input.device)

    def backward(self, call_id: int, grad_output: torch.Tensor) -> torch.Tensor:
        dtype, shape, data = encode(grad_output)
        return self._tensor(self.ask(("backward", call_id, dtype, shape, data)), grad_output,
                            "backward").to(grad_output.device)

    @staticmethod
    def _tensor(answer: tuple, like: torch.Tensor, what: str) -> torch.Tensor:
        dtype, shape, data = answer
        if dtype != str(like.dtype).removeprefix("torch.") or tuple(shape) != tuple(like.shape) \
                or len(data) != like.numel() * like.element_size():
            raise StudentFunctionError(f"Your {what} must return a tensor of its input's shape and dtype "
                                       f"({tuple(like.shape)}, {like.dtype}); it returned {tuple(shape)}, {dtype}.")
        return decode(dtype, tuple(shape), data)

    def train(self, trainer, config, land=None) -> Iterator:
        """``trainer(config)`` run whole in the worker (no round trip per call), its snapshots yielded here.
        The worker computes at most a batch ahead of what is read: ``BATCH`` snapshots or ``BATCH_SECONDS``.
        A trainer with a ``state()`` sends it with each batch: ``land(state)`` gets it just before the batch's
        last snapshot is handed on (the state is that snapshot's)."""
        self.ask(("train", 0, pickle.dumps((trainer, config))))
        while True:
            batch, done, state = self.ask(("next", 0, BATCH, BATCH_SECONDS))
            snaps = [_rebuild(kind, values) for kind, values in batch]
            for i, snap in enumerate(snaps):
                if land is not None and state is not None and i == len(snaps) - 1:
                    land(state)
                yield snap
            if done:
                if land is not None and state is not None and not snaps:
                    land(state)
                return

    def close(self) -> None:
        self.channel.close()


BATCH, BATCH_SECONDS = 256, 0.05
SNAPSHOTS = {"TwoLayerSnapshot": TwoLayerSnapshot, "PlaygroundSnapshot": PlaygroundSnapshot}  # what may come back
_PLAIN = (int, float, bool, str, type(None))
MAX_NUMBERS = 250 * 250  # a snapshot's numbers, its surface's included (the largest grid is 200 x 200)


def _rebuild(kind: str, values: tuple):
    """A snapshot from the worker's plain values, each checked: numbers, flags and text, tuples of them, and
    grids of numbers (a surface, sent as its bytes) only, and not too many."""
    cls = SNAPSHOTS.get(kind)
    if cls is None or not isinstance(values, tuple) or len(values) != len(dataclasses.fields(cls)):
        raise StudentFunctionError("The sandbox sent back something it should not have.")
    fields, numbers = [], 0
    for value in values:
        if isinstance(value, dict):  # {"grid": (rows, columns, float64 bytes)}
            rows, cols, data = value.get("grid", (0, 0, b""))
            if not (isinstance(rows, int) and isinstance(cols, int) and isinstance(data, bytes)
                    and len(data) == 8 * rows * cols):
                numbers = MAX_NUMBERS + 1
                break
            value = tuple(map(tuple, np.frombuffer(data, dtype=np.float64).reshape(rows, cols).tolist()))
            numbers += rows * cols
        elif isinstance(value, tuple) and all(isinstance(v, _PLAIN) for v in value):
            numbers += len(value)
        elif isinstance(value, _PLAIN):
            numbers += 1
        else:
            numbers = MAX_NUMBERS + 1
            break
        fields.append(value)
    if numbers > MAX_NUMBERS:
        raise StudentFunctionError("The sandbox sent back something it should not have.")
    return cls(*fields)


def plain_snapshot(snap) -> tuple[str, tuple]:
    """In the worker: a snapshot as plain values, a grid of numbers (a surface) as its bytes."""
    values = []
    for f in dataclasses.fields(snap):
        value = getattr(snap, f.name)
        if isinstance(value, (tuple, list)) and value and isinstance(value[0], (tuple, list)):
            grid = np.asarray(value, dtype=np.float64)
            value = {"grid": (grid.shape[0], grid.shape[1], grid.tobytes())}
        elif isinstance(value, list):
            value = tuple(value)
        values.append(value)
    return type(snap).__name__, tuple(values)


_RUN = threading.local()  # a training thread's own workers: activation name -> _Link


class StudentActivation:
    """A student's Function as a callable, ``act(x)``, that computes in a worker. One per session and name:
    nobody else's Function shares its worker, and closing the session's Functions ends their workers."""

    def __init__(self, name: str, source: str, challenge: str, *, cost: tuple[float, float] = (64.0, 2e-8)) -> None:
        self.name, self.source, self.challenge = name, source, challenge
        self.bytes_per_element, self.seconds_per_element = cost  # measured by the training-size check
        self._lock = threading.Lock()
        self._link: _Link | None = None

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return StudentFunction.apply(x, self)

    def __repr__(self) -> str:
        return f"<{self.name}>"

    def _current(self) -> _Link:
        link = getattr(_RUN, "links", {}).get(self.name)
        if link is not None:
            return link
        with self._lock:
            if self._link is None or self._link.channel.gone():
                self._link = self.open(INTERACTIVE, CALL_SECONDS, idle=IDLE_SECONDS)
            return self._link

    def forward(self, input: torch.Tensor, keep: bool):
        return self._current().forward(input, keep)

    def open(self, limits: Limits, call_seconds: float, idle: float | None = None) -> _Link:
        """A fresh worker for this Function under ``limits`` (its code compiled there, never here), which ends
        when no call came for ``idle`` seconds (None: when the server closes it)."""
        try:
            channel = shared_sandbox().open(serve, self.source, self.challenge, idle, limits=limits)
        except SandboxError as exc:
            raise StudentFunctionError(str(exc)) from None
        return _Link(channel, call_seconds)

    def close(self) -> None:
        with self._lock:
            if self._link is not None:
                self._link.close()
                self._link = None


def bind_run_workers(links: dict[str, _Link]) -> None:
    """Make the calling thread (a training run) use these workers for the named Functions."""
    _RUN.links = links


# ---- Inside the worker ----


def serve(conn, source: str, challenge: str, idle: float | None = None) -> None:
    """The worker's loop: compile the student's code here, then answer calls until the server hangs up or,
    with ``idle``, no call came for that many seconds."""
    fn = load(source, CHALLENGES[challenge].n_inputs)
    graphs: OrderedDict = OrderedDict()  # call id -> its ctx, kept for backward; "trainer" -> a run
    ahead = None  # a training run's next batch, computed while the server handles the one just sent
    while (request := conn.receive(idle)) is not None:
        dropped, op, call_id, *rest = pickle.loads(request)
        for d in dropped:
            graphs.pop(d, None)
        if op == "next" and ahead is not None:
            answer, ahead = ahead, None
        else:
            answer = _reply(conn, fn, graphs, op, call_id, rest)
        conn.send(pickle.dumps(answer))
        if op == "next" and answer[0] == "ok" and not answer[2]:  # the run goes on: its next batch now
            ahead = _reply(conn, fn, graphs, op, call_id, rest)


def _reply(conn, fn, graphs, op: str, call_id: int, rest: list) -> tuple:
    try:
        return ("ok", *_answer(fn, graphs, op, call_id, rest))
    except Exception as exc:  # the student's code raised: their line, never our stack
        if isinstance(exc, MemoryError) or "allocate memory" in str(exc):
            graphs.clear()
            return ("error", "Your Function needed more memory than this run allows "
                    f"({conn.limits.memory_mb} MB) at this size.")
        return ("error", "Your Function raised an error: " + explain_error(exc)[1])


def _answer(fn, graphs, op: str, call_id: int, rest: list) -> tuple:
    if op == "train":  # the trainer runs here whole, with the student's Function as its activation
        trainer, config = pickle.loads(rest[0])
        bind_student_activations({config.activation: fn.apply})
        graphs["trainer"] = (trainer, trainer(config))
        return ()
    if op == "next":
        limit, seconds = rest
        if "failed" in graphs:
            raise graphs.pop("failed")
        (trainer, stream), batch, t0 = graphs["trainer"], [], time.perf_counter()
        state = getattr(trainer, "state", lambda: None)
        try:
            for snap in stream:
                batch.append(plain_snapshot(snap))
                if len(batch) >= limit or time.perf_counter() - t0 > seconds:
                    return batch, False, state()
        except Exception as exc:
            if not batch:
                raise
            graphs["failed"] = exc  # the steps before it go first; the next batch is the failure
            return batch, False, state()
        return batch, True, state()
    if op == "forward":
        keep, dtype, shape, data = rest
        x, ctx = decode(dtype, shape, data), _Ctx(keep)
        with torch.no_grad():  # as autograd runs a forward
            y = fn.forward(ctx, x)
        if not isinstance(y, torch.Tensor):
            raise TypeError(f"forward returned {type(y).__name__}, not a tensor")
        if keep:
            graphs[call_id] = ctx
            while len(graphs) > KEPT_CALLS:
                graphs.pop(next(k for k in graphs if k not in ("trainer", "failed")))
        return encode(y)
    ctx = graphs.pop(call_id, None)
    if ctx is None:
        raise RuntimeError("this call's forward was dropped; run the step again")
    dtype, shape, data = rest
    with torch.no_grad():
        g = fn.backward(ctx, decode(dtype, shape, data))
    if isinstance(g, tuple) and len(g) == 1:
        g = g[0]
    if g is not None and not isinstance(g, torch.Tensor):
        raise TypeError(f"backward returned {type(g).__name__}, not a tensor")
    return encode(torch.zeros(shape, dtype=DTYPES[dtype]) if g is None else g)


class _Ctx:
    """What autograd hands a one-input Function's forward and backward, and all that the allow-list lets
    them use: ``save_for_backward``, ``saved_tensors``, ``needs_input_grad``. Calling the student's two methods
    with it is what autograd does for them, without building a graph in the worker for every call."""

    def __init__(self, needs_grad: bool) -> None:
        self.needs_input_grad = (needs_grad,)
        self.saved_tensors: tuple = ()

    def save_for_backward(self, *tensors) -> None:
        self.saved_tensors = tensors
