"""The bound ``grading/guard.py`` documents: no tensor a student's Function builds has more elements than the
largest tensor it is handed. Every aten operation is recorded below the guards (a TorchDispatchMode sees
what is really allocated), for hostile payloads and for a few hundred random programs drawn from the
allowed grammar, at the sizes the lessons use; each either runs within the bound or stops with an error a
student can read (refused with its line, or raised at run time with its line)."""

from __future__ import annotations

import random
import textwrap

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from autodiff_core.grading import guard, validator
from autodiff_core.grading.challenges import CHALLENGES
from autodiff_core.grading.validator import Refused, explain_error, load, validate

SHAPES = [((8,), torch.float64), ((64, 100), torch.float32), ((256, 8), torch.float32), ((32, 1), torch.float32)]
# gradcheck's points; lesson 2 and 5's hidden layers; a layer one unit wide, where broadcasting a masked
# selection (k,) against (N, 1) would build (N, k)


class Largest(TorchDispatchMode):
    """Records the most elements any operation's result had (everything torch really computed)."""

    def __init__(self) -> None:
        super().__init__()
        self.numel, self.op = 0, None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, tuple | list) else (out,):
            if isinstance(t, torch.Tensor) and t.numel() > self.numel:
                self.numel, self.op = t.numel(), str(func)
        return out


def run(fn, shape, dtype, seed: int = 0):
    """Forward and backward of ``fn`` at one size under the recorder: (largest numel, error or None)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, dtype=dtype, generator=g).requires_grad_()
    largest = Largest()
    error = None
    with largest:
        try:
            y = fn.apply(x)
            outs = [t for t in (y if isinstance(y, tuple) else (y,)) if isinstance(t, torch.Tensor)]
            for t in outs:
                assert t.numel() <= x.numel()
            outs = [t for t in outs if t.requires_grad]
            if outs:
                grads = torch.autograd.grad(outs, x, [torch.randn(t.shape, dtype=t.dtype, generator=g) for t in outs],
                                            allow_unused=True)
                assert grads[0] is None or grads[0].shape == x.shape
        except AssertionError:
            raise
        except Exception as exc:  # the student's code raised: it must say so in words
            error = exc
    return largest, error


def assert_readable(exc: BaseException) -> tuple[int | None, str]:
    line, text = explain_error(exc)
    assert 10 < len(text) < 500, text
    assert "Traceback" not in text and 'File "' not in text and "autodiff_core" not in text, text
    if isinstance(exc, validator.Blocked):
        assert line is not None and text.startswith(f"Line {line}: "), text
    return line, text


def assert_bounded(source: str) -> list:
    """Refused with a line, or within the bound at every size; returns the errors raised at run time."""
    try:
        fn = load(source)
    except Refused as exc:
        assert exc.line is not None or "lines" in exc.message or "class" in exc.message, exc.message
        return [exc]
    errors = []
    for shape, dtype in SHAPES:
        largest, error = run(fn, shape, dtype)
        n = torch.Size(shape).numel()
        assert largest.numel <= n, f"{largest.op} built {largest.numel:,} elements from {n:,}\n{source}"
        if error is not None:
            assert_readable(error)
            errors.append(error)
    return errors


def function(forward: str, backward: str = "(input,) = ctx.saved_tensors\nreturn grad_output * (input > 0)",
             save: str = "ctx.save_for_backward(input)") -> str:
    body = lambda code: textwrap.indent(textwrap.dedent(code).strip("\n"), " " * 8)  # noqa: E731
    return (f"class MyFunction(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, input):\n"
            f"{body(save)}\n{body(forward)}\n\n"
            f"    @staticmethod\n    def backward(ctx, grad_output):\n{body(backward)}\n")


# ---- the hostile payloads, one by one ----

GATHER = function("idx = torch.where(input > 0, -False, -False)\ny = input[idx]\nz = y[idx]\nreturn input.clamp(min=0)")


def test_minus_false_is_a_float_so_where_builds_no_integer_tensor():
    fn = load(function("return torch.where(input > 0, -False, -False)"))
    y = fn.apply(torch.randn(64, 100))
    assert y.dtype == torch.float32 and y.shape == (64, 100) and str(y[0, 0].item()) == "-0.0"


def test_the_gather_payload_stops_at_its_first_index_with_its_line():
    """`input[idx]` with idx (64, 100) of zeros built (64, 100, 100), and `y[idx]` (64, 100, 100, 100): 256 MB
    a call at a training size, while gradcheck's 8 points grew nothing. Now the index must be a mask."""
    (error, *_) = assert_bounded(GATHER)
    line, text = assert_readable(error)
    assert isinstance(error, validator.Blocked) and line == 6
    assert "mask of its own shape" in text and "float32 tensor of shape" in text


