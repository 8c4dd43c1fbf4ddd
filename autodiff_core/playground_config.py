"""Lesson 5's settings and what it records: ``PlaygroundConfig`` (data, model and training; its ``footprint``
for the budget) and ``PlaygroundSnapshot``, with the learning-rate advice a failed run gets. The playground
itself, the model and its training, is ``playground.py``, which re-exports these names."""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from . import own_data
from .classes import MAX_CLASSES
from .data import DATASET_NAMES, is_own, is_regression, takes_classes
from .features import DEFAULT_FEATURES, require_features
from .footprint import Footprint
from .functions import FUNCTIONS, activation_names
from .gradcheck import gradcheck_report
from .validation import require_choice, require_device_name, require_dtype, require_float, require_int

OPTIMIZERS = ("SGD (by hand)", "SGD + momentum", "Adam")
MAX_DEPTH = 6  # hidden layers, as in TF Playground
# The largest learning rate, per optimizer, with which the default network learns every dataset it can:
# a suggestion never goes above it (tests/engine/test_playground.py trains with each one).
STABLE_LR = {"SGD (by hand)": 0.3, "SGD + momentum": 0.1, "Adam": 0.03}
LR_LADDER = (1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 3e-4, 1e-4, 3e-5, 1e-5)


def suggested_learning_rate(optimizer: str, learning_rate: float) -> float:
    """A learning rate to try after ``learning_rate`` failed: the largest step of the ladder that is at
    most a tenth of it and at most the optimizer's known stable rate."""
    cap = min(learning_rate / 10, STABLE_LR[optimizer])
    return next((v for v in LR_LADDER if v <= cap), LR_LADDER[-1])


@functools.cache
def backward_problem(activation: str) -> str:
    """Why ``activation``'s backward is wrong, from gradcheck's verdict; "" when it passes (or is built in)."""
    spec = FUNCTIONS.get(activation)
    if spec is None or gradcheck_report(activation).passed:
        return ""
    return (f"The learning rate is not the cause: the backward of {activation} is wrong (gradcheck fails; "
            f"{spec.summary.rstrip('.')}), so every gradient that flows through it is wrong. Choose an activation "
            f"whose backward passes gradcheck.")


