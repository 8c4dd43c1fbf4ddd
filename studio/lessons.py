"""The lessons, each declared once: its page, its words on the home page, its settings and presets, and the
config and snapshot of its runs. Navigation (``app.py``), the home page, links and presets, run files and the
tests read this registry; nothing else names a lesson. A new lesson is its page, its engine module and an
entry here (``register``), and its config says what a run needs (``footprint()``, read by the budget).

A setting's key is its widget key, its query parameter and its preset field, and its label is the one its
widget shows (what a warning about a link names). A preset is one line: the settings it changes from the
lesson's defaults (the tutorial's). ``tests/studio/test_presets.py`` runs each preset and checks the outcome its name
promises.

One setting is drawn by several widgets: lesson 5's ``pg_hidden``, the width of each hidden layer, as TF
Playground's ``networkShape`` ("4,2"), which its "Hidden layers" and per-layer widgets edit together
(``studio/layer_widths.py``). Links made before it held ``pg_layers`` and ``pg_width``; they still open (its
``legacy``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import streamlit as st

from autodiff_core import FUNCTIONS, LogisticConfig, LogisticSnapshot, TwoLayerConfig, TwoLayerSnapshot, runs_io
from autodiff_core.api_demos import PARTS as API_PARTS  # lesson 8's parts, by key
from autodiff_core.classes import MAX_CLASSES
from autodiff_core.data import DATASET_NAMES
from autodiff_core.features import DEFAULT_FEATURES, FEATURES
from autodiff_core.figures import classroom as run_figures
from autodiff_core.figures.classroom import RunFigures
from autodiff_core.figures.landscape import LANDSCAPE
from autodiff_core.functions import activation_names
from autodiff_core.grading.challenges import CHALLENGES
from autodiff_core.landscape import MAX_STEPS as LANDSCAPE_STEPS
from autodiff_core.landscape import LandscapeConfig, LandscapeSnapshot
from autodiff_core.playground import MAX_DEPTH, OPTIMIZERS, PlaygroundConfig, PlaygroundSnapshot
from autodiff_core.surfaces import SURFACES

from .links import Legacy, Setting
from .own_points import PointsSetting
from .session_functions import ActivationSetting  # a lesson 6 Function travels in links as code


@dataclass(frozen=True)
class Lesson:
    """One lesson: what navigation, the home page, links, presets and run files need to know of it."""

    key: str  # its URL path (/logistic), its settings' lesson and its run files' "lesson"
    number: int  # its place in the course, shown before its title
    title: str
    blurb: str  # what the home page says of it (markdown, written here)
    settings: tuple[Setting, ...] = ()
    presets: Mapping[str, Mapping] = field(default_factory=dict)  # name -> the settings it changes
    legacy: tuple[Legacy, ...] = ()  # parameters of older links, folded into today's settings
    # what a preset, picked or in a link, also sets: the part of the page it is about comes into view (lesson 4's
    # presets are all the Gradcheck lab's, and its tabs draw only the open one)
    preset_opens: Mapping[str, object] = field(default_factory=dict)
    config: type | None = None  # a run's frozen config: its fields are a run file's settings
    snapshot: type | None = None  # a run's recorded state: a run file's states
    run_figures: RunFigures | None = None  # how a finished run, a loaded run file and earlier runs' ghosts draw
    page: str = ""  # the page's file, from the app's folder; pages/<key>.py unless given

    def __post_init__(self) -> None:
        if not self.page:
            object.__setattr__(self, "page", f"pages/{self.key}.py")
        keys = [s.key for s in self.settings]
        if len(set(keys)) != len(keys):
            raise ValueError(f"Lesson {self.key!r} declares a setting twice.")
        for name, preset in self.presets.items():
            if unknown := set(preset) - set(keys):
                raise ValueError(f"Preset {name!r} of lesson {self.key!r} sets {sorted(unknown)}, not its settings.")

    @property
    def nav_title(self) -> str:
        return f"{self.number} · {self.title}"

    def setting(self, key: str) -> Setting:
        return next(s for s in self.settings if s.key == key)


_REGISTRY: dict[str, Lesson] = {}


def register(lesson: Lesson) -> Lesson:
    """Add ``lesson`` (or replace the one with its key), in the order of its number; a lesson with runs
    registers its run files' kind."""
    _REGISTRY[lesson.key] = lesson
    ordered = sorted(_REGISTRY.values(), key=lambda x: x.number)
    _REGISTRY.clear()
    _REGISTRY.update((x.key, x) for x in ordered)
    if lesson.config is not None:
        runs_io.register_kind(lesson.key, lesson.config, lesson.snapshot)
    return lesson


