"""Lesson 8's challenges: each solution (the lesson's own Function, by its real source) passes every check of its
part against PyTorch's op, each starting point fails for the reason the part teaches, the mistakes students make
are named, and the forms widen lesson 6's allow-list only by what each part needs: every hostile body is still
refused in every form, and a refused submission never reaches the sandbox."""

from __future__ import annotations

import inspect

import pytest

from autodiff_core import function_api
from autodiff_core.grading.api_challenges import API_CHALLENGES
from autodiff_core.grading.api_judge import check_api, judge_api
from autodiff_core.grading.validator import Form, Refused, classic, validate
from testkit.hostile import HOSTILE_BODIES

LEGIT_IN = {"in_place": {"ctx.mark_dirty"}}  # hostile in lesson 6, the very point of this part


def failed(verdict) -> dict[str, str]:
    return {name: detail for name, ok, detail in verdict.checks if not ok}


@pytest.mark.parametrize("key", list(API_CHALLENGES))
def test_the_lessons_own_function_passes_every_check(key):
    c = API_CHALLENGES[key]
    verdict = judge_api(c.solution, key)
    assert verdict.passed and not failed(verdict), verdict.reasons
    assert verdict.headline.startswith(f"All {len(verdict.checks)} checks passed, against {c.reference_name}")


def test_solutions_are_the_lessons_classes_as_they_are():
    sources = {inspect.getsource(cls) for _, cls in inspect.getmembers(function_api, inspect.isclass)}
    assert all(c.solution in sources for c in API_CHALLENGES.values())


def test_each_starting_point_fails_for_the_reason_its_part_teaches():
    sinh = judge_api(API_CHALLENGES["double_backward"].skeleton, "double_backward")
    assert set(failed(sinh)) == {"gradgradcheck: backward's own derivative matches",
                                 "H·v of ½·Σ sinh(x)², through your backward twice"}
    assert "constants to autograd" in failed(sinh)["gradgradcheck: backward's own derivative matches"]
    in_place = failed(judge_api(API_CHALLENGES["in_place"].skeleton, "in_place"))
    assert "is a view and is being modified inplace" in in_place["another in-place op after it: y.mul_(2)"]
    assert "ctx.mark_dirty(input)" in in_place and "its input, used after the call" in in_place
    for key, words in (("forward_mode", "replace `...`"), ("non_differentiable", "replace `...`"),
                       ("torch_func", "needs a `setup_context` method")):
        verdict = judge_api(API_CHALLENGES[key].skeleton, key)
        assert not verdict.passed and words in verdict.reasons[0], verdict.reasons


def mutate(key: str, old: str, new: str) -> str:
    source = API_CHALLENGES[key].solution
    assert old in source, old
    return source.replace(old, new)


@pytest.mark.parametrize("key, old, new, check, words", [
    ("non_differentiable", "        ctx.mark_non_differentiable(indices)\n", "", "ctx.mark_non_differentiable(indices)",
     "does not call"),
    ("non_differentiable", "        ctx.set_materialize_grads(False)\n", "", "ctx.set_materialize_grads(False)",
     "tensor of zeros"),
    ("non_differentiable", "        if grad_values is None:\n            return None\n", "",
     "gradcheck on the values (None included)", "NoneType"),
    ("torch_func", "generate_vmap_rule = True", "generate_vmap_rule = False",
     "torch.func.vmap over a batch of 3, against a loop", "set generate_vmap_rule=True"),
    ("forward_mode", "return tangent * s * (1 - s)", "return tangent * s",
     "gradcheck(check_forward_ad=True): jvp matches the slope of forward", "forward mode mismatch"),
    ("forward_mode", "        ctx.save_for_forward(output)\n", "", "torch.func.jvp", "not enough values to unpack"),
    ("in_place", "        input[negative] = 0  # in place: no new tensor\n", "        input = input.clamp(min=0)\n",
     "forward changes its input in place", "change its input itself"),
])
def test_a_mistake_fails_the_check_that_names_it(key, old, new, check, words):
    verdict = judge_api(mutate(key, old, new), key)
    assert not verdict.passed and words in failed(verdict).get(check, ""), failed(verdict)


