"""The rest of the ``torch.autograd.Function`` API, one small Function per part of lesson 8.

* **Double backward.** ``MySinh``'s backward is made of differentiable torch ops, so autograd can
  differentiate it again (``gradgradcheck``, a Hessian-vector product). ``MySinhSavedExp`` saves
  intermediates instead and gets the second derivative wrong; ``MySinhOnce`` says it cannot be differentiated
  twice (``@once_differentiable``), and autograd refuses when asked to.
* **Forward mode.** ``MySigmoidJvp`` has a ``jvp`` beside its ``backward``.
* **In place.** ``MyReLUInPlace`` changes its input and says so (``ctx.mark_dirty``); ``MyReLUInPlaceUnmarked``
  does not.
* **Non-differentiable outputs.** ``MySort`` returns indices, which get no gradient.
* **``needs_input_grad``.** ``MyMatMul`` computes only the gradients someone needs; ``MyMatMulEveryGrad``
  computes both.
* **``torch.func``.** ``MyTanhModern`` is written in the modern form, which ``vmap`` and ``grad`` need.

The modern form (``forward`` without ``ctx``, then ``setup_context``) is used where ``torch.func`` needs it:
``torch.func.jvp``, ``vmap`` and ``grad`` call ``forward`` as plain maths and ``setup_context`` apart, and they
refuse a Function written in the classic form. Every class here but ``MySinhOnce`` and the matmuls keeps to what
the lesson's code editor allows, so a student can start from it, break it and check it again.
"""

from __future__ import annotations

import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable

# ---- Double backward ----


class MySinh(Function):
    """sinh(x) = (e^x - e^-x) / 2, with a backward autograd can differentiate again."""

    @staticmethod
    def forward(ctx, input):
        """In: ``input``, any shape. Out: sinh(input), same shape.

        Saves the *input*: backward recomputes what it needs from it, with torch ops autograd records when
        asked to build a graph of the backward itself (``create_graph=True``)."""
        ctx.save_for_backward(input)
        return (torch.exp(input) - torch.exp(-input)) / 2

    @staticmethod
    def backward(ctx, grad_output):
        """In: ``grad_output``. Out: ``grad_output * cosh(input)``.

        Each op here works on tensors autograd tracks (the saved input, grad_output), so this backward is
        differentiable too: that is all double backward needs."""
        (input,) = ctx.saved_tensors
        return grad_output * (torch.exp(input) + torch.exp(-input)) / 2


class MySinhSavedExp(Function):
    """The same sinh, saving e^x and e^-x from forward: its first derivative is right, its second is not."""

    @staticmethod
    def forward(ctx, input):
        """Out: sinh(input). Saves e^x and e^-x: intermediates, neither input nor output."""
        e = torch.exp(input)
        inverse = torch.exp(-input)
        ctx.save_for_backward(e, inverse)
        return (e - inverse) / 2

    @staticmethod
    def backward(ctx, grad_output):
        """Out: ``grad_output * cosh(input)``, from the saved intermediates.

        Forward ran without recording a graph, so to autograd e and inverse are constants: differentiating
        this backward again sees no way in which they depend on the input, and that part of the second
        derivative is lost (gradgradcheck fails)."""
        e, inverse = ctx.saved_tensors
        return grad_output * (e + inverse) / 2