def unregister(key: str) -> None:
    """Take a lesson out again (a test's lesson)."""
    if _REGISTRY.pop(key, None) is not None:
        runs_io.unregister_kind(key)


def lessons() -> list[Lesson]:
    """Every lesson, in the course's order."""
    return list(_REGISTRY.values())


def lesson(key: str) -> Lesson:
    return _REGISTRY[key]


def setting(key: str) -> Setting:
    """A setting of any lesson, by its key."""
    found = next((s for x in _REGISTRY.values() for s in x.settings if s.key == key), None)
    if found is None:
        raise KeyError(f"No lesson declares a setting {key!r}.")
    return found


def widget(key: str, where=st, **extra):
    """Draw the widget of setting ``key`` from its declaration, in ``where`` (a column; the page by default)."""
    return setting(key).draw(where, **extra)


class _ByLesson(Mapping):
    """A read-only view of one part of every lesson, by key, as the registry holds it now."""

    def __init__(self, part: str) -> None:
        self.part = part

    def __getitem__(self, key: str):
        value = getattr(_REGISTRY[key], self.part)
        return list(value) if self.part == "settings" else value

    def __iter__(self):
        return iter(_REGISTRY)

    def __len__(self) -> int:
        return len(_REGISTRY)


SETTINGS: Mapping[str, list[Setting]] = _ByLesson("settings")
PRESETS: Mapping[str, Mapping[str, Mapping]] = _ByLesson("presets")
LEGACY: Mapping[str, tuple[Legacy, ...]] = _ByLesson("legacy")

_L, _T, _P, _O = LogisticConfig(), TwoLayerConfig(), PlaygroundConfig(), LandscapeConfig()
_ACTS = tuple(activation_names())
_FNS = tuple(FUNCTIONS)
NUMBERS = r"[0-9eE+\-.,; ]{0,200}"  # a list of numbers as a student types it; nothing a page could render
L2_CHOICES = (0.0, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1)
# Lesson 5's input features, one checkbox each: feature name -> widget key
FEATURE_KEYS = {"X1": "pg_x1", "X2": "pg_x2", "X1²": "pg_x1sq", "X2²": "pg_x2sq", "X1X2": "pg_x1x2",
                "sin X1": "pg_sinx1", "sin X2": "pg_sinx2"}
assert list(FEATURE_KEYS) == list(FEATURES)
SPEEDS = ("1", "2", "5", "10", "20", "50", "100", "200", "500", "1000", "2000", "max")  # a live run's pace
SPEED_HELP = "Slow it down so a class can follow; 'max' runs as fast as the engine."
ZG_DATA = ("Overlapping clusters (mean 1.0)", "The tutorial's clusters (mean 1.7)")  # lesson 4's zero_grad() tab
MAX_NEURONS = 64  # neurons in a hidden layer of lesson 5 (the diagram draws up to diagram.MAX_WIDTH of them)


def _hidden_from_old_link(given: dict, current: dict) -> dict:
    """An older link's ``pg_layers`` (how many hidden layers) and ``pg_width`` (the neurons of each): every
    layer as wide. A link that gives only one keeps the other from the preset it names, or the default."""
    hidden = current["pg_hidden"]
    return {"pg_hidden": (given.get("pg_width", hidden[0]),) * given.get("pg_layers", len(hidden))}


register(Lesson(
    "custom_function", 1, "Custom Function",
    "`MyReLU` step by step: what `forward` saves in `ctx`, what `backward` gets and returns, and gradcheck's "
    "verdict.",
    settings=(
        Setting("cf_function", str, "ReLU", choices=_FNS, label="Function",
                help="The tutorial's MyReLU first; the BROKEN ones hide a classic bug in backward."),
        Setting("cf_input", str, "-2, -1, -0.5, 0.5, 1, 2.5", label="Input x (comma-separated)", pattern=NUMBERS),
        Setting("cf_grad_output", str, "1, 1, 1, 1, 1, 1", label="grad_output fed into backward", pattern=NUMBERS),
    ),
    presets={
        "The tutorial's MyReLU": {},
        "A point at the kink": {"cf_input": "-1, 0, 1", "cf_grad_output": "1, 1, 1"},
        "A broken backward": {"cf_function": "BROKEN ReLU: comparison flipped"},
        "Sigmoid done right": {"cf_function": "Sigmoid"},
    },
))

