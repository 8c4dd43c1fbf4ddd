"""The validator of lesson 6: hostile submissions are refused with a clear message before anything runs;
legitimate solutions pass, judged against PyTorch's own ops."""

from __future__ import annotations

import ast
from types import SimpleNamespace

import pytest
import torch

from autodiff_core.grading import validator
from autodiff_core.grading.challenges import CHALLENGES
from autodiff_core.grading.judge import check, judge
from autodiff_core.grading.validator import Refused, load, validate
from testkit.hostile import HOSTILE, RELU, inside


def test_there_are_at_least_sixty_hostile_submissions():
    assert len(HOSTILE) >= 60


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_submission_is_refused_before_anything_runs(name, monkeypatch):
    ran = []
    monkeypatch.setattr(validator, "compile_function", lambda *a: ran.append("compiled"))
    with pytest.raises(Refused) as caught:
        validate(HOSTILE[name])
    message = str(caught.value)
    assert len(message) > 20 and "Traceback" not in message and "File " not in message
    assert not ran


@pytest.mark.parametrize("name", ["dunder walk", "open", "torch.load", "10**10**10", "lambda", "fullwidth open"])
def test_refusal_names_the_line(name):
    with pytest.raises(Refused) as caught:
        validate(HOSTILE[name])
    assert caught.value.line == 5 and str(caught.value).startswith("Line 5: ")


@pytest.mark.parametrize("ending", ["\n", "\r", "\r\n"])
def test_every_newline_counts_towards_the_line_limit(ending):
    """Python ends a line at \\n, \\r or \\r\\n; 208 lines ended by \\r alone used to pass (only \\n was counted)."""
    lines = RELU.rstrip("\n").split("\n")
    padded = lines + ["# a comment"] * (validator.MAX_LINES - len(lines))
    validate(ending.join(padded) + ending)  # exactly MAX_LINES lines pass
    with pytest.raises(Refused, match=f"more than {validator.MAX_LINES} lines"):
        validate(ending.join([*padded, "# one more"]) + ending)