@pytest.mark.parametrize("index", ["torch.where(input > 0, 0, 1)", "input[input > 0] > 0", "(input > 0)[input > 0]"])
def test_a_mask_of_another_shape_or_kind_is_refused_at_run_time(index):
    errors = assert_bounded(function(f"m = {index}\ny = input[m]\nreturn input.clamp(min=0)"))
    assert all(isinstance(e, validator.Blocked | RuntimeError | TypeError) for e in errors)
    blocked = [e for e in errors if isinstance(e, validator.Blocked)]
    assert blocked and all(explain_error(e)[0] == 6 for e in blocked)


def test_a_whole_number_indexes_tuples_not_tensors():
    (error, *_) = assert_bounded(function("y = input[0]\nreturn input.clamp(min=0)"))
    assert isinstance(error, validator.Blocked) and "mask of its own shape" in str(error)
    fn = load(function("return input.clamp(min=0)", backward="s = ctx.saved_tensors\nreturn grad_output * (s[0] > 0)"))
    assert run(fn, (8,), torch.float64)[1] is None


def test_tilde_takes_a_tensor_only():
    (error, *_) = assert_bounded(function("k = ctx.needs_input_grad[0]\ny = ~k\nreturn input.clamp(min=0)"))
    assert isinstance(error, validator.Blocked) and "`~` flips a mask tensor" in str(error)
    assert explain_error(error)[0] == 6
    fn = load(function("return torch.where(~(input < 0), input, 0.0)"))
    assert run(fn, (64, 100), torch.float32)[1] is None


def test_a_tuple_cannot_be_doubled_into_a_huge_one():
    error = assert_bounded(function("t = (input,)\n" + "t = t + t\n" * 40 + "return input.clamp(min=0)"))[0]
    assert isinstance(error, validator.Blocked) and "not on a tuple" in str(error)


def test_and_or_keep_a_bool_yet_refuse_a_tuple():
    """`&` and `|` leave a Python bool as it is (a mask combines with it); a tuple is refused as in arithmetic."""
    fn = load(function("return input * (~(input < 0) & ctx.needs_input_grad[0] | False)"))
    assert run(fn, (64, 100), torch.float32)[1] is None
    for code in ("t = ctx.saved_tensors & True", "t = ctx.needs_input_grad | ctx.needs_input_grad"):
        (error, *_) = assert_bounded(function(f"{code}\nreturn input.clamp(min=0)"))
        assert isinstance(error, validator.Blocked) and "not on a tuple" in str(error) and explain_error(error)[0] == 5


def test_one_argument_where_and_carriage_return_lines_are_refused_before_running():
    with pytest.raises(Refused) as caught:
        validate(function("i = torch.where(input > 0)\ny = input[i]\nreturn input.clamp(min=0)"))
    assert caught.value.line == 5 and "three arguments" in caught.value.message
    with pytest.raises(Refused, match="more than"):
        validate(function("return input.clamp(min=0)").replace("\n", "\r") + "\r" * 200)


BROADCASTS = {  # a masked selection (k,) against (N, 1): each would build (N, k)
    "product": "y = input * col",
    "comparison": "y = input < col",
    "maximum": "y = torch.maximum(input, col)",
    "pow": "y = torch.pow(input, col)",
    "clamp with a tensor bound": "y = input.clamp(min=col)",
    "where": "y = torch.where(input > 0, col, input)",
    "mask and": "y = (input > 0) & (col > 0)",
    "in place": "y = input.clone()\ny += col",
}


@pytest.mark.parametrize("name", list(BROADCASTS))
def test_broadcasting_to_a_larger_tensor_stops_before_it_is_built(name):
    source = function(f"col = input[input == input]\n{BROADCASTS[name]}\nreturn input.clamp(min=0)")
    errors = assert_bounded(source)
    blocked = [e for e in errors if isinstance(e, validator.Blocked)]
    assert blocked and "larger than its input" in str(blocked[0]) and explain_error(blocked[0])[0] >= 6


