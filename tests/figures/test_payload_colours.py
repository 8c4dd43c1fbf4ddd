"""The live payloads' colours: the presenter's wrapper maps the old D3 colours to the palette without walking
the parts that hold only text and numbers, and gives exactly what mapping the whole payload gives."""

from __future__ import annotations

import copy

import numpy as np

from autodiff_core import LogisticConfig, TwoLayerConfig, train_logistic, train_two_layer
from autodiff_core.figures import logistic_live_payload, two_layer_live_payload
from autodiff_core.figures.playground import playground_live_payload
from autodiff_core.figures.theme import RECOLOR, recolor
from autodiff_core.logistic import logistic_data
from autodiff_core.playground import Playground, PlaygroundConfig
from studio.presenter import _recolor_payload


def payloads() -> list[dict]:
    config = LogisticConfig(record_every=1, max_iterations=80)
    x, y = (t.numpy() for t in logistic_data(config))
    logistic = logistic_live_payload(list(train_logistic(config)), x, y, run_id="r", status="running",
                                     status_text="", max_iterations=80)
    two_layer = two_layer_live_payload(list(train_two_layer(TwoLayerConfig(steps=60))), run_id="r",
                                       status="running", status_text="", steps=60)
    pg = Playground(PlaygroundConfig())
    snaps = list(pg.run(40, 10))
    playground = playground_live_payload(snaps, pg.extent, pg.config.grid, (pg.x_train.numpy(), pg.y_train.numpy()),
                                         (pg.x_test.numpy(), pg.y_test.numpy()), run_id="r", status="running",
                                         status_text="", steps_axis=500)
    return [logistic, two_layer, playground]


def colours(obj) -> set[str]:
    if isinstance(obj, dict):
        return set().union(*(colours(v) for v in obj.values())) if obj else set()
    if isinstance(obj, list):
        return set().union(*(colours(v) for v in obj)) if obj else set()
    return {obj.lower()} if isinstance(obj, str) and obj.lower() in RECOLOR else set()


def test_the_wrapper_maps_every_colour_the_whole_walk_maps():
    datas = payloads()
    assert all(colours(d) for d in datas[:2]), "lessons 2 and 3 draw some of the old colours"  # else proves nothing
    for data in datas:
        whole, quick = recolor(copy.deepcopy(data)), copy.deepcopy(data)
        _recolor_payload(quick)
        assert quick == whole and not colours(quick)


def test_a_list_of_numbers_is_not_walked_but_a_colour_triple_is():
    data = {"curves": {0: {"x": list(range(5)), "y": np.linspace(0, 1, 5).tolist()}},
            "layout": {"colorway": ["#1f77b4", "#d62728"]}, "base": [{"line": {"color": "#1F77B4"}}],
            "surface": {"colors": [[31, 119, 180], [247, 247, 247]]}}
    recolor(data)
    assert data["curves"][0]["x"] == [0, 1, 2, 3, 4]
    assert "#1f77b4" not in data["layout"]["colorway"] and data["base"][0]["line"]["color"] != "#1F77B4"
    assert data["surface"]["colors"][0] == [0, 114, 178]
