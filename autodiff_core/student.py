"""A student's ``torch.autograd.Function``, typed in the browser: validated, then compiled safely.

Student code never reaches ``exec`` or ``eval`` as text. ``validate`` parses it with ``ast`` and walks
every node against an allow-list; only then does ``compile_function`` compile the *validated tree*
(rewritten a little, see ``_Harden``) with no builtins but ``_loaded_module`` and a ``torch`` holding only
the allowed functions, and builds the Function class itself.

What a submission may contain, and nothing else:

* one ``class Name(torch.autograd.Function)`` with a ``@staticmethod def forward(ctx, ...)`` and a
  ``@staticmethod def backward(ctx, grad_output)``, and docstrings;
* in those bodies: assignments (to names, tuples of names, or masked ``t[mask] = ...``), ``if``/``else``,
  ``return``, ``pass``, arithmetic, comparisons, ``and``/``or``/``not``, conditional expressions;
* calls of ``torch.<f>`` for f in ``TORCH_FUNCTIONS`` (``torch.where`` with its three arguments), tensor
  methods in ``TENSOR_METHODS``, and ``ctx.save_for_backward``; the attributes ``ctx.saved_tensors`` and
  ``ctx.needs_input_grad``;
* an index is a mask (``t[input < 0]``) or a whole number from -16 to 16 (``ctx.saved_tensors[0]``);
* names: the parameters, variables assigned in the same function, and ``torch`` (before a dot).

The allow-list is the first filter, not the defence: the sandbox (``sandbox.py``: a separate process with
limits on CPU time, memory and wall-clock time) is what contains code that gets past it. The compiled code
also carries run-time guards (``_Harden`` puts them in), and they make this bound true:

* number literals are floats, and every operand of arithmetic and of unary ``-``/``+`` passes through
  ``_as_float`` (ints and bools become floats; anything but a number or a tensor, a tuple say, raises), so
  no Python integer or sequence grows; ``~`` takes tensors only (``_as_mask``);
* while forward or backward runs, ``_Bounded`` checks every tensor operation *before* it runs: a tensor is
  indexed only by a bool mask of its own shape, and an operation whose operands broadcast to more elements
  than its largest tensor operand has is stopped. Every operation student code can reach is element-wise
  (its result has its operands' broadcast shape) or picks elements (a mask, unpacking ``a, b = t``), so
  this covers them all; a check of each result backs it up. A guard that stops the code raises
  ``Blocked``, which ``explain_error`` shows with its line.

So no tensor the code builds has more elements than the largest tensor it is handed (its inputs;
``grad_output`` has the shape of forward's result and the saved tensors are forward's, so neither is
larger). With no loops and no calls of its own functions, each of the code's at most ``MAX_NODES`` syntax
elements runs at most once per call, so one call does a few tensor operations per syntax element, none on
more elements than the largest input. The guards cost about 10 µs per operation.
"""

from __future__ import annotations

import ast
import copy
import io
import math
import sys
import tokenize
import traceback
from dataclasses import dataclass
from types import SimpleNamespace

import torch
from torch.overrides import TorchFunctionMode

FILENAME = "<your code>"
MAX_CHARS = 4000  # a ReLU takes ~400; the longest reference solution ~900
MAX_LINES = 120
MAX_NODES = 1500
MAX_DEPTH = 24  # nesting of the syntax tree
MAX_LITERAL = 1e6  # largest number literal
MAX_EXPONENT = 16  # `x ** k` needs a literal k with |k| <= this
MAX_INDEX = 16  # `ctx.saved_tensors[k]` needs a literal k with |k| <= this

TORCH_FUNCTIONS = frozenset({"exp", "log", "sigmoid", "tanh", "where", "abs", "sign", "zeros_like", "ones_like",
                             "maximum", "minimum", "pow", "sqrt", "sin", "cos", "clamp", "clone"})
TENSOR_METHODS = frozenset({"clone", "clamp", "exp", "log", "sigmoid", "tanh", "abs", "sign", "pow", "sqrt", "sin",
                            "cos", "maximum", "minimum"})
