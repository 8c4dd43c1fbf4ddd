"""Hostile submissions for lesson 6's validator: each one must be refused before anything runs. Shared by
tests/grading/test_validator.py (which checks every one is refused, with a clear message) and
bench/student_code.py (which times the refusals)."""

from __future__ import annotations

import textwrap

from autodiff_core.grading.challenges import CHALLENGES

TEMPLATE = '''class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
{body}
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * (input > 0)
'''


def inside(body: str) -> str:
    """A working ReLU with ``body`` pasted into forward (line 5 onwards)."""
    return TEMPLATE.format(body=textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8))


RELU = inside("pass")
DEEP_IFS = "\n".join("    " * i + "if input:" for i in range(30)) + "\n" + "    " * 30 + "pass"

HOSTILE_BODIES = {
    # dunder walks and private attributes
    "dunder walk": "x = ().__class__.__bases__[0].__subclasses__()",
    "class of a tensor": "x = input.__class__",
    "mro": "x = input.__class__.__mro__",
    "ctx dict": "x = ctx.__dict__",
    "reduce_ex": "x = input.__reduce_ex__(2)",
    "attribute of a torch function": "x = torch.where.__self__",
    "saved tensor's class": "x = ctx.saved_tensors[0].__class__",
    "builtins name": "x = __builtins__",
    "module name": "x = __name__",
    "private torch": "x = torch._C",
    # imports and the builtins that reach the system
    "__import__": "x = __import__('os')",
    "import os": "import os",
    "from import": "from os import system",
    "os": "x = os.system('ls')",
    "sys": "x = sys.modules",
    "open": "x = open('/etc/passwd')",
    "getattr": "x = getattr(input, 'data')",
    "globals": "x = globals()",
    "eval": "x = eval('1')",
    "exec": "x = exec('1')",
    "compile": "x = compile('1', 'f', 'exec')",
    "vars": "x = vars()",
    "dir": "x = dir()",
    "print": "x = print(input)",
    "type": "x = type(input)",
    "conditional import": "x = input if input else __import__('os')",
    # chains through torch
    "torch.load": "x = torch.load('f')",
    "torch.save": "x = torch.save(input, 'f')",
    "torch.hub": "x = torch.hub.load('a', 'b')",
    "torch.ops": "x = torch.ops.aten.relu(input)",
    "torch.utils": "x = torch.utils.data",
    "torch.from_numpy": "x = torch.from_numpy(input)",
    "torch.autograd.grad": "x = torch.autograd.grad(input, input)",
    "torch.nn.functional": "x = torch.nn.functional.relu(input)",
    "torch.zeros": "x = torch.zeros(1000000)",
    "torch alias": "t = torch",
    "uncalled torch function": "x = torch.exp",
    # a tensor method on a torch call is allowed; the call itself is checked as usual
    "method on a torch function not allowed": "x = torch.zeros(1000000).clamp(min=0)",
    "method on a torch path": "x = torch.hub.load('a', 'b').clamp(min=0)",
    "private method on a torch call": "x = torch.exp(input).__reduce_ex__(2)",
    "method not allowed on a torch call": "x = torch.exp(input).data_ptr()",
    "attribute walk from a torch call": "x = torch.exp(input).grad_fn.next_functions",
    "uncalled method on a torch call": "x = torch.sigmoid(input).clamp",
    # tensor and ctx methods outside the allow-list
    "data_ptr": "x = input.data_ptr()",
    "numpy": "x = input.numpy()",
    "storage": "x = input.untyped_storage()",
    "tolist": "x = input.tolist()",
    "grad_fn walk": "x = input.grad_fn.next_functions",
    "expand": "x = input.expand(100000, 100000)",
    "repeat": "x = input.repeat(100000)",
    "resize_": "x = torch.zeros_like(input).resize_(1000000)",
    "uncalled method": "x = input.sum",
    "ctx attribute store": "ctx.saved = input",
    "ctx.saved_variables": "x = ctx.saved_variables",
    "ctx.mark_dirty": "ctx.mark_dirty(input)",
    # recursion: the Function and its methods cannot be named
    "recursion through apply": "x = MyReLU.apply(input)",
    "recursion through forward": "x = forward(ctx, input)",
    # huge numbers
    "10**10**10": "x = 10 ** 10 ** 10",
    "9**99999": "x = 9 ** 99999",
    "huge exponent on a tensor": "x = input ** 1000000",
    "huge integer": "x = 99999999999999999999999",
    "infinite float": "x = 1e400",
    "complex": "x = 1j",
    # statements and syntax that do not belong
    "global": "global torch",
    "lambda": "x = lambda: 0",
    "list comprehension": "x = [i for i in range(10)]",
    "generator": "x = sum(i for i in range(10))",
    "for loop": "for i in range(10):\n    pass",
    "while loop": "while True:\n    pass",
    "try": "try:\n    pass\nexcept Exception:\n    pass",
    "with": "with open('f') as f:\n    pass",
    "raise": "raise SystemExit",
    "assert": "assert False",
    "del": "del input",
    "walrus": "x = (y := 3)",
    "yield": "x = yield",
    "list": "x = [input]",
    "dict": "x = {1: 2}",
    "slice": "x = input[::2]",
    "tuple index": "x = input[None, 0]",
    "starred call": "x = input.clamp(*[0])",
    "kwargs splat": "x = input.clamp(**{'min': 0})",
    "unknown keyword": "x = input.clamp(out=input)",
    "bare expression": "input + 1",
    "in": "x = 1 in input",
    # the bound on the work done (the run-time guards catch what cannot be seen here)
    "one-argument where": "x = torch.where(input > 0)",
    "two-argument where": "x = torch.where(input > 0, input)",
    "where with a keyword": "x = torch.where(input > 0, input, min=0)",
    "index with None": "x = input[None]",
    "index with True": "x = input[True]",
    "index with a float": "x = input[0.5]",
    "index with a negative float": "x = input[-0.5]",
    "index with a huge number": "x = ctx.saved_tensors[1000000]",
    "invert a bool": "x = ~True",
    # strings and formatting tricks
    "f-string": "x = f'{input}'",
    "percent format": "x = '%s' % input",
    "str.format": "x = '{0.__class__}'.format(input)",
    "bytes": "x = b'bytes'",
    # unicode look-alikes (Python folds them with NFKC: these would mean open, eval, __class__)
    "fullwidth open": "x = ｏｐｅｎ('f')",
    "fullwidth eval": "x = ｅｖａｌ('1')",
    "fullwidth dunder": "x = input.\uff3f\uff3fclass\uff3f\uff3f",
    "mathematical letters": "\U0001d431 = 1",
    # deep nesting
    "deep parentheses": "x = " + "(" * 300 + "1" + ")" * 300,
    "deep unary": "x = " + "-" * 1000 + "1",
    "deep ifs": DEEP_IFS,
    "deep arithmetic": "x = " + " + ".join(["(input * (input + (input - (input * (input + 1)))))"] * 1) + "+ (" * 30
                       + "1" + ")" * 30,
}

