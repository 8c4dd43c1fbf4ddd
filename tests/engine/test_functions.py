"""The teaching Functions against PyTorch itself: gradcheck, built-in ops, and the broken ones caught."""

import pytest
import torch

from autodiff_core.functions import FUNCTIONS, MyReLU, MyReLUModern, correct_functions, get_activation, relu
from autodiff_core.gradcheck import gradcheck_report, sample_input

CORRECT = correct_functions()
BROKEN = [name for name in FUNCTIONS if name not in CORRECT]


def test_registry_has_the_required_functions_and_bugs():
    for name in ["ReLU", "LeakyReLU", "Sigmoid", "Tanh", "Softplus", "Exp"]:
        assert FUNCTIONS[name].correct
    assert len(BROKEN) >= 4


def test_myrelu_forward_and_backward_match_torch_relu():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(50, 7, generator=g, dtype=torch.float64)
    a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
    grad_output = torch.randn(50, 7, generator=g, dtype=torch.float64)
    relu(a).backward(grad_output)
    torch.relu(b).backward(grad_output)
    assert torch.equal(relu(x), torch.relu(x))  # forward ok
    assert torch.equal(a.grad, b.grad)  # backward ok


def test_myrelu_saves_its_input_and_clamps():
    x = torch.tensor([-1.0, -2.0, 3.0], requires_grad=True)
    y = MyReLU.apply(x)
    assert y.tolist() == [0.0, 0.0, 3.0]
    (saved,) = y.grad_fn.saved_tensors
    assert torch.equal(saved, x)


def test_modern_form_agrees_with_classic_and_supports_vmap():
    x = torch.randn(6, 5, dtype=torch.float64)
    classic = torch.autograd.functional.jacobian(MyReLU.apply, x)
    modern = torch.autograd.functional.jacobian(MyReLUModern.apply, x)
    assert torch.equal(classic, modern)
    assert torch.equal(torch.func.vmap(MyReLUModern.apply)(x), torch.relu(x))
    assert torch.equal(torch.func.jacrev(MyReLUModern.apply)(x[0]), torch.diag((x[0] > 0).double()))


@pytest.mark.parametrize("name", CORRECT)
def test_every_correct_function_passes_torch_gradcheck(name):
    spec = FUNCTIONS[name]
    x = sample_input(spec, 16, seed=3).requires_grad_()
    assert torch.autograd.gradcheck(spec.apply, (x,))
    assert torch.autograd.gradgradcheck(spec.apply, (x,))
    report = gradcheck_report(name)
    assert report.passed and not report.mismatch.any()


@pytest.mark.parametrize("name", CORRECT)
def test_every_correct_function_matches_its_builtin(name):
    spec = FUNCTIONS[name]
    x = sample_input(spec, 32, seed=1)
    a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
    spec.apply(a).sum().backward()
    spec.reference(b).sum().backward()
    torch.testing.assert_close(spec.apply(x), spec.reference(x))
    torch.testing.assert_close(a.grad, b.grad)


@pytest.mark.parametrize("name", BROKEN)
def test_every_broken_function_fails_gradcheck(name):
    spec = FUNCTIONS[name]
    x = sample_input(spec, 16, seed=3).requires_grad_()
    assert not torch.autograd.gradcheck(spec.apply, (x,), raise_exception=False)
    report = gradcheck_report(name)
    assert not report.passed and report.mismatch.any() and report.max_abs_error > 1e-3
    assert "The bug:" in report.message
    # Forward is still right: only the backward is broken.
    torch.testing.assert_close(spec.apply(x.detach()), spec.reference(x.detach()))


def test_report_jacobians_equal_torch_jacobian():
    x = sample_input(FUNCTIONS["Tanh"], 6, seed=2)
    report = gradcheck_report("Tanh", x)
    expected = torch.autograd.functional.jacobian(torch.tanh, x).numpy()
    assert report.analytical.shape == (6, 6)
    assert abs(report.analytical - expected).max() < 1e-12
    assert abs(report.numerical - expected).max() < 1e-8


def test_worst_entry_is_located():
    x = torch.tensor([0.5, -0.5, 1.5], dtype=torch.float64)
    report = gradcheck_report("BROKEN ReLU: comparison flipped", x)
    # Backward zeroes the positive inputs' gradients: the diagonal entries 0 and 2 are wrong by 1.
    assert report.mismatch.tolist() == [[True, False, False], [False, True, False], [False, False, True]]
    assert report.worst[0] == report.worst[1] and report.max_abs_error == pytest.approx(1.0)


def test_kink_at_zero_misleads_gradcheck_and_is_explained():
    report = gradcheck_report("ReLU", torch.tensor([0.0, 1.0, -1.0], dtype=torch.float64))
    assert not report.passed and report.near_kink == (0,)
    assert "kink" in report.message
    assert sample_input(FUNCTIONS["ReLU"], 64, seed=0).abs().min() >= 0.05


def test_float32_is_explained():
    report = gradcheck_report("Tanh", torch.linspace(-1, 1, 5))
    assert not report.passed and "float64" in report.message


def test_bad_names_and_sizes_raise_clear_errors():
    with pytest.raises(ValueError, match="activation must be one of"):
        get_activation("nope")
    with pytest.raises(ValueError, match="Unknown Function"):
        gradcheck_report("nope")
    with pytest.raises(ValueError, match="1 to 64 points"):
        gradcheck_report("ReLU", torch.zeros(65, dtype=torch.float64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_leaky_relu_backward_is_exactly_torchs_in_each_dtype(dtype):
    """The slope 0.01 is built in grad_output's dtype: in float64 it is 0.01, not float32's 0.009999999776."""
    g = torch.Generator().manual_seed(4)
    x = torch.randn(40, generator=g, dtype=dtype)
    x = torch.where(x.abs() < 0.05, torch.full_like(x, 0.5), x)  # off the kink, where the two conventions differ
    grad_output = torch.randn(40, generator=g, dtype=dtype)
    a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
    FUNCTIONS["LeakyReLU"].apply(a).backward(grad_output)
    torch.nn.functional.leaky_relu(b, 0.01).backward(grad_output)
    assert a.grad.dtype == dtype and torch.equal(a.grad, b.grad)


def test_gradcheck_passing_a_broken_backward_says_why():
    """gradcheck's grad_outputs are one-hot, never negative: a mask taken from grad_output never fires, and
    with every input positive the broken backward passes. The report says it is still wrong."""
    x = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
    assert torch.autograd.gradcheck(FUNCTIONS["BROKEN ReLU: mask from grad_output"].apply,
                                    (x.clone().requires_grad_(),))
    report = gradcheck_report("BROKEN ReLU: mask from grad_output", x)
    assert report.passed and "this backward is wrong" in report.missed and "one-hot" in report.missed
    assert not gradcheck_report("BROKEN ReLU: mask from grad_output", torch.tensor([-1.0, 1.0],
                                                                                   dtype=torch.float64)).passed
    assert gradcheck_report("ReLU", x).missed == ""  # a correct Function passing is just a pass