class MySinhOnce(Function):
    """The same sinh, its backward marked ``@once_differentiable``: it may use anything (numpy, a C library),
    and autograd refuses to differentiate it a second time instead of giving a wrong answer."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return torch.sinh(input)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        """Runs with gradients off: its result carries an error node, raised if anyone differentiates it."""
        (input,) = ctx.saved_tensors
        return grad_output * torch.cosh(input)


# ---- Forward mode ----


class MySigmoidJvp(Function):
    """Sigmoid in both modes: ``backward`` (reverse mode) and ``jvp`` (forward mode), in the modern form."""

    @staticmethod
    def forward(input):
        """In: ``input``. Out: s = sigmoid(input). No ctx: forward is plain maths."""
        return torch.sigmoid(input)

    @staticmethod
    def setup_context(ctx, inputs, output):
        """After forward: keep s for both modes. ``save_for_forward`` is what ``jvp`` reads back from
        ``ctx.saved_tensors``, as ``save_for_backward`` is for ``backward``."""
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx, grad_output):
        """Reverse mode. In: grad_output = dLoss/dOutput. Out: grad_output * s * (1 - s) = dLoss/dInput."""
        (s,) = ctx.saved_tensors
        return grad_output * s * (1 - s)

    @staticmethod
    def jvp(ctx, tangent):
        """Forward mode. In: ``tangent``, how the input moves (same shape). Out: how the output moves,
        J·tangent; element-wise, J is diagonal with s * (1 - s) on it."""
        (s,) = ctx.saved_tensors
        return tangent * s * (1 - s)


# ---- In place ----


class MyReLUInPlace(Function):
    """ReLU that overwrites its input, as ``torch.relu_`` and ``nn.ReLU(inplace=True)`` do."""

    @staticmethod
    def forward(ctx, input):
        """In: ``input``, which this changes in place. Out: the same tensor, its negative entries now 0.

        ``ctx.mark_dirty(input)`` tells autograd the input was changed: the returned tensor is the input,
        with this Function's node as its new history, so later uses of it get the right gradient."""
        negative = input < 0
        input[negative] = 0  # in place: no new tensor
        ctx.mark_dirty(input)
        ctx.save_for_backward(negative)  # not the input: its old values are gone
        return input

    @staticmethod
    def backward(ctx, grad_output):
        """grad_input = grad_output, zeroed where the input was negative."""
        (negative,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[negative] = 0
        return grad_input


class MyReLUInPlaceUnmarked(Function):
    """The same in-place ReLU without ``ctx.mark_dirty``: autograd does not know the input changed."""

    @staticmethod
    def forward(ctx, input):
        """Changes ``input`` in place and returns it, without telling autograd."""
        negative = input < 0
        input[negative] = 0
        ctx.save_for_backward(negative)
        return input

    @staticmethod
    def backward(ctx, grad_output):
        (negative,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[negative] = 0
        return grad_input


# ---- Non-differentiable outputs ----


class MySort(Function):
    """Sort a vector, returning the values and the indices they came from, as ``torch.sort`` does."""

    @staticmethod
    def forward(ctx, input):
        """In: ``input``, a vector (n,). Out: ``values`` (n,) in ascending order and ``indices`` (n,), whole
        numbers: values[k] = input[indices[k]].

        An index has no gradient: ``mark_non_differentiable`` says so. ``set_materialize_grads(False)``: an
        output nobody used reaches backward as None, not as a tensor of zeros made for nothing."""
        ctx.set_materialize_grads(False)
        values, indices = torch.sort(input)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        """In: ``grad_values`` (n,), and ``grad_indices``, None here (nothing flows into an index). Out: each
        value's gradient sent back to where that value came from: grad_input[indices[k]] = grad_values[k].

        With materialized grads off, any of them may be None: when nothing reached the values, nothing goes
        back (gradcheck checks this case)."""
        if grad_values is None:
            return None
        (indices,) = ctx.saved_tensors
        return grad_values.take(torch.argsort(indices))  # argsort(indices): where each input went


# ---- needs_input_grad ----


class MyMatMul(Function):
    """a @ b, computing in backward only the gradients someone needs."""

    @staticmethod
    def forward(ctx, a, b):
        """In: a (N, K), b (K, M). Out: a @ b, (N, M)."""
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_output):
        """In: grad_output (N, M). Out: grad_a (N, K) and grad_b (K, M), or None for an input whose
        ``ctx.needs_input_grad`` is False (data, a frozen weight): one matrix product each, skipped when
        nobody needs it."""
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = grad_output @ b.T  # (N, M) @ (M, K) -> (N, K)
        if ctx.needs_input_grad[1]:
            grad_b = a.T @ grad_output  # (K, N) @ (N, M) -> (K, M)
        return grad_a, grad_b


class MyMatMulEveryGrad(Function):
    """The same a @ b, computing both gradients every time: autograd throws away the one nobody needs."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output @ b.T, a.T @ grad_output


# ---- torch.func ----


class MyTanhModern(Function):
    """tanh in the modern form, so that ``torch.func.vmap`` and ``torch.func.grad`` can run it."""

    generate_vmap_rule = True  # vmap runs forward and setup_context on the whole batch: forward is plain maths

    @staticmethod
    def forward(input):
        """In: ``input``. Out: t = tanh(input). No ctx: torch.func calls it as a plain function."""
        return torch.tanh(input)

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Called after forward with its inputs and its output: save t for backward."""
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        """grad_input = grad_output * (1 - t^2)."""
        (t,) = ctx.saved_tensors
        return grad_output * (1 - t * t)