def test_an_error_in_the_students_code_names_its_line_and_the_advice():
    source = mutate("forward_mode", "        ctx.save_for_forward(output)\n", "")
    verdict = judge_api(source, "forward_mode")
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "(s,) = ctx.saved_tensors" in text
                and i > source.splitlines().index("    def jvp(ctx, tangent):"))
    assert verdict.error_line == line and any("save_for_forward" in note for note in verdict.notes)


def before_first_return(source: str, body: str) -> str:
    """``body`` pasted into the first method that returns something, just before that return."""
    lines = source.splitlines()
    i = next(i for i, text in enumerate(lines) if text.strip().startswith("return "))
    indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    return "\n".join([*lines[:i], *(indent + b for b in body.split("\n")), *lines[i:]]) + "\n"


@pytest.mark.parametrize("key", list(API_CHALLENGES))
def test_every_hostile_body_is_refused_in_every_form(key):
    c = API_CHALLENGES[key]
    validate(before_first_return(c.solution, "x = input * 2"), form=c.form)  # where they go, code may go
    passed = []
    for name, body in HOSTILE_BODIES.items():
        if name in LEGIT_IN.get(key, ()):
            continue
        try:
            validate(before_first_return(c.solution, body), form=c.form)
            passed.append(name)
        except Refused:
            pass
    assert not passed


def test_forms_widen_only_where_asked():
    sort = API_CHALLENGES["non_differentiable"].form
    relu = ("class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, input):\n        {}\n"
            "        return input\n\n    @staticmethod\n    def backward(ctx, grad_output):\n"
            "        return grad_output\n")
    for line in ("ctx.mark_dirty(input)", "x = torch.sort(input)", "x = input.take(input)", "y = input is None"):
        with pytest.raises(Refused):
            validate(relu.format(line), form=classic(1))
    with pytest.raises(Refused, match="instead of is"):  # `is` only against None, even where None checks are allowed
        validate(relu.format("y = input is input").replace("grad_output):", "grad_values, grad_indices):")
                 .replace("return grad_output", "return grad_values"), form=sort)
    forward = "    @staticmethod\n    def forward"
    flagged = relu.format("pass").replace(forward, "    generate_vmap_rule = True\n\n" + forward, 1)
    with pytest.raises(Refused, match="the class holds only"):
        validate(flagged)
    flags = Form(classic(1).methods, flags=frozenset({"generate_vmap_rule"}))
    validate(flagged, form=flags)
    with pytest.raises(Refused, match="may set only generate_vmap_rule"):
        validate(flagged.replace("generate_vmap_rule = True", "generate_vmap_rule = __import__('os')"), form=flags)
    with pytest.raises(Refused, match=r"must take 1 parameter, like `def forward\(input\)`"):
        validate(inspect.getsource(function_api.MyTanhModern).replace("def forward(input)", "def forward(ctx, input)"),
                 form=API_CHALLENGES["torch_func"].form)


def test_a_refused_submission_never_reaches_the_sandbox():
    class NoSandbox:
        def run(self, *args, **kwargs):
            raise AssertionError("a refused submission must not be run")

    verdict = check_api("import os\n" + API_CHALLENGES["in_place"].solution, "in_place", sandbox=NoSandbox())
    assert not verdict.passed and verdict.headline == "Your code was not run." and verdict.error_line == 1


def test_the_sandbox_judges_a_lesson_8_function():
    """The whole way: validated here, judged in a forked worker with limits, the verdict back as data."""
    key = "in_place"
    good = check_api(API_CHALLENGES[key].solution, key)
    assert good.passed and len(good.checks) == 5
    bad = check_api(API_CHALLENGES[key].skeleton, key)
    assert not bad.passed and "This behavior is forbidden" in " ".join(bad.reasons)
