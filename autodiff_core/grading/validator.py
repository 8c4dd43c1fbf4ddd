"""A student's ``torch.autograd.Function``, typed in the browser: the validator, the first of three walls.

Student code never reaches ``exec`` or ``eval`` as text. ``validate`` parses it with ``ast``, walks every
node against the allow-list below and refuses anything else (``Refused``, with its line) before anything
runs; ``load`` hands the validated tree (a ``Submission``) to ``compile_function`` in ``guard.py``,
which holds the rules for numbers, the compile step and the run-time guards. Its names are re-exported here.

The bound enforced here: at most ``MAX_CHARS`` characters, ``MAX_LINES`` lines and ``MAX_NODES`` syntax
elements nested ``MAX_DEPTH`` deep, holding this and nothing else:

* one ``class Name(torch.autograd.Function)`` with a ``@staticmethod def forward(ctx, ...)`` and a
  ``@staticmethod def backward(ctx, grad_output)``, and docstrings (lesson 6's ``classic`` form; a ``Form``
  names other methods, such as ``setup_context`` and ``jvp``, a class flag such as ``generate_vmap_rule = True``,
  and a few more calls, for lesson 8's parts);
* in those bodies: assignments (to names, tuples of names, or masked ``t[mask] = ...``), ``if``/``else``,
  ``return``, ``pass``, arithmetic, comparisons, ``and``/``or``/``not``, conditional expressions; no loops,
  and the class and its methods cannot be named, so no syntax element runs twice in one call;
* calls of ``torch.<f>`` for f in ``TORCH_FUNCTIONS`` (``torch.where`` with its three arguments), tensor
  methods in ``TENSOR_METHODS`` on any allowed expression (``torch.sigmoid(x).clamp(min=0)``), and
  ``ctx.save_for_backward``; the attributes ``ctx.saved_tensors`` and ``ctx.needs_input_grad``;
* number literals within ±1e6, a literal exponent from -16 to 16 in ``**``, and an index a mask
  (``t[input < 0]``) or a whole number from -16 to 16 (``ctx.saved_tensors[0]``);
* names: the parameters, variables assigned in the same function, and ``torch`` (before a dot).

The allow-list is the first filter, not the defence: the guards, then the sandbox (``sandbox.py``, a
process with limits on CPU time, memory and wall-clock time), contain code that gets past it.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, field

import torch

from .guard import (
    FILENAME,
    MAX_EXPONENT,
    MAX_INDEX,
    MAX_LITERAL,
    SAFE_TORCH,
    TORCH_FUNCTIONS,
    Blocked,
    compile_function,
    explain_error,
    number_problem,
)

__all__ = ["CTX_ATTRIBUTES", "FILENAME", "MAX_CHARS", "MAX_DEPTH", "MAX_EXPONENT", "MAX_INDEX", "MAX_LINES",
           "MAX_LITERAL", "MAX_NODES", "SAFE_TORCH", "TENSOR_METHODS", "TORCH_FUNCTIONS", "Blocked", "Form", "Refused",
           "Submission", "classic", "compile_function", "explain_error", "load", "validate"]

MAX_CHARS = 4000  # a ReLU takes ~400; the longest reference solution ~900
MAX_LINES = 120
MAX_NODES = 1500
MAX_DEPTH = 24  # nesting of the syntax tree

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
    ast.Import: "no imports: torch is already there", ast.ImportFrom: "no imports: torch is already there",
    ast.For: LOOPS, ast.While: LOOPS, ast.ListComp: LOOPS, ast.GeneratorExp: LOOPS, ast.SetComp: LOOPS,
    ast.DictComp: LOOPS, ast.Lambda: "no lambda: write the expression where you need it",
    ast.Global: "no global: use your parameters and variables of your own",
    ast.Nonlocal: "no nonlocal: use your parameters and variables of your own",
    ast.JoinedStr: NO_STRINGS, ast.FormattedValue: NO_STRINGS,
    ast.Delete: "no del: just stop using the name", ast.Del: "no del: just stop using the name",
    ast.Try: "no try/except: errors are reported to you with their line",
    ast.With: "no with blocks in this lesson", ast.Raise: "no raise: return the gradient instead",
    ast.Assert: "no assert: the checker tests your Function", ast.NamedExpr: "no :=: assign on a line of its own",
    ast.Starred: "no * unpacking: pass the arguments one by one",
    ast.List: "no lists: return a tuple, e.g. return grad_a, grad_b", ast.Dict: "no dicts: use tensors",
    ast.Set: "no sets: use tensors", ast.Slice: "no slices: index with a mask, e.g. t[input < 0] = 0",
    ast.Yield: "no yield: use return", ast.Await: "no await: the methods are plain functions",
    ast.AsyncFunctionDef: "no async: use a plain def", ast.MatMult: "no @: this lesson is element-wise",
    ast.Is: "use == or != instead of is", ast.IsNot: "use == or != instead of is not",
    ast.In: "no in: compare with <, >, == and combine masks with & and |",
    ast.NotIn: "no `not in`: compare with <, >, == and combine masks with & and |",
    ast.FloorDiv: "use / instead of //", ast.Mod: "no `%`: it is not needed for these functions",
}


@dataclass(frozen=True)
class Form:
    """The class a challenge asks for: each method with its parameters as a student names them (their number is
    checked, and ``ctx`` first wherever it stands first: the modern ``forward(input)`` has none), the class flags
    it may set to True or False (``generate_vmap_rule``), and what its code may call. Lesson 6's is ``classic``."""

    methods: tuple[tuple[str, tuple[str, ...]], ...]
    flags: frozenset[str] = frozenset()
    ctx_calls: frozenset[str] = CTX_CALLS
    ctx_attributes: frozenset[str] = CTX_ATTRIBUTES
    torch_functions: frozenset[str] = TORCH_FUNCTIONS
    tensor_methods: frozenset[str] = TENSOR_METHODS
    none_checks: bool = False  # `if grad_values is None:`, for a backward whose grads may be None
    params: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", dict(self.methods))


