"""Where a ``Playground``'s training stands, as plain data: its weights and biases, its optimizer's state
(the momentum, or Adam's two averages and its step count), the order of its mini-batches and its step count.
Trained on from there, a model takes the very steps the original would have taken.

It travels two ways. A lesson 5 run computed in a sandboxed worker sends it back with each batch of snapshots
(``grading.remote_runs``); a student who presses "Try it yourself" while the teacher's run goes takes it from
the class store, as JSON (``shared_state`` on the teacher's side, ``go_on_from`` on the student's). Either way
it comes from elsewhere: it is numbers only (a dtype name, a shape, raw bytes), bounded in size, and checked
against the receiving model's own tensors before any of it is used. Nothing in it is ever run.

A student's own model is kept the same way across a reload in a class (``restore``, with its hand edits), beside
the numbers its curves are drawn from (``curve_rows``).
"""

from __future__ import annotations

import base64
import binascii
import math

import torch

from .devices import DTYPES
from .playground_config import MAX_DEPTH, OPTIMIZERS, PlaygroundConfig, PlaygroundSnapshot

# The optimizer's state for each parameter, by optimizer: what ``torch.optim`` keeps (nothing for plain SGD).
MOMENTS = {"Adam": ("exp_avg", "exp_avg_sq", "step"), "SGD + momentum": ("momentum_buffer",), "SGD (by hand)": ()}
assert set(MOMENTS) == set(OPTIMIZERS)
MAX_BYTES = 4 * 2**20  # raw bytes of one state's tensors: every network lesson 5 can build fits (about 0.5 MB)
MAX_DIM = 10_000  # rows or columns of one tensor
MAX_PARAMS = 2 * (MAX_DEPTH + 1)  # a weight and a bias per layer
_GENERATOR_BYTES = torch.Generator().get_state().numel()  # a CPU generator's state (mt19937)

Tensor = tuple[str, tuple[int, ...], bytes]  # dtype name, shape, raw bytes (little-endian, C order)


def encode(t: torch.Tensor) -> Tensor:
    name = str(t.dtype).removeprefix("torch.")
    if name not in DTYPES:
        raise ValueError(f"a playground's state is float32 or float64, not {name}.")
    return name, tuple(t.shape), t.detach().cpu().contiguous().numpy().tobytes()


def _decode(value, like: torch.Tensor | None = None) -> torch.Tensor:
    """``value`` (an encoded tensor) as a tensor, after checking it: a float dtype, bytes that fill its shape, and
    ``like``'s dtype and shape when given."""
    dtype, shape, data = value
    shape = tuple(shape)
    if dtype not in DTYPES or not isinstance(data, bytes) or not all(type(n) is int and 0 <= n <= MAX_DIM
                                                                     for n in shape) or len(shape) > 2:
        raise ValueError("a tensor of another kind")
    if like is not None and (DTYPES[dtype] != like.dtype or shape != tuple(like.shape)):
        raise ValueError("a tensor of another shape")
    if len(data) != math.prod(shape) * DTYPES[dtype].itemsize:
        raise ValueError("a tensor whose bytes do not fill its shape")
    return torch.frombuffer(bytearray(data), dtype=DTYPES[dtype]).reshape(shape) if data else \
        torch.zeros(shape, dtype=DTYPES[dtype])


def training_state(pg) -> tuple:
    """Where ``pg`` stands now: (params, optimizer, batches, steps, grad_norms), tensors encoded. Read it while
    nothing trains ``pg`` (between steps, or at a trainer's ``yield``)."""
    params = tuple(encode(p.detach()) for p in pg.params)
    optimizer = () if pg.optimizer is None else tuple(
        tuple(sorted((k, encode(v) if isinstance(v, torch.Tensor) else float(v)) for k, v in s.items()))
        for s in (pg.optimizer.state.get(p, {}) for p in pg.params))
    batches = bytes(pg.batches.get_state().numpy().tobytes())
    return params, optimizer, batches, int(pg.steps_done), encode(pg.grad_norms.detach())


