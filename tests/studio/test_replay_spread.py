"""A long run's kept snapshots (what its replay shows) cover the whole run, its first steps included."""

from dataclasses import dataclass

from autodiff_core.figures.playground import playground_replay_figure
from autodiff_core.playground import Playground, PlaygroundConfig
from autodiff_core.recording import every_step_then_sparser
from studio.runner import LiveRun


@dataclass(frozen=True)
class Heavy:  # as big as a playground snapshot: the runner keeps about a hundred of them
    step: int
    surface: list


def _kept_steps(total: int) -> list[int]:
    run = LiveRun("playground", PlaygroundConfig(), lambda: iter(()), lambda s: s.step, speed=None)
    surface = [0.0] * 5000
    steps = [s for s in range(total) if s < 400 or s % 2 == 0 and s < 1200 or s % 4 == 0]
    for s in steps:  # recorded as every_step_then_sparser records a run: every step, then sparser
        run._produce(Heavy(s, surface))
    return [s.step for s in run.view()[0]]


def test_a_long_run_keeps_its_start_and_its_end():
    kept = _kept_steps(2044)
    assert kept[0] == 0 and kept[-1] == max(s for s in range(2044) if s % 4 == 0)
    assert sum(s < 100 for s in kept) >= 5, kept[:10]
    assert max(b - a for a, b in zip(kept, kept[1:], strict=False)) < 2044 / 8, "a stretch of the run has no frame"


def test_replay_labels_are_the_frames_steps():
    pg = Playground(PlaygroundConfig())
    snaps = list(every_step_then_sparser(pg.run, total=60, cap=20))
    fig = playground_replay_figure(snaps, pg.extent, pg.config.grid, (pg.x_train.numpy(), pg.y_train.numpy()),
                                   (pg.x_test.numpy(), pg.y_test.numpy()))
    labels = [st["label"] for st in fig.layout.sliders[0].steps]
    assert labels == [f.name for f in fig.frames]
    assert [int(n) for n in labels] == sorted({s.step for s in snaps})