def test_saved_tensors_of_another_shape_cannot_grow_the_backward():
    source = function("return input.clamp(min=0)", save="ctx.save_for_backward(input, input[input > 0])",
                      backward="(input, picked) = ctx.saved_tensors\nreturn grad_output * (input > 0) * picked")
    errors = assert_bounded(source)
    assert any(isinstance(e, validator.Blocked) and "larger than its input" in str(e) for e in errors)


def test_without_the_guard_the_recorder_sees_the_growth(monkeypatch):
    """The recorder is not blind: with the guard off, the (N, 1) broadcast builds (N, N)."""
    monkeypatch.setattr(guard._Bounded, "__torch_function__",
                        lambda self, func, types, args=(), kwargs=None: func(*args, **(kwargs or {})))
    fn = load(function(f"col = input[input == input]\n{BROADCASTS['product']}\nreturn input.clamp(min=0)"))
    largest, error = run(fn, (32, 1), torch.float32)
    assert error is None and largest.numel == 32 * 32


@pytest.mark.parametrize("key", list(CHALLENGES))
def test_every_reference_solution_keeps_within_the_bound(key):
    c = CHALLENGES[key]
    fn = load(c.solution, c.n_inputs)
    for shape, dtype in SHAPES:
        xs = [torch.randn(shape, dtype=dtype).requires_grad_() for _ in range(c.n_inputs)]
        with Largest() as largest:
            y = fn.apply(*xs)
            torch.autograd.grad(y, xs, torch.randn_like(y))
        assert largest.numel <= torch.Size(shape).numel() and y.shape == shape


# ---- random programs from the allowed grammar ----

UNARY = ["exp", "log", "sigmoid", "tanh", "abs", "sign", "sqrt", "sin", "cos", "zeros_like", "ones_like", "clone"]
METHODS = ["clone", "exp", "sigmoid", "tanh", "abs", "sign", "sin", "cos"]
CONSTANTS = ["0", "1", "2", "0.5", "-1", "1e-3", "3.0", "True", "False", "None", "-False", "+True"]