register(Lesson(
    "two_layer", 2, "Two-layer net",
    "The tutorial's net trained by hand with `MyReLU`: watch the loss fall on a log scale, with the weight and "
    "gradient norms.",
    settings=(
        Setting("tl_N", int, _T.N, 1, 10_000, label="N (batch)", step=16),
        Setting("tl_D_in", int, _T.D_in, 1, 20_000, label="D_in", step=100),
        Setting("tl_H", int, _T.H, 1, 5_000, label="H (hidden)", step=10),
        Setting("tl_D_out", int, _T.D_out, 1, 1_000, label="D_out", step=1),
        Setting("tl_lr", float, _T.learning_rate, 1e-12, 1e6, label="Learning rate", fmt="%.2e", step=1e-7,
                help="The tutorial uses 1e-6. Try 1e-4 to see training diverge."),
        Setting("tl_steps", int, _T.steps, 1, 100_000, label="Steps", step=100),
        ActivationSetting("tl_activation", str, _T.activation, choices=_ACTS, label="ReLU implementation",
                          help="'ReLU' is the tutorial's MyReLU; 'torch.relu' is PyTorch's own."),
        Setting("two_layer_speed", str, "100", choices=SPEEDS, widget="select_slider",
                label="Speed (steps per second)", help=SPEED_HELP),
    ),
    presets={
        "The tutorial as written": {},
        "Learning rate too big": {"tl_lr": 1e-4},
        "Learning rate too small": {"tl_lr": 1e-8},
        "torch.relu instead of MyReLU": {"tl_activation": "torch.relu"},
    },
    config=TwoLayerConfig, snapshot=TwoLayerSnapshot, run_figures=run_figures.TWO_LAYER,
))

register(Lesson(
    "logistic", 3, "Logistic regression",
    "An `nn.Module` on two clusters: the decision boundary moves as SGD learns, and you can see what "
    "forgetting `zero_grad()` does.",
    settings=(
        Setting("lr_n", int, _L.n_per_class, 1, 5_000, label="Points per class", step=10),
        Setting("lr_mean", float, _L.mean, -10.0, 10.0, label="Cluster mean (±)", step=0.1),
        Setting("lr_bias", float, _L.bias, -10.0, 10.0, label="Bias (shift of both)", step=0.5),
        Setting("lr_lr", float, _L.learning_rate, 1e-6, 1e6, label="Learning rate", fmt="%.4g", step=0.005),
        Setting("lr_momentum", float, _L.momentum, 0.0, 0.999, label="Momentum", step=0.05),
        Setting("lr_iters", int, _L.max_iterations, 1, 100_000, label="Max iterations", step=100),
        Setting("lr_every", int, _L.record_every, 1, 1_000, label="Draw every", step=1,
                help="Iterations between drawn states."),
        Setting("lr_stop", float, _L.stop_accuracy, 0.0, 1.0, label="Stop at accuracy >", step=0.01),
        Setting("lr_forget", bool, False, label="Forget `optimizer.zero_grad()` (the tutorial's bug)",
                help="Gradients then pile up from step to step, and the weights grow many times larger."),
        Setting("logistic_speed", str, "50", choices=SPEEDS, widget="select_slider",
                label="Speed (iterations per second)", help=SPEED_HELP),
    ),
    presets={
        "The tutorial as written": {},
        "Forget zero_grad": {"lr_forget": True},
        "Learning rate too big": {"lr_lr": 1000.0},
        "No momentum: slow": {"lr_momentum": 0.0},
        "Overlapping clusters": {"lr_mean": 0.3},
    },
    config=LogisticConfig, snapshot=LogisticSnapshot, run_figures=run_figures.LOGISTIC,
))

register(Lesson(
    "xray", 4, "Autograd X-ray",
    "Inside backward: the autograd graph, `ctx`, a gradcheck lab with Jacobians, and the classic mistakes side "
    "by side.",
    settings=(
        Setting("xr_net", str, "Two-layer net", choices=("Two-layer net", "Logistic regression"), label="Network",
                widget="radio"),
        Setting("xr_backward", bool, True, label="Run backward"),
        Setting("xr_fn", str, "BROKEN ReLU: comparison flipped", choices=_FNS, label="Function"),
        Setting("xr_points", str, "-1.5, -0.4, 0.3, 1.2, 2", label="Points to check", pattern=NUMBERS),
        Setting("xr_float64", bool, True, label="float64"),
        Setting("xr_zg_data", str, "Overlapping clusters (mean 1.0)",
                choices=ZG_DATA, label="Data", widget="radio",
                help="Far-apart clusters forgive oversized steps; overlapping ones do not."),
    ),
    presets={
        "gradcheck catches a broken backward": {},
        "gradcheck passes MyReLU": {"xr_fn": "ReLU"},
        "A point at the kink": {"xr_fn": "ReLU", "xr_points": "-1, 0, 1"},
        "float32 fools gradcheck": {"xr_fn": "ReLU", "xr_float64": False},
    },
    preset_opens={"xr_tab": "Gradcheck lab"},
))

