"""Every lesson's settings and named presets, in one place (DESIGN §14).

A setting's key is its widget key, its query parameter and its preset field. A preset is one line: the
settings it changes from the lesson's defaults (the tutorial's). ``tests/test_presets.py`` runs each preset
and checks the outcome its name promises.

One setting is drawn by several widgets: lesson 5's ``pg_hidden``, the width of each hidden layer, as TF
Playground's ``networkShape`` ("4,2"), which its "Hidden layers" and per-layer widgets edit together
(``pages/playground.py``). Links made before it held ``pg_layers`` and ``pg_width``; they still open (``LEGACY``).
"""

from __future__ import annotations

from autodiff_core import FUNCTIONS, LogisticConfig, TwoLayerConfig
from autodiff_core.features import DEFAULT_FEATURES, FEATURES
from autodiff_core.functions import activation_names
from autodiff_core.grading.challenges import CHALLENGES
from autodiff_core.playground import MAX_DEPTH, OPTIMIZERS, PlaygroundConfig
from autodiff_core.playground_data import PLAYGROUND_DATASETS

from . import links
from .links import Legacy, Setting
from .live_view import SPEEDS
from .student_functions import ActivationSetting, link_consent  # a lesson 6 Function travels in links as code

_L, _T, _P = LogisticConfig(), TwoLayerConfig(), PlaygroundConfig()
_ACTS = tuple(activation_names())
_FNS = tuple(FUNCTIONS)
L2_CHOICES = (0.0, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1)
# Lesson 5's input features, one checkbox each: feature name -> widget key
FEATURE_KEYS = {"X1": "pg_x1", "X2": "pg_x2", "X1²": "pg_x1sq", "X2²": "pg_x2sq", "X1X2": "pg_x1x2",
                "sin X1": "pg_sinx1", "sin X2": "pg_sinx2"}
assert list(FEATURE_KEYS) == list(FEATURES)
MAX_NEURONS = 64  # neurons in a hidden layer of lesson 5 (the diagram draws up to diagram.MAX_WIDTH of them)
NUMBERS = r"[0-9eE+\-.,; ]{0,200}"  # a list of numbers as a student types it; nothing a page could render

SETTINGS: dict[str, list[Setting]] = {
    "custom_function": [
        Setting("cf_function", str, "ReLU", choices=_FNS, short="Function"),
        Setting("cf_input", str, "-2, -1, -0.5, 0.5, 1, 2.5", short="x", pattern=NUMBERS),
        Setting("cf_grad_output", str, "1, 1, 1, 1, 1, 1", short="grad_output", pattern=NUMBERS),
    ],
    "two_layer": [
        Setting("tl_N", int, _T.N, 1, 10_000, short="N"),
        Setting("tl_D_in", int, _T.D_in, 1, 20_000, short="D_in"),
        Setting("tl_H", int, _T.H, 1, 5_000, short="H"),
        Setting("tl_D_out", int, _T.D_out, 1, 1_000, short="D_out"),
        Setting("tl_lr", float, _T.learning_rate, 1e-12, 1e6, short="lr"),
        Setting("tl_steps", int, _T.steps, 1, 100_000, short="steps"),
        ActivationSetting("tl_activation", str, _T.activation, choices=_ACTS, short=""),
        Setting("two_layer_speed", str, "100", choices=tuple(SPEEDS), short="speed"),
    ],
    "logistic": [
        Setting("lr_n", int, _L.n_per_class, 1, 5_000, short="points"),
        Setting("lr_mean", float, _L.mean, -10.0, 10.0, short="mean"),
        Setting("lr_bias", float, _L.bias, -10.0, 10.0, short="bias"),
        Setting("lr_lr", float, _L.learning_rate, 1e-6, 1e6, short="lr"),
        Setting("lr_momentum", float, _L.momentum, 0.0, 0.999, short="momentum"),
        Setting("lr_iters", int, _L.max_iterations, 1, 100_000, short="max iterations"),
        Setting("lr_every", int, _L.record_every, 1, 1_000, short="draw every"),
        Setting("lr_stop", float, _L.stop_accuracy, 0.0, 1.0, short="stop at"),
        Setting("lr_forget", bool, False, short="no zero_grad"),
        Setting("logistic_speed", str, "50", choices=tuple(SPEEDS), short="speed"),
    ],
    "xray": [
        Setting("xr_net", str, "Two-layer net", choices=("Two-layer net", "Logistic regression"), short=""),
        Setting("xr_backward", bool, True, short="backward"),
        Setting("xr_fn", str, "BROKEN ReLU: comparison flipped", choices=_FNS, short=""),
        Setting("xr_points", str, "-1.5, -0.4, 0.3, 1.2, 2", short="points", pattern=NUMBERS),
        Setting("xr_float64", bool, True, short="float64"),
        Setting("xr_zg_data", str, "Overlapping clusters (mean 1.0)",
                choices=("Overlapping clusters (mean 1.0)", "The tutorial's clusters (mean 1.7)"), short=""),
    ],
    "playground": [
        Setting("pg_dataset", str, _P.dataset, choices=tuple(PLAYGROUND_DATASETS), short=""),
        Setting("pg_noise", float, _P.noise, 0.0, 0.5, short="noise"),
        Setting("pg_n", int, _P.n_per_class, 10, 500, short="points"),
        Setting("pg_test", float, _P.test_fraction, 0.1, 0.5, short="test"),
        Setting("pg_data_seed", int, _P.data_seed, 0, 2**31 - 1, short="data seed"),
        *(Setting(key, bool, name in DEFAULT_FEATURES, short=name) for name, key in FEATURE_KEYS.items()),
        Setting("pg_hidden", tuple, _P.hidden, 1, MAX_NEURONS, items=MAX_DEPTH, short="layers"),
        ActivationSetting("pg_activation", str, _P.activation, choices=_ACTS, short=""),
        Setting("pg_optimizer", str, _P.optimizer, choices=OPTIMIZERS, short=""),
        Setting("pg_lr", float, _P.learning_rate, 1e-5, 1e6, short="lr"),
        Setting("pg_batch", int, _P.batch_size, 1, 1000, short="batch"),
        Setting("pg_l2", float, _P.l2, choices=L2_CHOICES, short="L2"),
        Setting("pg_l1", float, _P.l1, choices=L2_CHOICES, short="L1"),
        Setting("pg_show_test", bool, True, short="test data"),
        Setting("pg_discretize", bool, False, short="discretize"),
        Setting("pg_slow", bool, False, short="slow motion"),
        Setting("pg_speed", str, "100", choices=tuple(SPEEDS), short="speed"),
    ],
    "write_function": [
        Setting("wf_challenge", str, "relu", choices=tuple(CHALLENGES), short="challenge"),
    ],
}