def _moments(pg, p: torch.Tensor, entries) -> dict:
    """One parameter's optimizer state, checked: the optimizer's own keys, each a tensor of ``p``'s shape (or, for
    Adam's step count, one number). Adam's state is whole or absent: a step needs all three."""
    found = {}
    for key, value in entries:
        if key not in MOMENTS[pg.config.optimizer] or key in found:
            raise ValueError("an optimizer state of another optimizer")
        if key == "step":
            step = value if isinstance(value, float) else _decode(value)
            if isinstance(step, torch.Tensor) and (step.numel() != 1 or step.dim() != 0):
                raise ValueError("a step count that is not one number")
            if not 0 <= float(step) < 2**31:
                raise ValueError("a step count out of range")
            found[key] = step
        else:
            found[key] = _decode(value, p)
    if found and len(found) != len(MOMENTS[pg.config.optimizer]):
        raise ValueError("an optimizer state with parts missing")
    return found


def _checked(pg, state, forward_only: bool) -> tuple:
    try:
        params, optimizer, batches, steps, grad_norms = state
        if len(params) != len(pg.params) or pg.optimizer is not None and len(optimizer) != len(pg.params):
            raise ValueError("a state of another network")
        new = [_decode(value, p) for p, value in zip(pg.params, params, strict=True)]
        moments = [] if pg.optimizer is None else [_moments(pg, p, entries)
                                                   for p, entries in zip(pg.params, optimizer, strict=True)]
        norms = _decode(grad_norms, pg.grad_norms)
        if not isinstance(batches, bytes) or len(batches) != _GENERATOR_BYTES:
            raise ValueError("a batch order of another kind")
        generator = torch.frombuffer(bytearray(batches), dtype=torch.uint8)
        if type(steps) is not int or not 0 <= steps < 2**31 or (forward_only and steps < pg.steps_done):
            raise ValueError("a step count out of range")
    except TypeError as exc:
        raise ValueError("a state of another shape") from exc
    return new, moments, generator, steps, norms


def land(pg, state: tuple, *, forward_only: bool = True) -> None:
    """Write ``state`` (``training_state`` of a model with ``pg``'s settings) into ``pg``, in place: the optimizer
    holds these very Parameters. Anything that does not fit ``pg``'s own tensors raises ValueError, and nothing
    changes. ``forward_only``: a state behind ``pg``'s own step is refused too (a worker never goes back)."""
    new, moments, generator, steps, norms = _checked(pg, state, forward_only)
    _write(pg, new, moments, generator, steps, norms)


def _write(pg, new, moments, generator, steps, norms) -> None:
    with torch.no_grad():
        for p, value in zip(pg.params, new, strict=True):
            p.copy_(value)
    for p, entries in zip(pg.params, moments, strict=False):  # no moments: plain SGD
        if entries:
            pg.optimizer.state[p] = {k: v.to(p.device) if isinstance(v, torch.Tensor) and k != "step" else v
                                     for k, v in entries.items()}
    pg.batches.set_state(generator)
    pg.steps_done, pg.grad_norms = steps, norms.to(pg.grad_norms.device)


# ---- as JSON, for the class store ----

def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text) -> bytes:
    if not isinstance(text, str) or len(text) > MAX_BYTES * 4 // 3 + 4:
        raise ValueError("bytes of another kind")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError("bytes of another kind") from exc


def _plain_tensor(value: Tensor) -> list:
    dtype, shape, data = value
    return [dtype, list(shape), _b64(data)]


def _tensor(value) -> Tensor:
    if not (isinstance(value, list) and len(value) == 3 and isinstance(value[0], str) and isinstance(value[1], list)
            and len(value[1]) <= 2 and isinstance(value[2], str)):
        raise ValueError("a tensor of another kind")
    return value[0], tuple(value[1]), _unb64(value[2])


