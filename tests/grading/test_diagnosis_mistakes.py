"""Two mistakes in one backward are both named, each on its own line, by the judge itself (not a generic "does not
compute the slope", nor one side of 0 blamed for both); one mistake alone keeps its own sentence."""

from __future__ import annotations

import pytest

from autodiff_core.grading.challenges import CHALLENGES
from autodiff_core.grading.judge import judge


def solution(key: str, *changes: tuple[str, str]) -> str:
    source = CHALLENGES[key].solution
    for old, new in changes:
        assert old in source
        source = source.replace(old, new)
    return source


FORGOT, SIGN = "It forgot grad_output", "The sign is wrong"
TWICE = {  # two mistakes at once -> what each of the two lines must name
    "relu: forgets grad_output, wrong sign": (
        "relu", solution("relu", ("grad_input = grad_output.clone()", "grad_input = -torch.ones_like(input)")),
        (FORGOT, SIGN), ""),
    "sigmoid: forgets grad_output, wrong sign": (
        "sigmoid", solution("sigmoid", ("return grad_output * s * (1 - s)", "return s * (s - 1)")), (FORGOT, SIGN), ""),
    "tanh: slope of the input, wrong sign": (
        "tanh", solution("tanh", ("ctx.save_for_backward(t)", "ctx.save_for_backward(input)"),
                         ("grad_output * (1 - t * t)", "-grad_output * (1 - t * t)")),
        ("It takes the slope of the wrong function: (1 − input²)", SIGN), ""),
    "relu: comparison flipped, forgets grad_output": (
        "relu", solution("relu", ("grad_input = grad_output.clone()", "grad_input = torch.ones_like(input)"),
                         ("input < 0] = 0", "input > 0] = 0")),
        ("The comparison is flipped", FORGOT), ""),
    "multiply: a's gradient forgets grad_output, wrong sign": (
        "multiply", solution("multiply", ("grad_a = grad_output * b", "grad_a = -b")), (FORGOT, SIGN),
        " in the gradient for a"),
}


@pytest.mark.parametrize("name", list(TWICE))
def test_each_of_two_mistakes_is_named(name):
    key, source, (first, second), where = TWICE[name]
    verdict = judge(source, key)
    assert not verdict.passed and verdict.gradcheck_passed is False
    assert list(verdict.reasons) == [r for r in verdict.reasons if r.startswith("Mistake ")], verdict.reasons
    one, two = verdict.reasons
    assert one.startswith(f"Mistake 1 of 2{where}: {first}") and two.startswith(f"Mistake 2 of 2{where}: {second}")


def test_one_mistake_keeps_its_own_sentence():
    verdict = judge(solution("relu", ("grad_output.clone()", "torch.ones_like(input)")), "relu")
    assert verdict.reasons == ("Your backward forgot grad_output: it returns the slope f'(input), but autograd needs "
                               "grad_output · f'(input) (the chain rule).",)
    verdict = judge(solution("sigmoid", ("s * (1 - s)", "s * (s - 1)")), "sigmoid")
    assert verdict.reasons == ("Wrong sign: your backward returns minus the right gradient.",)


def test_the_class_board_names_both_mistakes_in_a_few_words():
    from studio.room.board import mistake

    key, source, *_ = TWICE["sigmoid: forgets grad_output, wrong sign"]
    assert mistake(judge(source, key)) == "2 mistakes: it forgot grad_output; the sign is wrong"
