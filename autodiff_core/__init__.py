"""Autograd Studio's engine: custom autograd Functions, datasets and trainers that stream snapshots.

It imports torch and numpy only (``figures`` alone imports plotly, and nothing here imports it),
so it runs in a notebook, a test or a script just as well as behind the app. ``grading`` is lesson 6: a
student's Function validated, judged and run in the sandbox. ``tests/engine/test_imports.py`` holds it to this.
"""

from .data import PLAYGROUND_DATASETS, make_playground_data
from .devices import DTYPES, DeviceInfo, DeviceUnavailableError, available_devices, resolve_device, resolve_dtype
from .functions import FUNCTIONS, FunctionSpec, MyReLU, MyReLUModern, get_activation, relu
from .gradcheck import GradcheckReport, gradcheck_report, sample_input
from .logistic import LogisticConfig, LogisticRegression, LogisticSnapshot, train_logistic
from .two_layer import TwoLayerConfig, TwoLayerSnapshot, train_two_layer

__all__ = [
    "DTYPES", "FUNCTIONS", "PLAYGROUND_DATASETS", "DeviceInfo", "DeviceUnavailableError", "FunctionSpec",
    "GradcheckReport", "LogisticConfig", "LogisticRegression", "LogisticSnapshot", "MyReLU", "MyReLUModern",
    "TwoLayerConfig", "TwoLayerSnapshot", "available_devices", "get_activation", "gradcheck_report",
    "make_playground_data", "relu", "resolve_device", "resolve_dtype", "sample_input", "train_logistic",
    "train_two_layer",
]