class Programs:
    """Draws Functions from the grammar the validator allows, with a bias towards code that runs."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def pick(self, *options):
        return self.rng.choice(options)

    def expr(self, names: list[str], depth: int) -> str:
        if depth <= 0 or self.rng.random() < 0.25:
            return self.leaf(names)
        e = lambda: self.expr(names, depth - 1)  # noqa: E731
        m = lambda: self.mask(names, depth - 1)  # noqa: E731
        n = lambda: self.pick(*names)  # noqa: E731
        return self.pick(
            lambda: f"({e()} {self.pick('+', '-', '*', '/')} {e()})",
            lambda: f"({e()} {self.pick('+', '-', '*', '/')} {e()})",
            lambda: f"({m()} {self.pick('&', '|')} {m()})",
            lambda: f"({e()}) ** {self.pick('2', '3', '-1', '0.5')}",
            lambda: f"{self.pick('-', '+')}({e()})",
            lambda: f"~{m()}",
            lambda: f"(not {self.condition(names)})",
            lambda: m(),
            lambda: f"torch.{self.pick(*UNARY)}({e()})",
            lambda: f"torch.{self.pick(*UNARY)}({e()})",
            lambda: f"{n()}.{self.pick(*METHODS)}()",
            lambda: f"torch.where({m()}, {e()}, {e()})",
            lambda: f"torch.where({m()}, {e()}, {e()})",
            lambda: f"torch.{self.pick('maximum', 'minimum', 'pow')}({e()}, {e()})",
            lambda: f"torch.clamp({e()}, {e()}, {e()})",
            lambda: f"{n()}.clamp(min={e()})",
            lambda: f"{n()}.clamp(max={e()}, min={e()})",
            lambda: f"{n()}.{self.pick('maximum', 'minimum', 'pow')}({e()})",
            lambda: f"{n()}[{m()}]" if self.rng.random() < 0.8 else f"{n()}[{self.pick('0', '-1', '1')}]",
            lambda: f"({e()} if {self.condition(names)} else {e()})",
            lambda: f"({self.condition(names)} {self.pick('and', 'or')} {e()})",
            lambda: self.pick(f"torch.where({m()})", f"{n()}[True]", "~False", f"{n()}[-1.5]"),  # refused
        )()

    def mask(self, names: list[str], depth: int) -> str:
        e = lambda: self.expr(names, depth - 1) if depth > 0 else self.leaf(names)  # noqa: E731
        return self.pick(
            lambda: f"({e()} {self.pick('<', '<=', '>', '>=', '==', '!=')} {e()})",
            lambda: f"({self.pick(*names)} {self.pick('<', '>')} {self.pick('0', '-1', '0.5')})",
            lambda: f"({self.pick(*names)} {self.pick('<', '>')} {self.pick('0', '-1', '0.5')})",
            lambda: f"~({self.pick(*names)} < 0)",
        )() if self.rng.random() < 0.95 else "ctx.needs_input_grad[0]"

    def condition(self, names: list[str]) -> str:
        """Mostly what `if` can test (a bool); now and then a tensor mask, which `if` cannot."""
        return "ctx.needs_input_grad[0]" if self.rng.random() < 0.8 else self.mask(names, 0)

    def leaf(self, names: list[str]) -> str:
        return self.pick(*names) if self.rng.random() < 0.75 else self.pick(*CONSTANTS)

    def statement(self, names: list[str], target: str, depth: int) -> str:
        e = lambda: self.expr(names, depth)  # noqa: E731
        return self.pick(
            lambda: f"{target} = {e()}",
            lambda: f"{target} = {e()}",
            lambda: self.masked(names, target, "= " + self.pick(*CONSTANTS[:7])),
            lambda: self.masked(names, target, "= " + self.pick(*names) + "[{mask}]"),
            lambda: self.masked(names, target, self.pick("*= ", "+= ", "-= ") + self.leaf(names)),
            lambda: f"{target} = {e()}\n{target} {self.pick('+=', '-=', '*=', '/=')} {e()}",
            lambda: f"if {self.condition(names)}:\n    {target} = {e()}\nelse:\n    {target} = {e()}",
            lambda: f"{target} = ({self.pick(*names)}, {e()})\n{target} = {target}[{self.pick('0', '1', '-1')}]",
        )()

    def masked(self, names: list[str], target: str, assign: str) -> str:
        mask = self.mask(names, 1)
        return f"{target} = {self.pick(*names)}.clone()\n{target}[{mask}] {assign.format(mask=mask)}"

    def body(self, names: list[str], prefix: str, depth: int) -> tuple[list[str], list[str]]:
        lines, names = [], list(names)
        for i in range(self.rng.randint(0, 4)):
            lines.append(self.statement(names, f"{prefix}{i}", depth))
            names.append(f"{prefix}{i}")
        return lines, names

    def program(self) -> str:
        depth = self.rng.randint(1, 3)
        lines, names = self.body(["input"], "v", depth)
        forward = [*lines, f"ctx.save_for_backward(input, {self.pick(*names)})", f"return {self.expr(names, depth)}"]
        back_lines, back_names = self.body(["grad_output", "input", "saved"], "w", depth)
        backward = ["(input, saved) = ctx.saved_tensors", *back_lines,
                    f"return grad_output * {self.expr(back_names, depth)}"]
        return function("\n".join(forward), "\n".join(backward), save="")


N_PROGRAMS = 300


def test_random_programs_stay_within_the_bound_or_stop_in_words():
    rng = random.Random(20240601)
    draw = Programs(rng)
    outcomes = {"refused": 0, "blocked": 0, "raised": 0, "ran": 0}
    for _ in range(N_PROGRAMS):
        source = draw.program()
        try:
            validate(source)
        except Refused as exc:
            assert exc.line is not None, (exc.message, source)
            outcomes["refused"] += 1
            continue
        errors = assert_bounded(source)
        if not errors:
            outcomes["ran"] += 1
        elif any(isinstance(e, validator.Blocked) for e in errors):
            outcomes["blocked"] += 1
        else:
            outcomes["raised"] += 1
    # the draw is not vacuous: many programs run at every size, and the guards do stop some
    assert outcomes["ran"] >= N_PROGRAMS // 5 and min(outcomes["blocked"], outcomes["refused"]) >= 10, outcomes
