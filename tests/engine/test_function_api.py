"""Lesson 8's Functions against PyTorch's own ops: gradcheck on each, gradgradcheck where a backward is
differentiable, the forward-AD check where there is a jvp, and each part's point (what autograd refuses, what
it gets wrong without the call the part teaches) read from what PyTorch does, never from numbers of our own."""

from __future__ import annotations

import pytest
import torch
from torch.autograd import gradcheck, gradgradcheck

from autodiff_core import api_demos
from autodiff_core.function_api import (
    MyMatMul,
    MyMatMulEveryGrad,
    MyReLUInPlace,
    MyReLUInPlaceUnmarked,
    MySigmoidJvp,
    MySinh,
    MySinhOnce,
    MySinhSavedExp,
    MySort,
    MyTanhModern,
)

X = torch.tensor([-1.7, -0.4, 0.3, 0.9, 2.2], dtype=torch.float64)  # away from ReLU's kink and from ties
V = torch.tensor([1.0, 0.5, -1.0, 2.0, 0.25], dtype=torch.float64)


def leaf(x=X):
    return x.clone().requires_grad_()


def grad_of(f, x=X, weights=V):
    a = leaf(x)
    (g,) = torch.autograd.grad((f(a) * weights).sum(), a)
    return g


# (Function's apply, PyTorch's op, gradgradcheck applies, forward-AD check applies)
ELEMENTWISE = {
    "MySinh": (MySinh.apply, torch.sinh, True, False),
    "MySinhOnce": (MySinhOnce.apply, torch.sinh, False, False),
    "MySinhSavedExp": (MySinhSavedExp.apply, torch.sinh, False, False),
    "MySigmoidJvp": (MySigmoidJvp.apply, torch.sigmoid, True, True),
    "MyReLUInPlace": (lambda a: MyReLUInPlace.apply(a.clone()), torch.relu, True, False),
    "MyTanhModern": (MyTanhModern.apply, torch.tanh, True, False),
}


@pytest.mark.parametrize("name", list(ELEMENTWISE))
def test_forward_and_gradient_match_pytorchs_op_and_gradcheck_passes(name):
    apply, op, twice, forward_ad = ELEMENTWISE[name]
    with torch.no_grad():
        torch.testing.assert_close(apply(X.clone()), op(X))
    torch.testing.assert_close(grad_of(apply), grad_of(op))
    assert gradcheck(apply, (leaf(),), check_forward_ad=forward_ad)
    if twice:
        assert gradgradcheck(apply, (leaf(),))


def test_double_backward_gives_pytorchs_hessian_vector_product():
    torch.testing.assert_close(api_demos.hvp(MySinh.apply, X, V), api_demos.hvp(torch.sinh, X, V))
    # the Hessian of ½Σ sinh² is diagonal: cosh² + sinh²
    torch.testing.assert_close(api_demos.hvp(torch.sinh, X, V), (torch.cosh(X) ** 2 + torch.sinh(X) ** 2) * V)


def test_saving_intermediates_passes_gradcheck_and_fails_gradgradcheck_and_hvp():
    assert gradcheck(MySinhSavedExp.apply, (leaf(),))
    assert not gradgradcheck(MySinhSavedExp.apply, (leaf(),), raise_exception=False)
    wrong = api_demos.hvp(MySinhSavedExp.apply, X, V)
    assert not torch.allclose(wrong, api_demos.hvp(torch.sinh, X, V))


def test_once_differentiable_refuses_a_second_backward():
    with pytest.raises(RuntimeError, match="marked with @once_differentiable"):
        api_demos.hvp(MySinhOnce.apply, X, V)
    r = api_demos.double_backward(X, V)
    assert r.once_error.startswith("RuntimeError: trying to differentiate twice")
    assert r.gradcheck and r.gradgradcheck and r.saved_exp_gradcheck and not r.saved_exp_gradgradcheck
    assert r.hvp == pytest.approx(r.torch_hvp) and r.saved_exp_hvp != pytest.approx(r.torch_hvp)
    assert r.curves["MySinh: double backward"] == pytest.approx(r.curves["torch.sinh: double backward"])


def test_forward_mode_three_ways_equal_pytorchs_jvp():
    want = torch.func.jvp(torch.sigmoid, (X,), (V,))[1]
    torch.testing.assert_close(api_demos.dual_tangent(MySigmoidJvp.apply, X, V), want)
    torch.testing.assert_close(torch.func.jvp(MySigmoidJvp.apply, (X,), (V,))[1], want)
    r = api_demos.forward_mode(X, V)
    assert r.gradcheck_forward and r.dual == pytest.approx(r.torch_jvp) and r.func_jvp == pytest.approx(r.torch_jvp)
    assert r.classic_dual_error.startswith("NotImplementedError: You must implement the jvp function")
    assert "must override the setup_context staticmethod" in r.classic_func_error


