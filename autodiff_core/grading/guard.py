"""A validated student Function, compiled under guards: the second of three walls around student code.

``validator.py`` checks the text against an allow-list and hands over the validated tree (a ``Submission``);
for number literals, exponents and indices it asks ``number_problem`` here, next to the rewrite that relies
on those rules. ``compile_function`` compiles that *tree*, never the text, rewritten a little by
``_Harden``, with no builtins but ``_loaded_module`` and a ``torch`` holding only ``TORCH_FUNCTIONS``
(``SAFE_TORCH``; a form of lesson 8 names a few more), and builds the Function class; ``explain_error`` turns
what the code raised into one sentence with its line. This module imports nothing from ``validator.py``,
which re-exports its names.

The guards the rewrite puts in make this bound true:

* number literals are floats, and every operand of arithmetic and of unary ``-``/``+`` passes through
  ``_as_float`` (ints and bools become floats; anything but a number or a tensor, a tuple say, raises), so
  no Python integer or sequence grows; ``&`` and ``|`` keep a bool as it is (``_as_logical``: a mask
  ``& ctx.needs_input_grad[0]`` stays a mask); ``~`` takes tensors only (``_as_mask``);
* while forward or backward runs, ``_Bounded`` checks every tensor operation *before* it runs: a tensor is
  indexed only by a bool mask of its own shape, and an operation whose operands broadcast to more elements
  than its largest tensor operand has is stopped. Every operation student code can reach is element-wise
  (its result has its operands' broadcast shape), picks elements (a mask, unpacking ``a, b = t``, ``take``
  whose result has its index's shape) or reorders them (``sort``, ``argsort``), so this covers them all; a
  check of each result backs it up. A guard that stops the code raises ``Blocked``, which ``explain_error``
  shows with its line.

So no tensor the code builds has more elements than the largest tensor it is handed (its inputs;
``grad_output`` has the shape of forward's result and the saved tensors are forward's, so neither is
larger). With no loops and no calls of its own functions (the validator sees to both), each of the code's
at most ``MAX_NODES`` syntax elements runs at most once per call, so one call does a few tensor operations
per syntax element, none on more elements than the largest input. The guards cost about 10 µs per
operation. The sandbox (``sandbox.py``: a separate process with limits on CPU time, memory and wall-clock
time) is the third wall: it contains whatever gets past the first two.
"""

from __future__ import annotations

import ast
import copy
import math
import sys
import traceback
from types import SimpleNamespace
from typing import TYPE_CHECKING

import torch
from torch.overrides import TorchFunctionMode

if TYPE_CHECKING:  # for the annotation only: validator.py imports this module
    from .validator import Submission

FILENAME = "<your code>"  # the file name compiled student code carries: how explain_error finds its lines
# The torch.<f> student code may call: the validator refuses any other, and the `torch` it sees holds no other.
TORCH_FUNCTIONS = frozenset({"exp", "log", "sigmoid", "tanh", "where", "abs", "sign", "zeros_like", "ones_like",
                             "maximum", "minimum", "pow", "sqrt", "sin", "cos", "clamp", "clone"})
SAFE_TORCH = SimpleNamespace(**{name: getattr(torch, name) for name in sorted(TORCH_FUNCTIONS)})


class Blocked(Exception):
    """A run-time guard stopped the student's code; the message says why, in words for the student."""


# ---- Numbers in the tree: the validator asks number_problem, the rewrite makes them floats ----

MAX_LITERAL = 1e6  # largest number literal
MAX_EXPONENT = 16  # `x ** k` needs a literal k with |k| <= this
MAX_INDEX = 16  # `ctx.saved_tensors[k]` needs a literal k with |k| <= this
INDEX_RULE = "index with a mask, as in `t[input < 0]`, or pick with a whole number, as in `ctx.saved_tensors[0]`"