@dataclass(frozen=True)
class PlaygroundConfig:
    """Data, model and training settings. Everything but the training settings is fixed per model.

    Data are drawn as TF Playground draws them (``data``): about -6..6, ``noise`` 0 to 0.5.
    Regularization, as in TF, acts on the weights, not the biases: ``l2`` adds ``l2 * w`` to each weight's
    gradient and ``l1`` adds ``l1 * sign(w)``.

    ``classes``: 2 (one sigmoid output, binary cross-entropy, as TF), or 3 to 6 (one output per class, MySoftmax
    and cross-entropy; ``classes.py``) for the datasets that take it. ``points``: the class's own points,
    ``(x1, x2, class or target)`` each, for the datasets ``OWN`` and ``OWN_REGRESSION`` (``own_data.py``); they
    are data, not the model: changing them keeps the weights (``model_key`` leaves them out).
    """

    dataset: str = "XOR"
    n_per_class: int = 100  # for regression sets: half the number of points
    noise: float = 0.1
    test_fraction: float = 0.3
    data_seed: int = 0
    features: tuple[str, ...] = DEFAULT_FEATURES  # the inputs the network sees, from features.FEATURES
    hidden: tuple[int, ...] = (8, 8)  # widths of 1 to 6 hidden layers
    activation: str = "ReLU"  # the tutorial's MyReLU
    init_seed: int = 0
    optimizer: str = "Adam"
    learning_rate: float = 0.03
    batch_size: int = 32
    l2: float = 0.0
    l1: float = 0.0
    grid: int = 32  # decision surface resolution, grid x grid points (coarse: it is re-sent while live)
    device: str = "cpu"
    dtype: str = "float32"
    classes: int = 2
    points: tuple[tuple[float, float, float], ...] = ()

    def __post_init__(self) -> None:
        require_choice("dataset", self.dataset, list(DATASET_NAMES))
        require_int("n_per_class", self.n_per_class, 2, 5_000)
        require_float("noise", self.noise, 0.0, 0.5)
        require_float("test_fraction", self.test_fraction, 0.05, 0.9)
        require_int("data_seed", self.data_seed, 0, 2**31 - 1)
        require_features(self.features)
        if not isinstance(self.hidden, tuple) or not 1 <= len(self.hidden) <= MAX_DEPTH:
            raise ValueError(f"hidden must list 1 to {MAX_DEPTH} layer widths; got {self.hidden!r}.")
        for width in self.hidden:
            require_int("hidden layer width", width, 1, 256)
        require_choice("activation", self.activation, activation_names())
        require_int("init_seed", self.init_seed, 0, 2**31 - 1)
        require_choice("optimizer", self.optimizer, OPTIMIZERS)
        require_float("learning_rate", self.learning_rate, 0.0, 1e6, lo_open=True)
        require_int("batch_size", self.batch_size, 1, 10_000)
        require_float("l2", self.l2, 0.0, 10.0)
        require_float("l1", self.l1, 0.0, 10.0)
        require_int("grid", self.grid, 5, 200)
        require_device_name(self.device)
        require_dtype(self.dtype)
        self._check_classes_and_points()

    def _check_classes_and_points(self) -> None:
        require_int("classes", self.classes, 2, MAX_CLASSES)
        if self.classes != 2 and not takes_classes(self.dataset):
            raise ValueError(f"classes must be 2 for {self.dataset}, which has two classes (or is a regression); "
                             f"got {self.classes}.")
        if not is_own(self.dataset):
            if self.points:
                raise ValueError(f"points are for the datasets of your own points, not {self.dataset}.")
            return
        own_data.require_points(self.points, self.regression)
        if not self.regression and own_data.classes_in(self.points) > self.classes:
            raise ValueError(f"classes must be at least {own_data.classes_in(self.points)}: the points use class "
                             f"{own_data.classes_in(self.points) - 1}; got {self.classes}.")

    @property
    def outputs(self) -> int:
        """The network's outputs: one (a sigmoid's, or a regression's value), or one logit per class."""
        return self.classes if self.classes > 2 else 1

    @property
    def n_points(self) -> int:
        return len(self.points) if is_own(self.dataset) else self.classes * self.n_per_class

    def footprint(self) -> Footprint:
        """A small MLP, its points and the surface's grid, each layer's activations kept for backward."""
        widths = (2, *self.hidden, self.outputs)
        points = self.n_points + self.grid**2
        params = sum(a * b for a, b in zip(widths, widths[1:], strict=False))
        return Footprint(points * sum(widths) * 4 + params * 4, 6 * points * params, fixed_bytes=2**20,
                         fixed_seconds=5e-4, hint="Use fewer points or narrower layers.",
                         activation_elements=points * max(self.hidden), activation_calls=len(self.hidden))

    def model_key(self) -> tuple:
        """The settings that define the data and the initial model (the rest only change training). The class's
        own points are left out: drawing or erasing one changes the data, and the model trains on from where it is
        (``Playground.set_points``), and so are the points per class and the noise, which do not apply to them."""
        drawn = None if is_own(self.dataset) else (self.n_per_class, self.noise)
        return (self.dataset, drawn, self.test_fraction, self.data_seed, self.features, self.hidden, self.activation,
                self.init_seed, self.device, self.dtype, self.classes)

    @property
    def regression(self) -> bool:
        return is_regression(self.dataset)


@dataclass(frozen=True, slots=True)
class PlaygroundSnapshot:
    """Losses are cross-entropy (classification) or mean squared error (regression). For regression the
    accuracy fields hold the share of the targets' variance explained, 1 - MSE / Var(y), clipped to 0..1."""

    step: int
    train_loss: float
    test_loss: float
    train_accuracy: float
    test_accuracy: float
    # (grid, grid) rows along y, on one colour scale 0..1: P(class 1), or for regression (output + 1) / 2,
    # so -1 and +1 take the two class colours, as in TF Playground; with 3 to 6 classes, class + strength
    # (classes.surface_values): the class picked, and how sure the network is of it
    surface: tuple[tuple[float, ...], ...]
    diverged: bool = False
    message: str = ""
    grad_norms: tuple[float, ...] = ()  # per layer, |dLoss/dW| of the last step (first layer first)
    dead: tuple[float, ...] = ()  # per hidden layer, the share of units constant over the training set

    def light(self) -> PlaygroundSnapshot:
        """The numbers the curves need (losses, accuracies, gradient flow), without the surface: a run keeps
        one of these for every recorded step, and only some whole snapshots (about 35 KB each)."""
        return replace(self, surface=(), message="")