CTX_CALLS = frozenset({"save_for_backward"})
CTX_ATTRIBUTES = frozenset({"saved_tensors", "needs_input_grad"})
KEYWORDS = frozenset({"min", "max"})  # clamp(min=..., max=...)
STATEMENTS = (ast.Assign, ast.AugAssign, ast.Return, ast.If, ast.Pass, ast.Expr)
EXPRESSIONS = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp, ast.Call,
               ast.Attribute, ast.Subscript, ast.Tuple, ast.keyword)
OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.BitAnd, ast.BitOr, ast.USub, ast.UAdd, ast.Not,
             ast.Invert, ast.And, ast.Or, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq, ast.Load, ast.Store)
LOOPS = "no loops: use tensor operations, which work on every element at once"
NO_STRINGS = "no strings or f-strings here: this code computes with numbers and tensors"
WHY_NOT = {  # node type -> why it is refused, in words a student can act on
    ast.Import: "no imports: `torch` is already there", ast.ImportFrom: "no imports: `torch` is already there",
    ast.For: LOOPS, ast.While: LOOPS, ast.ListComp: LOOPS, ast.GeneratorExp: LOOPS, ast.SetComp: LOOPS,
    ast.DictComp: LOOPS, ast.Lambda: "no lambda: write the expression where you need it",
    ast.Global: "no `global`: use your parameters and variables of your own",
    ast.Nonlocal: "no `nonlocal`: use your parameters and variables of your own",
    ast.JoinedStr: NO_STRINGS, ast.FormattedValue: NO_STRINGS,
    ast.Delete: "no `del`: just stop using the name", ast.Del: "no `del`: just stop using the name",
    ast.Try: "no try/except: errors are reported to you with their line",
    ast.With: "no `with` blocks in this lesson", ast.Raise: "no `raise`: return the gradient instead",
    ast.Assert: "no `assert`: the checker tests your Function", ast.NamedExpr: "no `:=`: assign on a line of its own",
    ast.Starred: "no `*` unpacking: pass the arguments one by one",
    ast.List: "no lists: return a tuple, e.g. `return grad_a, grad_b`", ast.Dict: "no dicts: use tensors",
    ast.Set: "no sets: use tensors", ast.Slice: "no slices: index with a mask, e.g. `t[input < 0] = 0`",
    ast.Yield: "no `yield`: use `return`", ast.Await: "no `await`: the methods are plain functions",
    ast.AsyncFunctionDef: "no async: use a plain `def`", ast.MatMult: "no `@`: this lesson is element-wise",
    ast.Is: "use == or != instead of `is`", ast.IsNot: "use == or != instead of `is not`",
    ast.In: "no `in`: compare with <, >, == and combine masks with & and |",
    ast.NotIn: "no `not in`: compare with <, >, == and combine masks with & and |",
    ast.FloorDiv: "use / instead of //", ast.Mod: "no `%`: it is not needed for these functions",
}


class Refused(Exception):
    """The code was not accepted; ``line`` is where (1-based), or None for the whole submission."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message, self.line = message, line

    def __str__(self) -> str:
        return f"Line {self.line}: {self.message}" if self.line else self.message


@dataclass(frozen=True)
class Submission:
    """A validated submission: its tree, the class name, and the two methods' parameter names."""

    tree: ast.Module
    class_name: str
    forward: ast.FunctionDef
    backward: ast.FunctionDef


def validate(source: str, n_inputs: int = 1) -> Submission:
    """Parse and check ``source`` against the allow-list; raises ``Refused`` with a line number."""
    if not isinstance(source, str):
        raise Refused("The code must be text.")
    if len(source) > MAX_CHARS:
        raise Refused(f"The code is {len(source):,} characters long; the limit is {MAX_CHARS:,}.")
    if len(source.splitlines()) > MAX_LINES:  # every line ending: \r, \r\n, \n, and \x0c, \u2028 and the like
        raise Refused(f"The code has more than {MAX_LINES} lines.")
    try:
        tree = ast.parse(source, filename=FILENAME, mode="exec")
    except SyntaxError as exc:
        raise Refused(f"Python cannot read this: {exc.msg}.", exc.lineno) from None
    except ValueError:  # a null character
        raise Refused("Python cannot read this code: it contains a character code cannot hold.") from None
    except (RecursionError, MemoryError):
        raise Refused("The code is nested too deeply for Python to read.") from None
    _check_identifiers(source)
    _check_size(tree)
    return _check_module(tree, n_inputs)