def to_plain(state: tuple) -> dict:
    """``training_state(pg)`` as JSON-ready data: tensors as [dtype, shape, base64 of their bytes]."""
    params, optimizer, batches, steps, grad_norms = state
    return {"params": [_plain_tensor(p) for p in params],
            "optimizer": [[[k, v if isinstance(v, float) else _plain_tensor(v)] for k, v in entries]
                          for entries in optimizer],
            "batches": _b64(batches), "steps": steps, "grad_norms": _plain_tensor(grad_norms)}


def from_plain(data) -> tuple:
    """``to_plain``'s data (read from JSON) back as a state ``land`` checks. Its form and size are checked first:
    ValueError for anything else, or for a state whose tensors together hold over ``MAX_BYTES``."""
    if not isinstance(data, dict) or not isinstance(data.get("params"), list) or not isinstance(
            data.get("optimizer"), list) or not 1 <= len(data["params"]) <= MAX_PARAMS or len(
            data["optimizer"]) > MAX_PARAMS:
        raise ValueError("a state of another kind")
    entries = data["optimizer"]
    if not all(isinstance(e, list) and len(e) <= 3 and all(isinstance(kv, list) and len(kv) == 2 and isinstance(
            kv[0], str) for kv in e) for e in entries):
        raise ValueError("an optimizer state of another kind")
    tensors = [*data["params"], *(v for e in entries for _, v in e if type(v) not in (int, float))]
    if sum(len(t[2]) for t in tensors if isinstance(t, list) and len(t) == 3 and isinstance(t[2], str)) \
            > MAX_BYTES * 4 // 3 + 4 * len(tensors):  # base64: 4 characters for 3 bytes
        raise ValueError(f"a state over {MAX_BYTES // 2**20} MB")
    params = tuple(_tensor(p) for p in data["params"])
    optimizer = tuple(tuple((k, float(v) if type(v) in (int, float) else _tensor(v)) for k, v in e) for e in entries)
    return params, optimizer, _unb64(data.get("batches")), data.get("steps"), _tensor(data.get("grad_norms"))


# ---- a teacher's run, gone on from by a student ----

def model_id(config: PlaygroundConfig) -> list:
    """What must be the same for one model to go on from another's state: the data, the network, its dtype and the
    optimizer (as JSON gives them back). Not the device (weights are numbers wherever they trained), nor the seed
    of the initial weights and the batch order (the state replaces both)."""
    c = config
    return [c.dataset, c.n_per_class, c.noise, c.test_fraction, c.data_seed, list(c.features), list(c.hidden),
            c.activation, c.dtype, c.optimizer]


def shared_state(pg) -> dict:
    """Where ``pg`` stands, as JSON-ready data another model of its settings can go on from (``go_on_from``) or
    be put back to (``restore``): with its hand edits and the step of a state it went on from, for its export."""
    return {"step": int(pg.steps_done), "model": model_id(pg.config), "state": to_plain(training_state(pg)),
            "edits": [list(e) for e in pg.edits], "forked_at": pg.forked_at}


def go_on_from(pg, shared) -> int:
    """Set ``pg`` to ``shared`` (``shared_state`` of a model with the same settings, read from elsewhere): its
    weights, optimizer state, batch order and step. Returns the step. ValueError, in words, when it does not fit
    ``pg``; then ``pg`` is as it was."""
    _put(pg, shared, "The teacher's")
    pg.forked_at = pg.steps_done  # an exported script starts at step 0: it cannot start from here
    return pg.steps_done


def restore(pg, kept) -> int:
    """Put ``pg`` back where a model of its settings stood (``shared_state``, kept across a reload): also its hand
    edits and the step it went on from, if it did. Returns the step; ValueError as ``go_on_from``."""
    edits, forked_at = _put(pg, kept, "Your kept")
    pg.edits, pg.forked_at = edits, forked_at
    return pg.steps_done