def classic(n_inputs: int = 1) -> Form:
    """Lesson 6's form: ``forward(ctx, input)`` (or ``ctx, a, b``) and ``backward(ctx, grad_output)``."""
    inputs = ("input",) if n_inputs == 1 else tuple("abcdef"[:n_inputs])
    return Form((("forward", ("ctx", *inputs)), ("backward", ("ctx", "grad_output"))))


class Refused(Exception):
    """The code was not accepted; ``line`` is where (1-based), or None for the whole submission."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message, self.line = message, line

    def __str__(self) -> str:
        return f"Line {self.line}: {self.message}" if self.line else self.message


@dataclass(frozen=True)
class Submission:
    """A validated submission: its tree, the class name, its methods (by name) and its flags, in its form."""

    tree: ast.Module
    class_name: str
    methods: dict[str, ast.FunctionDef]
    flags: dict[str, bool]
    form: Form

    @property
    def forward(self) -> ast.FunctionDef:
        return self.methods["forward"]

    @property
    def backward(self) -> ast.FunctionDef:
        return self.methods["backward"]


def validate(source: str, n_inputs: int = 1, form: Form | None = None) -> Submission:
    """Parse and check ``source`` against the allow-list of ``form`` (lesson 6's ``classic(n_inputs)`` unless
    given); raises ``Refused`` with a line number."""
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
    return _check_module(tree, form or classic(n_inputs))


def load(source: str, n_inputs: int = 1, form: Form | None = None) -> type[torch.autograd.Function]:
    """``validate`` then ``compile_function``: the only way from text to a Function."""
    return compile_function(validate(source, n_inputs, form))


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


def _check_module(tree: ast.Module, form: Form) -> Submission:
    body = _strip_docstring(tree.body)
    for node in body:
        if not isinstance(node, ast.ClassDef):
            raise Refused(_why(node, "only the class goes here: put your code inside forward and backward"),
                          node.lineno)
    if len(body) != 1:
        raise Refused("Write exactly one class, e.g. `class MyFunction(torch.autograd.Function):`.")
    cls = body[0]
    _check_class_header(cls)
    methods, flags = {}, {}
    for node in _strip_docstring(cls.body):
        if isinstance(node, ast.Assign) and form.flags:
            flags.update(_flag(node, form))
            continue
        if not isinstance(node, ast.FunctionDef) or node.name not in form.params:
            raise Refused(f"the class holds only {_names(form)} (and a docstring).", node.lineno)
        if node.name in methods:
            raise Refused(f"`{node.name}` is defined twice.", node.lineno)
        methods[node.name] = node
    for name in form.params:
        if name not in methods:
            raise Refused(f"The class needs a `{name}` method.", cls.lineno)
    for fn in methods.values():
        _check_method(fn, form)
    return Submission(tree, cls.name, methods, flags, form)


def _names(form: Form) -> str:
    names = [f"`{m}`" for m in form.params] + [f"`{f} = True`" for f in sorted(form.flags)]
    return ", ".join(names[:-1]) + " and " + names[-1]


def _flag(node: ast.Assign, form: Form) -> dict[str, bool]:
    """``generate_vmap_rule = True``: a flag of the form, set to a plain True or False."""
    [target] = node.targets if len(node.targets) == 1 else [None]
    if not (isinstance(target, ast.Name) and target.id in form.flags and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, bool)):
        raise Refused(f"the class may set only {', '.join(sorted(form.flags))} (to True or False) besides its "
                      "methods.", node.lineno)
    return {target.id: node.value.value}


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


def _check_method(fn: ast.FunctionDef, form: Form) -> None:
    if [ast.unparse(d) for d in fn.decorator_list] != ["staticmethod"]:
        raise Refused(f"put exactly `@staticmethod` above `def {fn.name}` (no other decorators).", fn.lineno)
    a = fn.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults or a.kw_defaults:
        raise Refused(f"`{fn.name}` takes plain parameters only (no defaults, *args or **kwargs).", fn.lineno)
    params, want = [p.arg for p in a.args], form.params[fn.name]
    has_ctx = want[0] == "ctx"
    if len(params) != len(want) or (has_ctx and params[0] != "ctx"):
        count = f"{len(want)} parameter{'s' if len(want) > 1 else ''}"
        raise Refused(f"`{fn.name}` must take {count}, like `def {fn.name}({', '.join(want)})`.", fn.lineno)
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
    _Checker(params, assigned, form, has_ctx).check_body(body)


def _is_none_check(node: ast.Compare) -> bool:
    """``x is None`` or ``x is not None``, and nothing else with ``is``."""
    return all(isinstance(op, ast.Is | ast.IsNot) for op in node.ops) and all(
        isinstance(c, ast.Constant) and c.value is None for c in node.comparators)


class _Checker:
    """Walks one method's body: every node must be of an allowed type and pass its own rule."""

    def __init__(self, params: list[str], assigned: set[str], form: Form, has_ctx: bool = True) -> None:
        self.ctx, self.names, self.form = (params[0] if has_ctx else None), set(params) | assigned, form

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
        elif isinstance(node, ast.Attribute):
            return self.attribute(node, called=False)
        elif isinstance(node, ast.Call):
            return self.call(node)
        elif isinstance(node, ast.Compare) and self.form.none_checks and _is_none_check(node):
            return [node.left]
        elif isinstance(node, ast.keyword) and node.arg not in KEYWORDS:
            raise Refused(f"the only keyword arguments are {', '.join(sorted(KEYWORDS))} (as in clamp).",
                          node.value.lineno)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert) and isinstance(node.operand,
                                                                                               ast.Constant):
            raise Refused("`~` flips a mask tensor, as in `~(input > 0)`; for True or False use `not`.", node.lineno)
        elif problem := number_problem(node):  # a literal, an exponent or an index (guard.py)
            raise Refused(problem, node.lineno)
        return None

    def call(self, node: ast.Call) -> list:
        if not isinstance(node.func, ast.Attribute):
            name = node.func.id if isinstance(node.func, ast.Name) else type(node.func).__name__
            raise Refused(f"you can call `torch.` functions, tensor methods and `ctx.` methods such as "
                          f"`ctx.save_for_backward`; not `{name}`.", node.lineno)
        if ast.unparse(node.func) == "torch.where" and (len(node.args) != 3 or node.keywords):
            raise Refused("`torch.where` takes three arguments: `torch.where(mask, value_if_true, value_if_false)`.",
                          node.lineno)
        return [*self.attribute(node.func, called=True), *node.args, *node.keywords]

    def attribute(self, node: ast.Attribute, *, called: bool) -> list:
        attr, owner, form = node.attr, node.value, self.form
        if attr.startswith("_"):
            raise Refused(f"attributes starting with _ are not allowed (`{attr}`).", node.lineno)
        root = owner  # a path below torch (torch.hub.load, torch.ops.aten.relu) is refused; torch.exp(x).clamp
        while isinstance(root, ast.Attribute):  # is a tensor's method, its owner checked like any expression
            root = root.value
        allowed = ", ".join(sorted(form.torch_functions))
        if root is not owner and isinstance(root, ast.Name) and root.id == "torch":
            raise Refused(f"`{ast.unparse(node)[:60]}` is not one of the functions this lesson allows: {allowed}.",
                          node.lineno)
        if isinstance(owner, ast.Name) and owner.id == "torch":
            if attr not in form.torch_functions or not called:
                raise Refused(f"`torch.{attr}` is not one of the functions this lesson allows: {allowed}; call "
                              "them, e.g. `torch.exp(x)`.", node.lineno)
            return []
        if isinstance(owner, ast.Name) and owner.id == self.ctx:
            if attr not in (form.ctx_calls if called else form.ctx_attributes):
                offered = [f"`{self.ctx}.{c}(...)`" for c in sorted(form.ctx_calls)]
                offered += [f"`{self.ctx}.{a}`" for a in sorted(form.ctx_attributes)]
                raise Refused(f"`{self.ctx}.{attr}` is not available: use {', '.join(offered[:-1])} and "
                              f"{offered[-1]}.", node.lineno)
            return []
        if attr not in form.tensor_methods or not called:
            raise Refused(f"`.{attr}` is not allowed: the tensor methods here are "
                          f"{', '.join(sorted(form.tensor_methods))}, called as in `x.clamp(min=0)`.", node.lineno)
        return [owner]