def _check_identifiers(source: str) -> None:
    """Identifiers must be plain ASCII: Python folds look-alikes (NFKC), so `ｏｐｅｎ` would mean `open`."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.NAME and not tok.string.isascii():
                raise Refused("names must use plain ASCII letters, digits and _ (look-alike letters from other "
                              "alphabets are refused).", tok.start[0])
    except (tokenize.TokenError, SyntaxError):
        raise Refused("Python cannot read this code.") from None


def _check_size(tree: ast.AST) -> None:
    stack, count = [(tree, 0)], 0
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise Refused(f"The code is too big: more than {MAX_NODES} syntax elements.")
        if depth > MAX_DEPTH:
            raise Refused(f"The code is nested more than {MAX_DEPTH} levels deep; split it into steps.",
                          getattr(node, "lineno", None))
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _check_module(tree: ast.Module, n_inputs: int) -> Submission:
    body = _strip_docstring(tree.body)
    classes = [n for n in body if isinstance(n, ast.ClassDef)]
    for node in body:
        if not isinstance(node, ast.ClassDef):
            raise Refused(_why(node, "only the class goes here: put your code inside forward and backward"),
                          node.lineno)
    if len(classes) != 1:
        raise Refused("Write exactly one class, e.g. `class MyFunction(torch.autograd.Function):`.")
    cls = classes[0]
    _check_class_header(cls)
    methods = {}
    for node in _strip_docstring(cls.body):
        if not isinstance(node, ast.FunctionDef) or node.name not in ("forward", "backward"):
            raise Refused("the class holds only `forward` and `backward` (and a docstring).", node.lineno)
        if node.name in methods:
            raise Refused(f"`{node.name}` is defined twice.", node.lineno)
        methods[node.name] = node
    for name in ("forward", "backward"):
        if name not in methods:
            raise Refused(f"The class needs a `{name}` method.", cls.lineno)
    _check_method(methods["forward"], n_inputs + 1)
    _check_method(methods["backward"], 2)
    return Submission(tree, cls.name, methods["forward"], methods["backward"])


def _strip_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return body[1:]
    return body


def _why(node: ast.AST, default: str) -> str:
    return WHY_NOT.get(type(node), default)


def _check_class_header(cls: ast.ClassDef) -> None:
    if cls.decorator_list:
        raise Refused("no decorators on the class.", cls.lineno)
    if cls.name.startswith("_"):
        raise Refused("names starting with _ are not allowed.", cls.lineno)
    base = ast.unparse(cls.bases[0]) if len(cls.bases) == 1 else ""
    if base not in ("torch.autograd.Function", "Function") or cls.keywords:
        raise Refused("the class must be `class MyFunction(torch.autograd.Function):`.", cls.lineno)


def _check_method(fn: ast.FunctionDef, n_params: int) -> None:
    if [ast.unparse(d) for d in fn.decorator_list] != ["staticmethod"]:
        raise Refused(f"put exactly `@staticmethod` above `def {fn.name}` (no other decorators).", fn.lineno)
    a = fn.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults or a.kw_defaults:
        raise Refused(f"`{fn.name}` takes plain parameters only (no defaults, *args or **kwargs).", fn.lineno)
    params = [p.arg for p in a.args]
    if len(params) != n_params or params[0] != "ctx":
        want = "ctx, input" if fn.name == "forward" and n_params == 2 else \
            "ctx, grad_output" if fn.name == "backward" else "ctx, " + ", ".join("abcdef"[:n_params - 1])
        raise Refused(f"`{fn.name}` must take {n_params} parameters, like `def {fn.name}({want})`.", fn.lineno)
    if fn.returns or any(p.annotation for p in a.args):
        raise Refused("leave out type annotations.", fn.lineno)
    if len(set(params)) != len(params):
        raise Refused("two parameters have the same name.", fn.lineno)
    body = _strip_docstring(fn.body)
    if not body:
        raise Refused(f"`{fn.name}` has no code: fill in its body.", fn.lineno)
    if any(p.startswith("_") for p in params):
        raise Refused("names starting with _ are not allowed.", fn.lineno)
    assigned = {node.id for node in ast.walk(fn) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    _Checker(params, assigned).check_body(body)


class _Checker:
    """Walks one method's body: every node must be of an allowed type and pass its own rule."""

    def __init__(self, params: list[str], assigned: set[str]) -> None:
        self.ctx, self.names = params[0], set(params) | assigned

    def check_body(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.stmt(stmt)

    def stmt(self, node: ast.stmt) -> None:
        if not isinstance(node, STATEMENTS):
            raise Refused(_why(node, f"`{type(node).__name__}` statements are not allowed here") + ".", node.lineno)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and node.value.value is Ellipsis:
            raise Refused("replace `...` with your code.", node.lineno)
        if isinstance(node, ast.Expr) and not isinstance(node.value, ast.Call):
            raise Refused("this line computes something and throws it away; assign it or return it.", node.lineno)
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self.target(target)
        elif isinstance(node, ast.AugAssign):
            self.target(node.target)
        if isinstance(node, ast.If):
            self.expr(node.test)
            self.check_body(node.body)
            self.check_body(node.orelse)
            return
        value = getattr(node, "value", None)
        if value is not None:
            self.expr(value)

    def target(self, node: ast.expr) -> None:
        if isinstance(node, ast.Name):
            self.name(node)
        elif isinstance(node, ast.Tuple) and all(isinstance(e, ast.Name) for e in node.elts):
            for e in node.elts:
                self.name(e)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            self.expr(node)
        else:
            raise Refused("you can assign to a name, to names (`a, b = ...`), or to a masked tensor "
                          "(`grad_input[input < 0] = 0`).", node.lineno)

    def name(self, node: ast.Name) -> None:
        if node.id.startswith("_"):
            raise Refused(f"names starting with _ are not allowed (`{node.id}`).", node.lineno)
        if node.id == "torch":
            raise Refused("use `torch` only before a dot, as in `torch.exp(x)`.", node.lineno)
        if node.id not in self.names:
            raise Refused(f"`{node.id}` is not available here: use `torch.` functions, your parameters, and "
                          "variables you assign in this method.", node.lineno)

    def expr(self, node: ast.AST) -> None:
        stack = [node]
        while stack:
            node = stack.pop()
            if isinstance(node, OPERATORS):
                continue
            line = getattr(node, "lineno", None)
            if not isinstance(node, EXPRESSIONS):
                raise Refused(_why(node, f"`{type(node).__name__}` is not allowed here") + ".", line)
            children = self.check_node(node)
            stack.extend(ast.iter_child_nodes(node) if children is None else children)

    def check_node(self, node: ast.AST) -> list | None:
        """Check one node's own rule; return the children still to check (None: all of them)."""
        if isinstance(node, ast.Name):
            self.name(node)
        elif isinstance(node, ast.Constant):
            _check_constant(node)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            _check_exponent(node)
        elif isinstance(node, ast.Attribute):
            return self.attribute(node, called=False)
        elif isinstance(node, ast.Call):
            return self.call(node)
        elif isinstance(node, ast.keyword) and node.arg not in KEYWORDS:
            raise Refused(f"the only keyword arguments are {', '.join(sorted(KEYWORDS))} (as in clamp).",
                          node.value.lineno)
        elif isinstance(node, ast.Subscript):
            _check_index(node)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert) and isinstance(node.operand,
                                                                                               ast.Constant):
            raise Refused("`~` flips a mask tensor, as in `~(input > 0)`; for True or False use `not`.", node.lineno)
        return None

    def call(self, node: ast.Call) -> list:
        if not isinstance(node.func, ast.Attribute):
            name = node.func.id if isinstance(node.func, ast.Name) else type(node.func).__name__
            raise Refused(f"you can call `torch.` functions, tensor methods and `ctx.save_for_backward`; not "
                          f"`{name}`.", node.lineno)
        if ast.unparse(node.func) == "torch.where" and (len(node.args) != 3 or node.keywords):
            raise Refused("`torch.where` takes three arguments: `torch.where(mask, value_if_true, value_if_false)`.",
                          node.lineno)
        return [*self.attribute(node.func, called=True), *node.args, *node.keywords]

    def attribute(self, node: ast.Attribute, *, called: bool) -> list:
        attr, owner = node.attr, node.value
        if attr.startswith("_"):
            raise Refused(f"attributes starting with _ are not allowed (`{attr}`).", node.lineno)
        dotted = ast.unparse(node)
        if dotted.startswith("torch.") and not isinstance(owner, ast.Name):  # torch.hub.load, torch.ops.aten...
            raise Refused(f"`{dotted[:60]}` is not one of the functions this lesson allows: "
                          f"{', '.join(sorted(TORCH_FUNCTIONS))}.", node.lineno)
        if isinstance(owner, ast.Name) and owner.id == "torch":
            if attr not in TORCH_FUNCTIONS or not called:
                raise Refused(f"`torch.{attr}` is not one of the functions this lesson allows: "
                              f"{', '.join(sorted(TORCH_FUNCTIONS))}; call them, e.g. `torch.exp(x)`.", node.lineno)
            return []
        if isinstance(owner, ast.Name) and owner.id == self.ctx:
            allowed = CTX_CALLS if called else CTX_ATTRIBUTES
            if attr not in allowed:
                raise Refused(f"`{self.ctx}.{attr}` is not available: use `{self.ctx}.save_for_backward(...)`, "
                              f"`{self.ctx}.saved_tensors` and `{self.ctx}.needs_input_grad`.", node.lineno)
            return []
        if attr not in TENSOR_METHODS or not called:
            raise Refused(f"`.{attr}` is not allowed: the tensor methods here are "
                          f"{', '.join(sorted(TENSOR_METHODS))}, called as in `x.clamp(min=0)`.", node.lineno)
        return [owner]


