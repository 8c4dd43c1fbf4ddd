"""The run as a PyTorch script: run in a subprocess, it reproduces the app's loss at every step."""


import pytest
import torch

from autodiff_core.functions import FUNCTIONS
from autodiff_core.playground import Playground, PlaygroundConfig
from autodiff_core.script_export import activation_source, export_script
from tests.conftest import run_exported

RUNS = {
    "by-hand SGD, MyReLU, L1 + L2": dict(optimizer="SGD (by hand)", learning_rate=0.1, l1=0.001, l2=0.01),
    "Adam, MyTanh, sin features, 3 layers": dict(activation="Tanh", features=("X1", "X2", "sin X1", "sin X2"),
                                                 hidden=(6, 5, 4), dataset="Spirals"),
    "momentum, regression, torch.tanh": dict(dataset="Multi-Gaussian (regression)", optimizer="SGD + momentum",
                                             activation="torch.tanh", learning_rate=0.01, l2=0.001),
}

@pytest.mark.parametrize("run", list(RUNS))
def test_the_exported_script_reproduces_every_step(run, tmp_path):
    pg = Playground(PlaygroundConfig(**RUNS[run]))
    snaps = list(pg.run(40, 1))
    source = export_script(pg)
    assert "autodiff_core" not in source and "import torch" in source
    steps, final_test = run_exported(source, tmp_path)
    assert len(steps) == 40
    app = [s.train_loss for s in snaps[1:]]
    torch.testing.assert_close(torch.tensor(steps), torch.tensor(app), rtol=1e-5, atol=1e-6)
    assert final_test == pytest.approx(snaps[-1].test_loss, rel=1e-5)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_every_registry_function_exports_as_runnable_source(name):
    """The Function's own source, standalone: it defines ``activation`` that matches the registry's."""
    scope = {}
    exec("import torch\nfrom torch.autograd import Function\n" + activation_source(name), scope)
    x = torch.linspace(-2.9, 2.9, 9, dtype=torch.float64, requires_grad=True)  # off the kink at 0
    ours, theirs = scope["activation"](x), FUNCTIONS[name].apply(x)
    torch.testing.assert_close(ours, theirs)
    torch.testing.assert_close(torch.autograd.grad(ours.sum(), x)[0], torch.autograd.grad(theirs.sum(), x)[0])


def test_functions_written_in_the_app_are_refused_with_a_reason():
    with pytest.raises(ValueError, match="only the registry"):
        activation_source("my own relu")