def _put(pg, shared, whose: str) -> tuple[list, int | None]:
    if not isinstance(shared, dict) or shared.get("model") != model_id(pg.config):
        raise ValueError(f"{whose} run was trained with other data, another network or another optimizer.")
    try:
        state = from_plain(shared.get("state"))
        before = pg.steps_done
        pg.steps_done = 0  # any step is ahead of a reset model
        try:
            checked = _checked(pg, state, forward_only=False)
        finally:
            pg.steps_done = before
        if not all(bool(t.isfinite().all()) for t in checked[0]):
            raise ValueError("weights that are no longer finite")
        edits, forked_at = _edits(pg, shared.get("edits", []), checked[3]), shared.get("forked_at")
        if forked_at is not None and (type(forked_at) is not int or not 0 <= forked_at <= checked[3]):
            raise ValueError("a step it went on from out of range")
    except ValueError as exc:
        raise ValueError(f"{whose} state could not be used ({exc}).") from exc
    pg.reset()  # a fresh optimizer; then every parameter and moment is the state's
    _write(pg, *checked)
    return edits, forked_at


MAX_EDITS = 1_000


def _edits(pg, given, steps: int) -> list[tuple]:
    """Hand edits (``Playground.edits``) read from elsewhere: each a step, a layer, a neuron and its input (or None
    for its bias) within ``pg``'s network, and a value ``set_weight`` accepts."""
    if not isinstance(given, list) or len(given) > MAX_EDITS:
        raise ValueError("hand edits of another kind")
    edits = []
    for e in given:
        if not (isinstance(e, list) and len(e) == 5 and all(type(v) is int for v in e[:3])
                and (e[3] is None or type(e[3]) is int) and type(e[4]) in (int, float)):
            raise ValueError("a hand edit of another kind")
        done, layer, target, source, value = e
        if not (0 <= done <= steps and 0 <= layer < len(pg.model.layers) and math.isfinite(value)
                and abs(value) <= 1e6):
            raise ValueError("a hand edit out of range")
        out, inputs = pg.model.layers[layer].weight.shape
        if not 0 <= target < out or source is not None and not 0 <= source < inputs:
            raise ValueError("a hand edit out of range")
        edits.append((done, layer, target, source, float(value)))
    return edits


# ---- a run's curves, kept across a reload ----

MAX_CURVE = 10_000  # rows
_CURVE_FLOATS = ("train_loss", "test_loss", "train_accuracy", "test_accuracy")


def _number(v) -> float | None:
    return v if math.isfinite(v) else None  # strict JSON has no NaN


def curve_rows(snaps) -> list[list]:
    """The numbers of ``snaps`` their curves are drawn from (``PlaygroundSnapshot.light``), a row each."""
    return [[s.step, *(_number(float(getattr(s, f))) for f in _CURVE_FLOATS), bool(s.diverged),
             [_number(v) for v in s.grad_norms], [_number(v) for v in s.dead]] for s in snaps]


def from_curve_rows(rows) -> list[PlaygroundSnapshot]:
    """``curve_rows`` read back from elsewhere, checked: ValueError for anything else."""
    if not isinstance(rows, list) or len(rows) > MAX_CURVE:
        raise ValueError("curves of another kind")
    snaps = []
    for row in rows:
        if not (isinstance(row, list) and len(row) == 8 and type(row[0]) is int and 0 <= row[0] < 2**31
                and all(v is None or type(v) in (int, float) for v in row[1:5]) and type(row[5]) is bool
                and all(isinstance(x, list) and len(x) <= MAX_DEPTH + 1 and all(
                    v is None or type(v) in (int, float) for v in x) for x in row[6:])):
            raise ValueError("a curve's point of another kind")
        floats = [math.nan if v is None else float(v) for v in row[1:5]]
        snaps.append(PlaygroundSnapshot(row[0], *floats, (), diverged=row[5],
                                        grad_norms=tuple(math.nan if v is None else float(v) for v in row[6]),
                                        dead=tuple(math.nan if v is None else float(v) for v in row[7])))
    return snaps