def _check_constant(node: ast.Constant) -> None:
    value = node.value
    if isinstance(value, str):
        raise Refused("strings are allowed only as docstrings.", node.lineno)
    if value is None or isinstance(value, bool):
        return
    if not isinstance(value, (int, float)):
        raise Refused(f"{type(value).__name__} literals are not allowed.", node.lineno)
    if not math.isfinite(value) or abs(value) > MAX_LITERAL:
        raise Refused(f"numbers here stay within ±{MAX_LITERAL:g}.", node.lineno)


def _constant_index(node: ast.expr) -> int | None:
    """The whole number an index spells out (`[0]`, `[-1]`), or None when it is not one."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node, sign = node.operand, -1
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


INDEX_RULE = "index with a mask, as in `t[input < 0]`, or pick with a whole number, as in `ctx.saved_tensors[0]`"


def _check_index(node: ast.Subscript) -> None:
    """An index is one mask (checked when it runs: a bool tensor of the tensor's shape) or one small whole number."""
    index, k = node.slice, _constant_index(node.slice)
    if isinstance(index, ast.Tuple):
        raise Refused(f"{INDEX_RULE}; one index only.", node.lineno)
    if k is not None and abs(k) > MAX_INDEX:
        raise Refused(f"{INDEX_RULE}; the number goes from -{MAX_INDEX} to {MAX_INDEX}.", node.lineno)
    if k is None and (isinstance(index, ast.Constant) or (isinstance(index, ast.UnaryOp)
                                                          and isinstance(index.operand, ast.Constant))):
        raise Refused(f"{INDEX_RULE}; not `[{ast.unparse(index)[:20]}]`.", node.lineno)


def _check_exponent(node: ast.BinOp) -> None:
    k = node.right
    if isinstance(k, ast.UnaryOp) and isinstance(k.op, (ast.USub, ast.UAdd)):
        k = k.operand
    if not (isinstance(k, ast.Constant) and isinstance(k.value, (int, float)) and not isinstance(k.value, bool)
            and abs(k.value) <= MAX_EXPONENT):
        raise Refused(f"the exponent in `**` must be a number from -{MAX_EXPONENT} to {MAX_EXPONENT}, as in `x ** 3` "
                      "(for anything else use torch.pow).", node.lineno)


# ---- Compiling a validated submission ----


class Blocked(Exception):
    """A run-time guard stopped the student's code; the message says why, in words for the student."""


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


class _Harden(ast.NodeTransformer):
    """Rewrites the validated tree: number literals become floats (except indices such as
    ``saved_tensors[0]``), every operand of arithmetic and of unary -, + passes through ``_as_float``, that of
    ``~`` through ``_as_mask``, and each method's body runs inside ``with _Bounded():``."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        guard = ast.withitem(context_expr=ast.Call(func=ast.Name("_Bounded", ast.Load()), args=[], keywords=[]))
        node.body = [ast.copy_location(ast.With(items=[guard], body=node.body), node.body[0])]
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        node.value = self.visit(node.value)
        k = _constant_index(node.slice)
        node.slice = self.visit(node.slice) if k is None else ast.copy_location(ast.Constant(k), node.slice)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if type(node.value) is int:
            return ast.copy_location(ast.Constant(float(node.value)), node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        node.left, node.right = _wrap(node.left), _wrap(node.right)
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            node.operand = _wrap(node.operand, "_as_mask" if isinstance(node.op, ast.Invert) else "_as_float")
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        node.value = _wrap(node.value)
        return node


def _wrap(node: ast.expr, guard: str = "_as_float") -> ast.expr:
    call = ast.Call(func=ast.Name(guard, ast.Load()), args=[node], keywords=[])
    return ast.copy_location(call, node)


def _loaded_module(name, globals=None, locals=None, fromlist=(), level=0):
    """The one builtin: PyTorch's C code imports through the *calling* frame's builtins (``PyImport_Import``
    runs ``import torch`` while the student's forward is the frame on top). Only modules already loaded are
    handed out; nothing new is imported, and student code cannot name this (no names starting with _)."""
    if level == 0 and name in sys.modules:
        return sys.modules[name] if fromlist else sys.modules[name.partition(".")[0]]
    raise ImportError("student code imports nothing")


SAFE_TORCH = SimpleNamespace(**{name: getattr(torch, name) for name in sorted(TORCH_FUNCTIONS)})


def compile_function(submission: Submission) -> type[torch.autograd.Function]:
    """Compile the validated methods (never the text) and build the Function class from them."""
    methods = []
    for fn in (submission.forward, submission.backward):
        fn = copy.deepcopy(fn)  # _Harden rewrites in place; the Submission stays as validated
        clean = ast.FunctionDef(name=fn.name, args=fn.args, body=fn.body, decorator_list=[], returns=None,
                                type_comment=None)
        methods.append(ast.copy_location(clean, fn))
    module = ast.fix_missing_locations(_Harden().visit(ast.Module(body=methods, type_ignores=[])))
    namespace = {"__builtins__": {"__import__": _loaded_module}, "torch": SAFE_TORCH, "_as_float": _as_float,
                 "_as_mask": _as_mask, "_Bounded": _Bounded}
    exec(compile(module, FILENAME, "exec"), namespace)  # defines forward and backward; runs none of their code
    return type(submission.class_name, (torch.autograd.Function,), {
        "forward": staticmethod(namespace["forward"]), "backward": staticmethod(namespace["backward"]),
        "__module__": "student", "__doc__": "A Function written in lesson 6."})


def load(source: str, n_inputs: int = 1) -> type[torch.autograd.Function]:
    """``validate`` then ``compile_function``: the only way from text to a Function."""
    return compile_function(validate(source, n_inputs))


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
