"""A forward that differs is shown with its input and both answers at one precision that tells them apart."""

import re

from autodiff_core.grading.judge import same_precision


def _significant(number: str) -> int:
    return len(re.sub(r"^-?0?\.?0*", "", number).replace(".", ""))


def test_close_answers_get_the_digits_that_tell_them_apart():
    x, yours, want = same_precision(-2.8661234, -2.8661234, -2.8663)
    assert yours != want
    assert len({_significant(s) for s in (x, yours, want)}) == 1, (x, yours, want)  # not "-2.87 gives -2.866"


def test_far_answers_stay_short():
    assert same_precision(0.5, 0.5, 2.0) == ("0.5", "0.5", "2")


def test_a_forward_off_by_a_little_reads_as_off():
    import torch

    from autodiff_core.grading.judge import _compare_forward

    class Ref:
        reference_name = "torch.tanh"
        reference = staticmethod(torch.tanh)

    class Yours:
        apply = staticmethod(lambda x: torch.tanh(x) + 1e-3)

    ok, said = _compare_forward(Yours, Ref, (torch.tensor([-2.8661234], dtype=torch.float64),))
    x, a, b = re.search(r"at input (\S+) it gives (\S+), torch.tanh gives (\S+)\.", said).groups()
    assert not ok and a != b and len({_significant(s) for s in (x, a, b)}) == 1, said
