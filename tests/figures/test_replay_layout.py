"""Where a replay's parts go (figures/replay_layout.py): the picture, then Play and the slider right under it, then
the curves, in pixels; and the presenter's landscape of that layout puts the controls under both plots."""

from __future__ import annotations

import pytest

from autodiff_core import LogisticConfig, train_logistic
from autodiff_core.figures import logistic_replay_spec
from autodiff_core.figures.playground import playground_replay_figure
from autodiff_core.figures.replay_layout import AXIS, BUTTONS, PHONE_WIDTH, picture_size
from autodiff_core.figures.theme import landscape
from autodiff_core.logistic import logistic_data
from autodiff_core.playground import Playground, PlaygroundConfig


def lesson3() -> dict:
    config = LogisticConfig(max_iterations=60)
    x, y = (t.numpy() for t in logistic_data(config))
    return dict(logistic_replay_spec(list(train_logistic(config)), x, y, config.max_iterations))["layout"]


def lesson5() -> dict:
    pg = Playground(PlaygroundConfig(hidden=(4,), n_per_class=20))
    points = (pg.points_train.numpy(), pg.y_train.numpy())
    return playground_replay_figure(list(pg.run(20, 2)), pg.extent, pg.config.grid, points, points).to_plotly_json()[
        "layout"]


@pytest.mark.parametrize("layout", [lesson3, lesson5], ids=["lesson 3", "lesson 5"])
def test_play_and_the_slider_sit_right_under_the_picture_and_the_curves_after(layout):
    layout = layout()
    plot = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    px = lambda y: (1 - y) * plot  # noqa: E731  (px below the plot area's top)
    picture = px(layout["yaxis"]["domain"][0])
    width = PHONE_WIDTH - layout["margin"]["l"] - layout["margin"]["r"]
    ratio = (layout["yaxis"]["range"][1] - layout["yaxis"]["range"][0]) / (
        layout["xaxis"]["range"][1] - layout["xaxis"]["range"][0])
    assert picture == pytest.approx(picture_size(layout["xaxis"]["range"], layout["yaxis"]["range"], layout["margin"]),
                                    abs=1)
    assert picture <= width * ratio + 1  # a phone's plot is wide enough for it: no band under the picture there
    [play], [slider] = layout["updatemenus"], layout["sliders"]
    assert px(play["y"]) == pytest.approx(picture + AXIS, abs=1)  # under the picture's x-axis title
    assert px(slider["y"]) == pytest.approx(picture + AXIS + BUTTONS, abs=1)
    assert px(layout["yaxis2"]["domain"][1]) > px(slider["y"]) + 80  # the curves after the slider
    assert layout["yaxis"]["constraintoward"] == "top" and layout["margin"]["t"] < 200


@pytest.mark.parametrize("layout", [lesson3, lesson5], ids=["lesson 3", "lesson 5"])
def test_the_presenter_s_landscape_puts_play_and_the_slider_under_both_plots(layout):
    wide = landscape(layout())
    assert wide["yaxis"]["domain"] == wide["yaxis2"]["domain"] == [0, 1]
    assert wide["updatemenus"][0]["y"] < 0 and wide["sliders"][0]["y"] < wide["updatemenus"][0]["y"]
    if "legend2" in wide:  # the curves' own legend, over the curves
        assert wide["legend2"]["y"] > 1 and wide["legend2"]["x"] == wide["xaxis2"]["domain"][0]