def number_problem(node: ast.AST) -> str | None:
    """Why a literal, an exponent or an index is refused, in words for the student; None when it is fine."""
    if isinstance(node, ast.Constant):
        return _literal_problem(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return _exponent_problem(node.right)
    if isinstance(node, ast.Subscript):
        return _index_problem(node.slice)
    return None


def _literal_problem(value) -> str | None:
    if isinstance(value, str):
        return "strings are allowed only as docstrings."
    if value is None or isinstance(value, bool):
        return None
    if not isinstance(value, (int, float)):
        return f"{type(value).__name__} literals are not allowed."
    if not math.isfinite(value) or abs(value) > MAX_LITERAL:
        return f"numbers here stay within ±{MAX_LITERAL:g}."
    return None


def _exponent_problem(k: ast.expr) -> str | None:
    if isinstance(k, ast.UnaryOp) and isinstance(k.op, (ast.USub, ast.UAdd)):
        k = k.operand
    if not (isinstance(k, ast.Constant) and isinstance(k.value, (int, float)) and not isinstance(k.value, bool)
            and abs(k.value) <= MAX_EXPONENT):
        return (f"the exponent in `**` must be a number from -{MAX_EXPONENT} to {MAX_EXPONENT}, as in `x ** 3` "
                "(for anything else use torch.pow).")
    return None


def _index_problem(index: ast.expr) -> str | None:
    """One mask (checked when it runs: a bool tensor of the tensor's shape, see _check_mask) or one small
    whole number."""
    k = _whole_number_index(index)
    if isinstance(index, ast.Tuple):
        return f"{INDEX_RULE}; one index only."
    if k is not None and abs(k) > MAX_INDEX:
        return f"{INDEX_RULE}; the number goes from -{MAX_INDEX} to {MAX_INDEX}."
    if k is None and (isinstance(index, ast.Constant) or (isinstance(index, ast.UnaryOp)
                                                          and isinstance(index.operand, ast.Constant))):
        return f"{INDEX_RULE}; not `[{ast.unparse(index)[:20]}]`."
    return None


def _whole_number_index(node: ast.expr) -> int | None:
    """The whole number an index spells out (`[0]`, `[-1]`), or None when it is not one; the rewrite keeps
    these ints (every other number literal becomes a float)."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node, sign = node.operand, -1
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


# ---- The guards compiled into the code ----


def _describe(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"a {str(value.dtype).removeprefix('torch.')} tensor of shape {tuple(value.shape)}"
    return "None" if value is None else f"a {type(value).__name__}"


def _as_float(value):
    """Python ints (and bools) become floats before arithmetic, so no huge integer can be built; anything but a
    number or a tensor (a tuple, which `+` would lengthen) is refused."""
    kind = type(value)
    if kind is float or isinstance(value, torch.Tensor):
        return value
    if kind in (int, bool):
        return float(value)
    raise Blocked(f"arithmetic works on numbers and tensors, not on {_describe(value)}.")


def _as_logical(value):
    """An operand of `&` or `|`: a bool stays a bool, so `mask & ctx.needs_input_grad[0]` is a mask (as a
    float, 1.0, it would not combine with a mask); anything else as in arithmetic."""
    return value if type(value) is bool else _as_float(value)


def _as_mask(value):
    """The operand of `~`: a tensor (`~True` is the integer -2, which is not what anyone means)."""
    if isinstance(value, torch.Tensor):
        return value
    raise Blocked(f"`~` flips a mask tensor, as in `~(input > 0)`, not {_describe(value)}; for True or False "
                  "use `not`.")


_INDEXING = frozenset({"__getitem__", "__setitem__"})


class _Bounded(TorchFunctionMode):
    """On while the student's forward or backward runs: each tensor operation is checked *before* it runs.
    Indexing takes a bool mask of the tensor's own shape; any other operation may not broadcast its operands
    to more elements than its largest tensor operand has (every function allowed here is element-wise)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
        limit = max(map(torch.Tensor.numel, tensors)) if tensors else 1
        if getattr(func, "__name__", "") in _INDEXING:
            _check_mask(args[0], args[1])
        elif len(shapes := {t.shape for t in tensors}) > 1:
            shape = _broadcast(shapes)
            if shape is not None and math.prod(shape) > limit:
                raise Blocked(_too_big(shape, limit))
        result = func(*args, **kwargs)
        for out in result if isinstance(result, tuple) else (result,):
            if isinstance(out, torch.Tensor) and out.numel() > limit:  # never expected: the checks above
                raise Blocked(_too_big(out.shape, limit))
        return result


def _broadcast(shapes) -> tuple[int, ...] | None:
    """The shape these broadcast to, or None when they do not fit (the operation itself then says so).
    torch.broadcast_shapes does the same in ~80 µs, more than most operations here take."""
    shape = []
    for i in range(1, max(len(s) for s in shapes) + 1):
        sizes = {s[-i] for s in shapes if len(s) >= i} - {1}
        if len(sizes) > 1:
            return None
        shape.insert(0, sizes.pop() if sizes else 1)
    return tuple(shape)


def _check_mask(tensor: torch.Tensor, index) -> None:
    if not (isinstance(index, torch.Tensor) and index.dtype == torch.bool and index.shape == tensor.shape):
        raise Blocked(f"index a tensor with a mask of its own shape {tuple(tensor.shape)}, as in `t[input < 0]`; "
                      f"this index is {_describe(index)}. Whole numbers such as `[0]` pick from "
                      "`ctx.saved_tensors` and `ctx.needs_input_grad`.")


def _too_big(shape, limit: int) -> str:
    return (f"your code built a tensor larger than its input: shape {tuple(shape)} ({math.prod(shape):,} numbers) "
            f"from tensors of at most {limit:,}. Combine tensors of the input's shape.")


# ---- Putting the guards in: the rewrite of the validated tree ----


class _Harden(ast.NodeTransformer):
    """Rewrites the validated tree: number literals become floats (except indices such as
    ``saved_tensors[0]``), every operand of arithmetic and of unary -, + passes through ``_as_float`` (of
    ``&`` and ``|`` through ``_as_logical``), that of ``~`` through ``_as_mask``, and each method's body runs
    inside ``with _Bounded():``."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        guard = ast.withitem(context_expr=ast.Call(func=ast.Name("_Bounded", ast.Load()), args=[], keywords=[]))
        node.body = [ast.copy_location(ast.With(items=[guard], body=node.body), node.body[0])]
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        node.value = self.visit(node.value)
        k = _whole_number_index(node.slice)
        node.slice = self.visit(node.slice) if k is None else ast.copy_location(ast.Constant(k), node.slice)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if type(node.value) is int:
            return ast.copy_location(ast.Constant(float(node.value)), node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        guard = _operand_guard(node.op)
        node.left, node.right = _wrap(node.left, guard), _wrap(node.right, guard)
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            node.operand = _wrap(node.operand, "_as_mask" if isinstance(node.op, ast.Invert) else "_as_float")
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        node.value = _wrap(node.value, _operand_guard(node.op))
        return node


def _operand_guard(op: ast.operator) -> str:
    return "_as_logical" if isinstance(op, ast.BitAnd | ast.BitOr) else "_as_float"


def _wrap(node: ast.expr, guard: str) -> ast.expr:
    call = ast.Call(func=ast.Name(guard, ast.Load()), args=[node], keywords=[])
    return ast.copy_location(call, node)


# ---- Compiling, and explaining what went wrong ----


def _loaded_module(name, globals=None, locals=None, fromlist=(), level=0):
    """The one builtin: PyTorch's C code imports through the *calling* frame's builtins (``PyImport_Import``
    runs ``import torch`` while the student's forward is the frame on top). Only modules already loaded are
    handed out; nothing new is imported, and student code cannot name this (no names starting with _)."""
    if level == 0 and name in sys.modules:
        return sys.modules[name] if fromlist else sys.modules[name.partition(".")[0]]
    raise ImportError("student code imports nothing")


def compile_function(submission: Submission) -> type[torch.autograd.Function]:
    """Compile the validated methods (never the text) and build the Function class from them, with its flags
    (``generate_vmap_rule``); the ``torch`` they see holds only their form's functions."""
    methods = []
    for fn in submission.methods.values():
        fn = copy.deepcopy(fn)  # _Harden rewrites in place; the Submission stays as validated
        clean = ast.FunctionDef(name=fn.name, args=fn.args, body=fn.body, decorator_list=[], returns=None,
                                type_comment=None)
        methods.append(ast.copy_location(clean, fn))
    module = ast.fix_missing_locations(_Harden().visit(ast.Module(body=methods, type_ignores=[])))
    names = submission.form.torch_functions
    safe = SAFE_TORCH if names == TORCH_FUNCTIONS else SimpleNamespace(**{n: getattr(torch, n) for n in sorted(names)})
    namespace = {"__builtins__": {"__import__": _loaded_module}, "torch": safe, "_as_float": _as_float,
                 "_as_logical": _as_logical, "_as_mask": _as_mask, "_Bounded": _Bounded}
    exec(compile(module, FILENAME, "exec"), namespace)  # defines the methods; runs none of their code
    return type(submission.class_name, (torch.autograd.Function,), {
        **{name: staticmethod(namespace[name]) for name in submission.methods}, **submission.flags,
        "__module__": "student", "__doc__": "A Function written by a student."})


def explain_error(exc: BaseException) -> tuple[int | None, str]:
    """(line, message) for an exception raised while the student's code ran: their line, never our stack."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == FILENAME:
            line = frame.lineno
    text = str(exc).split("\n")[0][:300]
    where = f"Line {line}: " if line else ""
    if isinstance(exc, Blocked):
        message = text
    elif isinstance(exc, UnboundLocalError | NameError):
        message = f"a variable is used before it is assigned ({text})."
    elif isinstance(exc, MemoryError) or "can't allocate memory" in text:
        message = "the code asked for more memory than the sandbox allows."
    else:
        message = f"{type(exc).__name__}: {text}"
    return line, where + message
