"""Deliberately broken backwards: each is a bug students really write. Lesson 1 lists them beside the
correct Functions (``functions.FUNCTIONS``), so gradcheck, the X-ray and training can show what each bug does.
"""

from __future__ import annotations

import torch
from torch.autograd import Function


class ReLUNoChainRule(Function):
    """BUG: returns ReLU's slope but forgets to multiply by ``grad_output`` (no chain rule)."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return (input > 0).to(grad_output.dtype)  # should be grad_output * (input > 0)


class ReLUWrongComparison(Function):
    """BUG: zeroes the gradient where the input was *positive* (comparison flipped)."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input > 0] = 0  # should be input < 0
        return grad_input


class ReLUMaskFromGradOutput(Function):
    """BUG: takes the mask from ``grad_output`` instead of the saved input."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        grad_input = grad_output.clone()
        grad_input[grad_output < 0] = 0  # should be input < 0
        return grad_input


class SigmoidSignError(Function):
    """BUG: writes s * (s - 1) instead of s * (1 - s): the gradient has the wrong sign."""

    @staticmethod
    def forward(ctx, input):
        s = torch.sigmoid(input)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return grad_output * s * (s - 1)  # should be s * (1 - s)


class TanhDerivativeOfInput(Function):
    """BUG: uses 1 - x^2 (x the input) instead of 1 - tanh(x)^2: the gradient of another function."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return torch.tanh(input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * (1 - input * input)  # should be 1 - tanh(input)**2


class SoftplusExpGradient(Function):
    """BUG: returns exp(x), the derivative of exp, instead of sigmoid(x), that of softplus."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return torch.nn.functional.softplus(input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * torch.exp(input)  # should be torch.sigmoid(input)
