"""A lesson that exists only for tests: its engine (a config that says its footprint, a snapshot, a trainer), its
page (``page.py``) and its registry entry, and nothing else, as a new lesson is added."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from autodiff_core.footprint import Footprint
from studio.lessons import Lesson
from studio.links import Setting


@dataclass(frozen=True)
class ToyConfig:
    size: int = 10
    learning_rate: float = 0.1
    device: str = "cpu"
    dtype: str = "float32"

    def footprint(self) -> Footprint:
        return Footprint(numbers=1000 * self.size, flops=0.0, fixed_seconds=0.01, hint="Make it smaller.")


@dataclass(frozen=True, slots=True)
class ToySnapshot:
    step: int
    loss: float


def train_toy(config: ToyConfig) -> Iterator[ToySnapshot]:
    loss = 1.0
    for step in range(5):
        yield ToySnapshot(step, loss)
        loss *= 1 - config.learning_rate


TOY = Lesson(
    "toy_lesson", 99, "Toy lesson", "A lesson that exists only for tests.",
    settings=(Setting("toy_lr", float, 0.1, 0.001, 1.0, label="Toy learning rate", help="How big a step."),
              Setting("toy_size", int, 10, 1, 100, label="Toy size")),
    presets={"As set up": {}, "Big steps": {"toy_lr": 0.9}},
    config=ToyConfig, snapshot=ToySnapshot, page="tests/studio/toy_lesson/page.py")