HOSTILE_MODULES = {
    "very long source": RELU + "# " + "x" * 5000 + "\n",
    "many lines": RELU + "\n" * 500,
    "many lines ended by \\r": RELU + "\r" * 500,
    "many lines ended by \\r\\n": RELU + "\r\n" * 500,
    "many lines of \\r alone": RELU.replace("\n", "\r") + "\r" * 200,
    "form feeds in a comment": RELU + "# " + "\x0c" * 200 + "\n",
    "line separators in a comment": RELU + "# " + "\u2028" * 200 + "\n",
    "null byte": RELU.replace("pass", "x = 1\x00"),
    "not text": None,
    "top-level code": RELU + "print(1)\n",
    "top-level import": "import os\n" + RELU,
    "two classes": RELU + "\n" + RELU.replace("MyReLU", "Other"),
    "class decorator": "@dataclass\n" + RELU,
    "extra method decorator": RELU.replace("    @staticmethod\n    def forward", "    @staticmethod\n    @property\n"
                                                                                    "    def forward", 1),
    "jit decorator": RELU.replace("    @staticmethod\n    def forward", "    @torch.jit.script\n    def forward", 1),
    "no staticmethod": RELU.replace("    @staticmethod\n    def forward", "    def forward", 1),
    "wrong base": RELU.replace("(torch.autograd.Function)", "(object)"),
    "metaclass": RELU.replace("(torch.autograd.Function)", "(torch.autograd.Function, metaclass=type)"),
    "private class name": RELU.replace("MyReLU", "_Hidden"),
    "default argument": RELU.replace("def forward(ctx, input)", "def forward(ctx, input=__import__('os'))"),
    "annotation": RELU.replace("def forward(ctx, input)", "def forward(ctx, input: __import__('os').system('ls'))"),
    "varargs": RELU.replace("def forward(ctx, input)", "def forward(ctx, *input)"),
    "third method": RELU + "\n    @staticmethod\n    def setup_context(ctx, inputs, output):\n        pass\n",
    "class attribute": RELU.replace("    @staticmethod\n    def forward", "    SLOPE = __import__('os')\n\n"
                                                                          "    @staticmethod\n    def forward", 1),
    "async method": RELU.replace("def backward", "async def backward"),
    "infinite recursion": RELU.replace("return grad_output * (input > 0)", "return backward(ctx, grad_output)"),
    "syntax error": RELU.replace("return input.clamp(min=0)", "return input.clamp(min=0"),
    "empty": "",
    "skeleton left as is": CHALLENGES["relu"].skeleton,
}

HOSTILE = {**{k: inside(v) for k, v in HOSTILE_BODIES.items()}, **HOSTILE_MODULES}
