"""Lesson 8's challenges: one for each part of the ``autograd.Function`` API where a student can write the
Function (``needs_input_grad`` has lesson 6's "a · b"). Each starts from a skeleton or a broken Function, asks
for the lesson's own Function (its solution is that class's real source, ``inspect.getsource``), names the form
its class must have (``validator.Form``: the methods, and what they may call beyond lesson 6's list) and the
built-in op it must match. ``api_judge.py`` runs the checks each part needs.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from .. import function_api
from ..functions import MyTanh
from ..maths import RELU, SIGMOID, SINH, SORT, TANH, MathFunction, OfMaths
from .validator import CTX_ATTRIBUTES, TENSOR_METHODS, TORCH_FUNCTIONS, Form, classic

MODERN = (("forward", ("input",)), ("setup_context", ("ctx", "inputs", "output")), ("backward", ("ctx", "grad_output")))


@dataclass(frozen=True)
class ApiChallenge(OfMaths):
    """One exercise of lesson 8: ``form`` is the class it asks for, ``maths`` the built-in it must match."""

    key: str  # the part's key (the page's fa_part)
    title: str
    task: str  # markdown, ours
    skeleton: str
    solution: str
    hint: str
    form: Form
    maths: MathFunction


def source(cls) -> str:
    """A class's real source: what the lesson's page shows and what "Start from the lesson's Function" loads."""
    return inspect.getsource(cls)


FORWARD_SKELETON = '''class MySigmoidJvp(torch.autograd.Function):
    @staticmethod
    def forward(input):
        return torch.sigmoid(input)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        # keep what jvp needs, too

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return grad_output * s * (1 - s)

    @staticmethod
    def jvp(ctx, tangent):
        ...
'''

SORT_SKELETON = '''class MySort(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        # 1. backward should get None, not zeros, for an output nobody used
        values, indices = torch.sort(input)
        # 2. the indices get no gradient: say so
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        ...
'''

_API_CHALLENGES = [
    ApiChallenge(
        "double_backward", "sinh, differentiable twice",
        "This `MySinh` saves e^x and e^-x from forward. gradcheck passes, gradgradcheck fails, and a "
        "Hessian-vector product through it is wrong. Make its backward differentiable twice.",
        source(function_api.MySinhSavedExp), source(function_api.MySinh),
        "Tensors made inside forward are constants to autograd. Save the *input* instead, and compute cosh "
        "from it in backward: `e = torch.exp(input)`, then `(e + 1 / e) / 2`.",
        classic(1), SINH),
    ApiChallenge(
        "forward_mode", "sigmoid, in forward mode",
        "Write `jvp`: given how the input moves (`tangent`), return how the output moves. It reads "
        "`ctx.saved_tensors` too, which holds what `setup_context` kept with `ctx.save_for_forward`.",
        FORWARD_SKELETON, source(function_api.MySigmoidJvp),
        "In setup_context: `ctx.save_for_forward(output)`. In jvp: `(s,) = ctx.saved_tensors`, then "
        "`return tangent * s * (1 - s)`.",
        Form(MODERN + (("jvp", ("ctx", "tangent")),), ctx_calls=frozenset({"save_for_backward", "save_for_forward"})),
        SIGMOID),
    ApiChallenge(
        "in_place", "ReLU, in place",
        "This ReLU changes its input in place without telling autograd. Another in-place op after it is "
        "refused, and its input, used after the call, gets a wrong gradient. Fix it.",
        source(function_api.MyReLUInPlaceUnmarked), source(function_api.MyReLUInPlace),
        "One line in forward, after the change: `ctx.mark_dirty(input)`.",
        Form(classic(1).methods, ctx_calls=frozenset({"save_for_backward", "mark_dirty"})), RELU),
    ApiChallenge(
        "non_differentiable", "sort, with its indices",
        "Return the sorted values and their indices, as `torch.sort` does. Mark the indices as "
        "non-differentiable, turn off materialized grads, and write backward.",
        SORT_SKELETON, source(function_api.MySort),
        "`ctx.set_materialize_grads(False)` and `ctx.mark_non_differentiable(indices)` in forward. In backward, "
        "return None when `grad_values is None`; otherwise send each gradient back where its value came from: "
        "`grad_values.take(torch.argsort(indices))`.",
        Form((("forward", ("ctx", "input")), ("backward", ("ctx", "grad_values", "grad_indices"))),
             ctx_calls=frozenset({"save_for_backward", "mark_non_differentiable", "set_materialize_grads"}),
             ctx_attributes=CTX_ATTRIBUTES, torch_functions=TORCH_FUNCTIONS | {"sort", "argsort"},
             tensor_methods=TENSOR_METHODS | {"take"}, none_checks=True),
        SORT),
    ApiChallenge(
        "torch_func", "tanh, for torch.func",
        "Lesson 1's `MyTanh`, in the classic form, which `torch.func` refuses. Rewrite it in the modern form: "
        "`forward(input)` without ctx, and `setup_context(ctx, inputs, output)`. Let vmap derive how to batch "
        "it.",
        source(MyTanh), source(function_api.MyTanhModern),
        "`forward(input)` returns `torch.tanh(input)`; `setup_context` saves `output`; add "
        "`generate_vmap_rule = True` to the class.",
        Form(MODERN, flags=frozenset({"generate_vmap_rule"})), TANH),
]

API_CHALLENGES: dict[str, ApiChallenge] = {c.key: c for c in _API_CHALLENGES}