def test_in_place_with_mark_dirty_returns_its_input_and_allows_a_later_in_place_op():
    h = leaf() * 1
    assert MyReLUInPlace.apply(h) is h and torch.equal(h.detach(), torch.relu(X))
    torch.testing.assert_close(api_demos.chain_grad(MyReLUInPlace.apply, X), api_demos.out_of_place_grad(X, 2.0))
    torch.testing.assert_close(api_demos.later_grad(MyReLUInPlace.apply, X),
                               api_demos.later_grad(torch.relu_, X))


def test_without_mark_dirty_autograd_refuses_the_chain_and_gets_the_later_gradient_wrong():
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
        api_demos.chain_grad(MyReLUInPlaceUnmarked.apply, X)
    wrong = api_demos.later_grad(MyReLUInPlaceUnmarked.apply, X)
    assert not torch.equal(wrong, api_demos.later_grad(torch.relu_, X))
    r = api_demos.in_place(X)
    assert r.same_tensor and r.chain == r.torch_chain and r.later == r.torch_later and r.later != r.unmarked_later
    assert "This behavior is forbidden" in r.unmarked_chain_error and r.gradcheck


def test_sort_returns_torchs_values_and_indices_and_indices_need_no_gradient():
    x = torch.tensor([0.3, -1.2, 2.5, 0.9, -0.4], dtype=torch.float64)
    values, indices = MySort.apply(leaf(x))
    want_values, want_indices = torch.sort(x)
    torch.testing.assert_close(values.detach(), want_values)
    assert torch.equal(indices, want_indices) and values.requires_grad and not indices.requires_grad
    torch.testing.assert_close(api_demos.ranked_grad(MySort.apply, x), api_demos.ranked_grad(torch.sort, x))
    assert gradcheck(lambda a: MySort.apply(a)[0], (leaf(x),))  # its check_undefined_grad sends None
    assert gradgradcheck(lambda a: MySort.apply(a)[0], (leaf(x),))
    assert api_demos.received(x, True)[1] == "int64 zeros, shape (5,)"
    assert api_demos.received(x, False)[1] == "None"


@pytest.mark.parametrize("fn", [MyMatMul, MyMatMulEveryGrad])
def test_matmul_gradients_match_torch_matmul(fn):
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(4, 3, generator=g, dtype=torch.float64), torch.randn(3, 5, generator=g, dtype=torch.float64)
    assert gradcheck(fn.apply, (leaf(a), leaf(b))) and gradgradcheck(fn.apply, (leaf(a), leaf(b)))
    ours = torch.autograd.grad(fn.apply(leaf(a), b_ := leaf(b)).sum(), b_)
    theirs = torch.autograd.grad(torch.matmul(a, b__ := leaf(b)).sum(), b__)
    torch.testing.assert_close(ours, theirs)


def test_needs_input_grad_skips_a_product_and_the_timing_says_what_it_measured():
    t = api_demos.time_needs_input_grad(api_demos.TimingConfig(n=8, k=16, m=16, repeats=3))
    assert t.products == (1, 2)  # counted as backward ran
    assert len(t.skipping) == len(t.every) == 3 and all(s > 0 for s in (*t.skipping, *t.every)) and t.ratio > 0


def test_vmap_and_grad_through_the_modern_form_equal_the_loop():
    batch = torch.stack([X, X / 2, -X])
    torch.testing.assert_close(torch.func.vmap(MyTanhModern.apply)(batch),
                               torch.stack([MyTanhModern.apply(r) for r in batch]))
    per_row = torch.func.vmap(torch.func.grad(lambda r: MyTanhModern.apply(r).sum()))(batch)
    torch.testing.assert_close(per_row, api_demos.looped_grads(MyTanhModern.apply, batch))
    torch.testing.assert_close(per_row, api_demos.looped_grads(torch.tanh, batch))
    r = api_demos.torch_func(X)
    assert r.vmapped == r.looped and r.grads == [pytest.approx(row) for row in r.looped_grads] and r.gradcheck
    assert "must override the setup_context staticmethod" in r.classic_error
    assert "set generate_vmap_rule=True" in r.no_rule_error


def test_an_error_is_kept_as_one_line_of_text():
    text = api_demos.raised(lambda: api_demos.chain_grad(MyReLUInPlaceUnmarked.apply, X))
    assert text.startswith("RuntimeError: ") and "\n" not in text and len(text) <= api_demos.MAX_ERROR
    assert api_demos.raised(lambda: None) == ""