register(Lesson(
    "playground", 5, "Classification playground",
    "The custom ReLU at work: a small network learns XOR, circles, moons and spirals, up to six classes through "
    "a custom softmax, or points you draw, with the decision surface redrawn live.",
    settings=(
        Setting("pg_dataset", str, _P.dataset, choices=DATASET_NAMES, label="Data"),
        Setting("pg_classes", int, 3, 2, MAX_CLASSES, label="Classes", widget="slider", step=1,
                help="Blobs, spiral arms, pie slices and your own points come in 2 to 6 classes. From 3 on, the "
                     "network ends in MySoftmax, one output per class, and learns by cross-entropy; 2 keep TF's one "
                     "sigmoid output."),
        PointsSetting("pg_points", tuple, (), label="Your points", preset=False),
        Setting("pg_noise", float, _P.noise, 0.0, 0.5, label="Noise", widget="slider", step=0.05,
                help="As in TF Playground: labels near the boundary flip (clusters widen, spirals jitter)."),
        Setting("pg_n", int, _P.n_per_class, 10, 500, label="Points per class", widget="slider", step=10),
        Setting("pg_test", float, _P.test_fraction, 0.1, 0.5, label="Test fraction", widget="slider", step=0.05),
        Setting("pg_data_seed", int, _P.data_seed, 0, 2**31 - 1, label="Data seed (Regenerate)"),
        *(Setting(key, bool, name in DEFAULT_FEATURES, label=name, widget="checkbox",
                  help=f"Feed the network the input feature {name}.") for name, key in FEATURE_KEYS.items()),
        Setting("pg_hidden", tuple, _P.hidden, 1, MAX_NEURONS, items=MAX_DEPTH,
                label="Hidden layers (neurons in each)"),
        ActivationSetting("pg_activation", str, _P.activation, choices=_ACTS, label="Activation"),
        Setting("pg_optimizer", str, _P.optimizer, choices=OPTIMIZERS, label="Optimizer"),
        Setting("pg_lr", float, _P.learning_rate, 1e-5, 1e6, label="Learning rate", fmt="%.4g", step=0.01),
        Setting("pg_batch", int, _P.batch_size, 1, 1000, label="Batch size"),
        Setting("pg_l2", float, _P.l2, choices=L2_CHOICES, label="L2 (weight decay)"),
        Setting("pg_l1", float, _P.l1, choices=L2_CHOICES, label="L1",
                help="Pulls every weight towards 0 by the same amount: many end at exactly 0."),
        Setting("pg_show_test", bool, True, label="Show test data"),
        Setting("pg_discretize", bool, False, label="Discretize output",
                help="Colour each point by the class the network picks."),
        Setting("pg_slow", bool, False, label="Slow motion",
                help="Each Step then shows its forward values, loss, the gradients flowing back through the "
                     "Function's backward (with its ctx), and the update."),
        Setting("pg_speed", str, "100", choices=SPEEDS, widget="select_slider", label="Speed (steps per second)"),
    ),
    presets={
        "XOR, as set up": {},
        "Dead ReLUs": {"pg_optimizer": "SGD + momentum", "pg_lr": 10.0},
        "Spirals need depth": {"pg_dataset": "Spirals", "pg_noise": 0.0, "pg_hidden": (16, 16, 16)},
        "Spirals from sin features": {
            "pg_dataset": "Spirals", "pg_noise": 0.0, "pg_n": 250, "pg_test": 0.5, "pg_hidden": (8, 8),
            "pg_activation": "Tanh", "pg_optimizer": "SGD (by hand)", "pg_lr": 0.03, "pg_batch": 10,
            "pg_sinx1": True, "pg_sinx2": True},
        "Vanishing gradients: sigmoid, 6 layers": {
            "pg_dataset": "Circles", "pg_hidden": (8, 8, 8, 8, 8, 8), "pg_activation": "Sigmoid",
            "pg_optimizer": "SGD (by hand)", "pg_lr": 0.03, "pg_batch": 10},
        "Circles, TF's 4-2 tanh": {
            "pg_dataset": "Circles", "pg_noise": 0.0, "pg_n": 250, "pg_test": 0.5, "pg_hidden": (4, 2),
            "pg_activation": "Tanh", "pg_optimizer": "SGD (by hand)", "pg_lr": 0.03, "pg_batch": 10},
        "Linear activation: only a straight line": {
            "pg_dataset": "Circles", "pg_hidden": (8, 8, 8), "pg_activation": "Linear"},
        "Five blobs: MySoftmax": {"pg_dataset": "Blobs", "pg_classes": 5},
        "Six pie slices": {"pg_dataset": "Pie slices", "pg_classes": 6, "pg_hidden": (16, 16)},
        "Three spiral arms": {"pg_dataset": "Spiral arms", "pg_classes": 3, "pg_hidden": (16, 16)},
    },
    legacy=(Legacy((Setting("pg_layers", int, len(_P.hidden), 1, MAX_DEPTH, label="Hidden layers"),
                    Setting("pg_width", int, _P.hidden[0], 1, MAX_NEURONS, label="Neurons per layer")),
                   _hidden_from_old_link),),
    config=PlaygroundConfig, snapshot=PlaygroundSnapshot, run_figures=run_figures.PLAYGROUND,
))

