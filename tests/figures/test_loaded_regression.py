"""A loaded run and an export of a regression draw its points by target, as lesson 5's page does."""

from autodiff_core.figures.classroom import replay_figure
from autodiff_core.playground import Playground, PlaygroundConfig
from studio.lessons import lesson


def test_a_loaded_regression_colours_points_by_target():
    config = PlaygroundConfig(dataset="Plane (regression)")
    pg = Playground(config)
    fig = replay_figure(lesson("playground").run_figures, config, [pg.snapshot()])
    points = [t for t in fig.data if t.type == "scatter" and t.mode == "markers"]
    names = {t.name for t in points if t.showlegend}
    assert names == {"train > 0", "train ≤ 0"}, names
    assert sum(len(t.x) for t in points) == len(pg.y_train) + len(pg.y_test)
    for t in points:  # each point its target's colour on the surface's scale, not one class colour
        assert not isinstance(t.marker.color, str) and len(t.marker.color) == len(t.x)