PRESETS: dict[str, dict[str, dict]] = {
    "custom_function": {
        "The tutorial's MyReLU": {},
        "A point at the kink": {"cf_input": "-1, 0, 1", "cf_grad_output": "1, 1, 1"},
        "A broken backward": {"cf_function": "BROKEN ReLU: comparison flipped"},
        "Sigmoid done right": {"cf_function": "Sigmoid"},
    },
    "two_layer": {
        "The tutorial as written": {},
        "Learning rate too big": {"tl_lr": 1e-4},
        "Learning rate too small": {"tl_lr": 1e-8},
        "torch.relu instead of MyReLU": {"tl_activation": "torch.relu"},
    },
    "logistic": {
        "The tutorial as written": {},
        "Forget zero_grad": {"lr_forget": True},
        "Learning rate too big": {"lr_lr": 1000.0},
        "No momentum: slow": {"lr_momentum": 0.0},
        "Overlapping clusters": {"lr_mean": 0.3},
    },
    "xray": {
        "gradcheck catches a broken backward": {},
        "gradcheck passes MyReLU": {"xr_fn": "ReLU"},
        "A point at the kink": {"xr_fn": "ReLU", "xr_points": "-1, 0, 1"},
        "float32 fools gradcheck": {"xr_fn": "ReLU", "xr_float64": False},
    },
    "playground": {
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
    },
    "write_function": {},  # the challenge is the whole setting; ?solved= lists those solved
}




def _hidden_from_old_link(given: dict, current: dict) -> dict:
    """An older link's ``pg_layers`` (how many hidden layers) and ``pg_width`` (the neurons of each): every
    layer as wide. A link that gives only one keeps the other from the preset it names, or the default."""
    hidden = current["pg_hidden"]
    return {"pg_hidden": (given.get("pg_width", hidden[0]),) * given.get("pg_layers", len(hidden))}


LEGACY: dict[str, tuple[Legacy, ...]] = {
    "playground": (Legacy((Setting("pg_layers", int, len(_P.hidden), 1, MAX_DEPTH),
                           Setting("pg_width", int, _P.hidden[0], 1, MAX_NEURONS)), _hidden_from_old_link),),
}


def bind_lesson(lesson: str) -> None:
    """The one call a lesson page makes, after its ``init_state`` and before its widgets: the URL sets the
    widgets on first sight, and the address bar follows them."""
    links.bind(lesson, SETTINGS[lesson], PRESETS[lesson], LEGACY.get(lesson, ()))
    for setting in SETTINGS[lesson]:
        if isinstance(setting, ActivationSetting):  # a Function the link carries waits for consent
            link_consent(setting.key)


def preset_picker(lesson: str) -> None:
    links.preset_picker(lesson, SETTINGS[lesson], PRESETS[lesson])


def sync_url(lesson: str) -> None:
    """At the end of a page run: settings a button changed mid-run (Regenerate) reach the address bar."""
    links.write_url(SETTINGS[lesson], LEGACY.get(lesson, ()))
