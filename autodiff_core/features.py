"""The playground's input features, TF Playground's seven: each maps the points ``(n, 2)`` to one column.

The network sees only the features switched on, stacked as columns ``(n, k)``, in the order of
``FEATURES``. With X1 and X2 alone it sees the raw coordinates; sin X1 and sin X2 make a spiral easy,
X1² and X2² make a circle a straight cut.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

Feature = Callable[[torch.Tensor], torch.Tensor]

FEATURES: dict[str, Feature] = {
    "X1": lambda p: p[:, 0],
    "X2": lambda p: p[:, 1],
    "X1²": lambda p: p[:, 0] * p[:, 0],
    "X2²": lambda p: p[:, 1] * p[:, 1],
    "X1X2": lambda p: p[:, 0] * p[:, 1],
    "sin X1": lambda p: torch.sin(p[:, 0]),
    "sin X2": lambda p: torch.sin(p[:, 1]),
}
# The same maps as Python source, for the exported script (tests check both agree).
FEATURE_SOURCE: dict[str, str] = {
    "X1": "p[:, 0]",
    "X2": "p[:, 1]",
    "X1²": "p[:, 0] * p[:, 0]",
    "X2²": "p[:, 1] * p[:, 1]",
    "X1X2": "p[:, 0] * p[:, 1]",
    "sin X1": "torch.sin(p[:, 0])",
    "sin X2": "torch.sin(p[:, 1])",
}
DEFAULT_FEATURES = ("X1", "X2")


def require_features(names: object) -> None:
    """``names`` must be a non-empty tuple of distinct feature names."""
    if (not isinstance(names, tuple) or not names or len(set(names)) != len(names)
            or any(n not in FEATURES for n in names)):
        raise ValueError(f"features must list one or more distinct names of: {', '.join(FEATURES)}; "
                         f"got {names!r}.")


def ordered(names) -> tuple[str, ...]:
    """The chosen features in the registry's order, so a set of toggles always gives the same columns."""
    return tuple(n for n in FEATURES if n in names)


def feature_matrix(points: torch.Tensor, names: tuple[str, ...]) -> torch.Tensor:
    """``(n, 2)`` points -> ``(n, len(names))`` feature columns."""
    return torch.stack([FEATURES[n](points) for n in names], 1)