@pytest.mark.parametrize("breaker", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
def test_line_breaks_python_keeps_in_a_comment_count_too(breaker):
    """Inside a comment Python reads these as text, str.splitlines() as line breaks; the limit counts them
    (counting more lines than Python sees is the safe side)."""
    source = RELU + "# " + breaker * validator.MAX_LINES + "\n"
    assert ast.parse(source)  # Python itself accepts it
    with pytest.raises(Refused, match=f"more than {validator.MAX_LINES} lines"):
        validate(source)


def test_where_needs_its_three_arguments():
    with pytest.raises(Refused) as caught:
        validate(HOSTILE["one-argument where"])
    assert caught.value.line == 5 and "three arguments" in str(caught.value)


def test_indices_are_masks_or_small_whole_numbers():
    for name in ("index with None", "index with True", "index with a float", "index with a huge number"):
        with pytest.raises(Refused) as caught:
            validate(HOSTILE[name])
        assert caught.value.line == 5 and "index with a mask" in str(caught.value), name
    load(inside("x = input[input > 0]\ny = ctx.needs_input_grad[-1]"))  # both kinds pass


def test_refused_code_never_reaches_the_sandbox():
    class NoSandbox:
        def run(self, *args, **kwargs):
            raise AssertionError("a refused submission must not be run")

    for name in ("dunder walk", "__import__", "infinite recursion", "very long source"):
        verdict = check(HOSTILE[name], "relu", sandbox=NoSandbox())
        assert not verdict.passed and verdict.headline == "Your code was not run." and verdict.reasons


def test_messages_say_what_to_do():
    cases = {"for loop": "no loops", "__import__": "you can call `torch.` functions",
             "dunder walk": "starting with _ are not allowed", "module name": "starting with _ are not allowed",
             "torch.hub": "is not one of the functions", "fullwidth open": "ASCII",
             "no staticmethod": "@staticmethod", "skeleton left as is": "replace `...`",
             "10**10**10": "exponent", "very long source": "limit is 4,000"}
    for name, words in cases.items():
        with pytest.raises(Refused) as caught:
            validate(HOSTILE[name])
        assert words in str(caught.value), (name, str(caught.value))


LEGIT = {
    **{f"reference {key}": (key, c.solution) for key, c in CHALLENGES.items()},
    "relu with where": ("relu", inside("pass").replace("grad_output * (input > 0)",
                                                       "grad_output * torch.where(input > 0, 1.0, 0.0)")),
    "relu with maximum": ("relu", RELU.replace("input.clamp(min=0)", "torch.maximum(input, torch.zeros_like(input))")),
    "relu with docstrings": ("relu", RELU.replace("class MyReLU(torch.autograd.Function):\n",
                                                  'class MyReLU(torch.autograd.Function):\n    """ReLU."""\n\n')
                             .replace("def backward(ctx, grad_output):\n",
                                      'def backward(ctx, grad_output):\n        """Mask it."""\n  # comment\n')),
    "relu base named Function": ("relu", RELU.replace("(torch.autograd.Function)", "(Function)")),
    "sigmoid by hand": ("sigmoid", CHALLENGES["sigmoid"].solution.replace("torch.sigmoid(input)",
                                                                          "1 / (1 + torch.exp(-input))")),
    "tanh with a power": ("tanh", CHALLENGES["tanh"].solution.replace("1 - t * t", "1 - t ** 2")),
    "softplus divided": ("softplus", CHALLENGES["softplus"].solution.replace(
        "grad_output * torch.sigmoid(input)", "grad_output / (1 + torch.exp(-input))")),
    "cube by products": ("cube", CHALLENGES["cube"].solution.replace("input ** 3", "input * input * input")
                         .replace("grad_output * 3 * input ** 2", "3 * input.pow(2) * grad_output")),
    "abs with where": ("abs", CHALLENGES["abs"].solution
                       .replace("input.abs()", "torch.where(input >= 0, input, -input)")
                       .replace("torch.sign(input)", "input.sign()")),
    "clamp with a product of masks": ("clamp", CHALLENGES["clamp"].solution.replace(
        "grad_input = grad_output.clone()\n        grad_input[(input < -1) | (input > 1)] = 0\n"
        "        return grad_input",
        "return grad_output * ((input > -1) & (input < 1))")),
    "clamp positional": ("clamp", CHALLENGES["clamp"].solution.replace("input.clamp(min=-1, max=1)",
                                                                       "torch.clamp(input, -1, 1)")),
    "leaky relu in place on a clone": ("leaky_relu", CHALLENGES["leaky_relu"].solution.replace(
        "return grad_output * torch.where(input >= 0, 1.0, 0.01)",
        "grad_input = grad_output.clone()\n        grad_input[input < 0] *= 0.01\n        return grad_input")),
    "silu saving both": ("silu", CHALLENGES["silu"].solution
                         .replace("ctx.save_for_backward(input)\n        return input * torch.sigmoid(input)",
                                  "s = torch.sigmoid(input)\n        ctx.save_for_backward(input, s)\n"
                                  "        return input * s")
                         .replace("(input,) = ctx.saved_tensors\n        s = torch.sigmoid(input)",
                                  "input, s = ctx.saved_tensors")),
    "multiply with conditional expressions": ("multiply", CHALLENGES["multiply"].solution.replace(
        "grad_a = None\n        grad_b = None\n        if ctx.needs_input_grad[0]:\n"
        "            grad_a = grad_output * b\n        if ctx.needs_input_grad[1]:\n"
        "            grad_b = grad_output * a",
        "grad_a = grad_output * b if ctx.needs_input_grad[0] else None\n"
        "        grad_b = grad_output * a if ctx.needs_input_grad[1] else None")),
    "multiply with else branches": ("multiply", CHALLENGES["multiply"].solution.replace(
        "grad_a = None\n        grad_b = None\n        if ctx.needs_input_grad[0]:\n"
        "            grad_a = grad_output * b\n",
        "if ctx.needs_input_grad[0]:\n            grad_a = grad_output * b\n        else:\n"
        "            grad_a = None\n"
        "        grad_b = None\n")),
    "exponent as a negative literal": ("sigmoid", CHALLENGES["sigmoid"].solution.replace(
        "torch.sigmoid(input)", "(1 + torch.exp(-input)) ** -1")),
    "a method on a torch call": ("sigmoid", CHALLENGES["sigmoid"].solution.replace(
        "torch.sigmoid(input)", "torch.sigmoid(input).clamp(min=0)")),
    "a mask and needs_input_grad": ("relu", RELU.replace("grad_output * (input > 0)",
                                                         "grad_output * ((input > 0) & ctx.needs_input_grad[0])")),
    "a mask or not needs_input_grad": ("clamp", CHALLENGES["clamp"].solution.replace(
        "(input < -1) | (input > 1)", "(input < -1) | (input > 1) | (not ctx.needs_input_grad[0])")),
}


def test_there_are_at_least_twenty_legitimate_solutions():
    sources = [source for _, source in LEGIT.values()]
    assert len(LEGIT) >= 20 and len(set(sources)) == len(sources)  # every variant really differs


@pytest.mark.parametrize("name", list(LEGIT))
def test_legitimate_solution_passes(name):
    key, source = LEGIT[name]
    verdict = judge(source, key)
    assert verdict.passed, (verdict.headline, verdict.reasons, verdict.notes)


def test_a_compiled_function_matches_pytorch_in_float32_too():
    fn = load(CHALLENGES["silu"].solution)
    x = torch.randn(64, 5, requires_grad=True)
    y = torch.randn(64, 5)
    (fn.apply(x) * y).sum().backward()
    ours = x.grad.clone()
    x.grad = None
    (torch.nn.functional.silu(x) * y).sum().backward()
    torch.testing.assert_close(ours, x.grad)


def test_compiled_code_sees_no_builtins_and_a_torch_with_only_the_allowed_functions():
    fn = load(RELU)
    globals_ = fn.forward.__globals__
    assert list(globals_["__builtins__"]) == ["__import__"]  # hands torch's C code loaded modules only
    assert globals_["__builtins__"]["__import__"]("torch") is torch
    with pytest.raises(ImportError):
        globals_["__builtins__"]["__import__"]("antigravity")
    assert set(vars(globals_["torch"])) == set(validator.TORCH_FUNCTIONS)


@pytest.mark.timeout(60)
def test_integer_arithmetic_cannot_grow_without_bound():
    """Squaring an int 40 times would build a number of 2**40 bits and never finish. Number literals are
    compiled as floats and every arithmetic operand passes through float(), so it ends at inf at once."""
    body = "x = ctx.needs_input_grad[0] + ctx.needs_input_grad[0] + 1000000\n" + "x = x * x\n" * 40
    verdict = judge(inside(body), "relu")
    assert verdict.passed, verdict.reasons


def test_an_error_in_student_code_gives_its_line_not_our_stack():
    source = RELU.replace("return grad_output * (input > 0)", "y = grad_output.clamp(min=input)\n"
                          "        return torch.where(input > 0, y)")
    verdict = judge(source, "relu")
    assert not verdict.passed and verdict.error_line is not None
    assert verdict.reasons[0].startswith(f"Line {verdict.error_line}: ")
    assert "Traceback" not in verdict.reasons[0] and "autodiff_core" not in verdict.reasons[0]


def test_a_tensor_method_on_an_allowed_torch_call_is_allowed_and_the_call_checked_as_usual():
    """`torch.sigmoid(input).clamp(min=0)` was refused as if `torch.sigmoid(input).clamp` were a torch
    function: a method on what a torch call returns is a tensor's method, and the call is checked as ever."""
    fn = load(RELU.replace("input.clamp(min=0)", "torch.sigmoid(input).clamp(min=0.6)"))
    x = torch.randn(32, dtype=torch.float64)
    torch.testing.assert_close(fn.apply(x), torch.sigmoid(x).clamp(min=0.6))
    load(RELU.replace("input.clamp(min=0)", "torch.where(input > 0, input, 0.0).clamp(max=1).exp()"))
    cases = {"method on a torch function not allowed": "`torch.zeros` is not one of the functions",
             "method on a torch path": "`torch.hub.load` is not one of the functions",
             "private method on a torch call": "starting with _ are not allowed",
             "method not allowed on a torch call": "`.data_ptr` is not allowed",
             "attribute walk from a torch call": "`.next_functions` is not allowed",
             "uncalled method on a torch call": "`.clamp` is not allowed",
             "torch.ops": "`torch.ops.aten.relu` is not one of the functions"}
    for name, words in cases.items():
        with pytest.raises(Refused) as caught:
            validate(HOSTILE[name])
        assert caught.value.line == 5 and words in caught.value.message, (name, caught.value.message)


def test_and_and_or_keep_a_python_bool_so_a_mask_combines_with_needs_input_grad():
    """`mask & ctx.needs_input_grad[0]` failed: every operand became a float first, and a mask does not combine
    with 1.0. `&` and `|` (and `&=`, `|=`) keep a bool; every other operator still makes it a float."""
    source = RELU.replace("return grad_output * (input > 0)",
                          "keep = (input > 0) & ctx.needs_input_grad[0]\n"
                          "        keep |= not ctx.needs_input_grad[0]\n"
                          "        both = ctx.needs_input_grad[0] & True\n"
                          "        return grad_output * keep if both else grad_output * (True + True)")
    fn = load(source)
    x = torch.randn(50, dtype=torch.float64, requires_grad=True)
    fn.apply(x).sum().backward()
    assert torch.equal(x.grad, (x > 0).double())  # keep was the mask, and both was True
    ctx = SimpleNamespace(saved_tensors=(x.detach(),), needs_input_grad=(False,))  # every branch the other way
    assert torch.equal(fn.backward(ctx, torch.ones(50, dtype=torch.float64)), torch.full_like(x, 2.0))


def solution(key: str, old: str, new: str) -> str:
    source = CHALLENGES[key].solution
    assert old in source
    return source.replace(old, new)


VERDICTS = {  # a classic mistake -> the words the verdict must say
    "forgot grad_output": ("relu", solution("relu", "grad_output.clone()", "torch.ones_like(input)"),
                           "forgot grad_output"),
    "wrong sign where input < 0": ("leaky_relu", solution("leaky_relu", "1.0, 0.01)", "1.0, -0.01)"),
                                   "Wrong sign where input < 0"),
    "derivative of the wrong function": ("tanh", solution("tanh", "ctx.save_for_backward(t)",
                                                          "ctx.save_for_backward(input)"),
                                         "derivative of the wrong function"),
    "sign error everywhere": ("sigmoid", solution("sigmoid", "s * (1 - s)", "s * (s - 1)"), "Wrong sign"),
    "comparison flipped": ("relu", solution("relu", "input < 0] = 0", "input > 0] = 0"), "comparison is flipped"),
    "gradients swapped": ("multiply", solution("multiply", "return grad_a, grad_b", "return grad_b, grad_a"),
                          "swapped"),
}


@pytest.mark.parametrize("name", list(VERDICTS))
def test_the_verdict_names_the_classic_mistake(name):
    key, source, words = VERDICTS[name]
    verdict = judge(source, key)
    assert not verdict.passed and verdict.gradcheck_passed is False
    assert any(words in reason for reason in verdict.reasons), verdict.reasons
    assert verdict.mismatch.any()


def test_a_forward_that_differs_from_the_reference_fails_even_when_gradcheck_passes():
    verdict = judge(solution("relu", "input.clamp(min=0)", "input.clamp(min=0) + 1"), "relu")
    assert verdict.gradcheck_passed and not verdict.passed
    assert any("differs from torch.relu" in note for note in verdict.notes)


def test_kinks_are_shown_apart_with_both_one_sided_slopes():
    verdict = judge(CHALLENGES["clamp"].solution, "clamp")
    assert [k.x for k in verdict.kinks] == [-1.0, 1.0]
    assert [round(k.left, 3) for k in verdict.kinks] == [0.0, 1.0]
    assert [round(k.right, 3) for k in verdict.kinks] == [1.0, 0.0]
    checked = [float(label.split("=")[1]) for label in verdict.input_labels]
    assert all(abs(abs(x) - 1) >= 0.1 - 1e-12 for x in checked)  # gradcheck's points keep off both kinks