register(Lesson(
    "write_function", 6, "Write your own Function",
    "Your turn: write `forward` and `backward` for ReLU, Sigmoid, GELU and more; gradcheck judges them, and "
    "a Function that passes trains in lessons 2 and 5.",
    settings=(
        Setting("wf_challenge", str, "relu", choices=tuple(CHALLENGES), label="Challenge"),
    ),  # the challenge is the whole setting, and no preset; ?solved= lists those solved
))

register(Lesson(
    "optimizers", 7, "Optimizers on a loss landscape",
    "SGD, momentum, Nesterov, RMSprop and Adam, each written by hand and equal to `torch.optim` bit for bit, race "
    "down a narrow bowl, Rosenbrock's valley and lesson 3's loss: zig-zags, overshoot and divergence, live.",
    settings=(
        Setting("op_landscape", str, _O.landscape, choices=tuple(SURFACES), label="Landscape"),
        Setting("op_kappa", float, _O.conditioning, 1.0, 1000.0, label="Bowl's κ = λmax/λmin", step=1.0,
                help="How many times steeper the bowl is across its valley than along it (the bowl only)."),
        Setting("op_lr", float, _O.learning_rate, 1e-4, 100.0, label="Learning rate", fmt="%.4g", step=0.01,
                help="The same for all five. On the bowl, plain gradient descent converges below 2/λmax = 0.5."),
        Setting("op_momentum", float, _O.momentum, 0.0, 0.999, label="Momentum β", step=0.05,
                help="Momentum's and Nesterov's β. RMSprop and Adam keep torch's defaults."),
        Setting("op_steps", int, _O.steps, 1, LANDSCAPE_STEPS, label="Steps", step=10),
        Setting("optimizers_speed", str, "20", choices=SPEEDS, widget="select_slider",
                label="Speed (steps per second)", help=SPEED_HELP),
    ),
    presets={
        "Momentum on a narrow bowl": {},
        "Zig-zag across the valley": {"op_lr": 0.45},
        "Past 2/λmax: SGD diverges": {"op_lr": 0.55},
        "Rosenbrock's valley": {"op_landscape": "Rosenbrock's valley", "op_momentum": 0.95, "op_steps": 500},
        "Lesson 3's loss: momentum overshoots": {"op_landscape": "Logistic regression", "op_lr": 0.3},
    },
    config=LandscapeConfig, snapshot=LandscapeSnapshot, run_figures=LANDSCAPE,
))

register(Lesson(
    "function_api", 8, "The whole autograd.Function API",
    "Beyond forward and backward: double backward, forward mode, in place, outputs with no gradient, "
    "`needs_input_grad` timed, and `torch.func`; each a small Function to run, break and edit.",
    settings=(
        Setting("fa_part", str, "double_backward", choices=tuple(API_PARTS), label="Part", widget="radio"),
        Setting("fa_x", str, "-0.4, 2, -1.5, 1.2, 0.3", label="Input x (comma-separated)", pattern=NUMBERS),
        Setting("fa_v", str, "1, 0.5, -1, 2, 0.25", label="Vector v (the H·v direction, the JVP's tangent)",
                pattern=NUMBERS),
    ),
    presets={  # one per part
        "Double backward through sinh": {},
        "Forward mode: one column of the Jacobian": {"fa_part": "forward_mode", "fa_v": "1, 0, 0, 0, 0"},
        "In place: mark_dirty": {"fa_part": "in_place"},
        "Sort: indices have no gradient": {"fa_part": "non_differentiable"},
        "needs_input_grad, timed": {"fa_part": "needs_input_grad"},
        "torch.func: vmap and grad": {"fa_part": "torch_func"},
    },
))
