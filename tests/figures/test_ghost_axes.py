"""Ghosts of earlier runs stay readable beside the run on screen: on its axes, apart from its curves."""

from __future__ import annotations

import numpy as np

from autodiff_core import LogisticConfig, TwoLayerConfig, train_logistic, train_two_layer
from autodiff_core.figures import logistic_live_payload, two_layer_live_payload
from autodiff_core.figures.classroom import (
    LOGISTIC,
    TWO_LAYER,
    fit_ghosts,
    ghost_record,
    ghost_traces,
    show_ghost_legend,
)
from autodiff_core.logistic import logistic_data


def _ghost(lesson, config, train, label):
    return {**ghost_record(lesson, "", list(train(config))), "label": label}


def test_lesson_2_loss_axis_takes_in_the_ghosts_of_slower_and_diverged_runs():
    run = list(train_two_layer(TwoLayerConfig()))
    data = two_layer_live_payload(run, run_id="r", status="done", status_text="", steps=500)
    own = list(data["layout"]["yaxis"]["range"])
    slow = _ghost(TWO_LAYER, TwoLayerConfig(learning_rate=1e-8), train_two_layer, "lr 1e-08")
    big = _ghost(TWO_LAYER, TwoLayerConfig(learning_rate=1e-4), train_two_layer, "lr 0.0001")
    traces = ghost_traces(TWO_LAYER, [slow, big])
    fit_ghosts(TWO_LAYER, data["layout"], traces)
    lo, hi = data["layout"]["yaxis"]["range"]
    assert lo <= own[0] and 10 ** lo <= min(slow["y"]) and 10 ** hi >= max(slow["y"])  # the slow one in full
    assert own[1] < hi <= own[1] + 3  # the diverged one climbs off the top, the run's own curve keeps its room


def test_lesson_3_loss_axis_takes_in_a_ghost_above_1():
    config = LogisticConfig()
    x, y = (t.numpy() for t in logistic_data(config))
    data = logistic_live_payload(list(train_logistic(config)), x, y, run_id="r", status="done", status_text="",
                                 max_iterations=config.max_iterations)
    ghost = {"label": "lr 1000", "x": [0, 1, 2], "y": [6.0, 5.5, 6.2], "pinned": False, "boundary": None}
    fit_ghosts(LOGISTIC, data["layout"], ghost_traces(LOGISTIC, [ghost]))
    assert data["layout"]["yaxis2"]["range"][1] >= 6.2


def test_ghosts_are_not_dotted_like_the_accuracy_line_nor_in_its_colour():
    ghosts = [{"label": f"g{i}", "x": [0], "y": [1.0], "pinned": False, "boundary": None} for i in range(3)]
    for t in ghost_traces(LOGISTIC, ghosts):
        assert t["line"]["dash"] != "dot"
        r, g, b = (int(t["line"]["color"][k:k + 2], 16) for k in (1, 3, 5))
        grey = max(r, g, b) - min(r, g, b) < 30
        assert grey or np.hypot(r - 0xCC, np.hypot(g - 0x79, b - 0xA7)) > 80  # not the accuracy's reddish purple


def test_the_ghost_legend_sits_above_the_plot_not_over_the_curve():
    layout = {"showlegend": False, "margin": {"l": 70, "r": 20, "t": 10, "b": 55}}
    show_ghost_legend(layout)
    assert layout["legend"]["y"] > 1 and layout["legend"]["yanchor"] == "bottom" and layout["margin"]["t"] >= 40


def test_replay_frames_fall_on_round_iterations_and_end_on_the_last():
    from autodiff_core.figures import logistic_replay_spec, thin_even

    assert thin_even(list(range(401)), int) == list(range(0, 401, 2))  # the slider reads 0 20 40 ... 400
    assert thin_even(list(range(1000)), int) == list(range(0, 1000, 5)) + [999]
    assert thin_even(list(range(30)), int) == list(range(30))
    config = LogisticConfig(max_iterations=401, record_every=1, stop_accuracy=1.0)
    x, y = (t.numpy() for t in logistic_data(config))
    snaps = list(train_logistic(config))
    names = [f["name"] for f in logistic_replay_spec(snaps, x, y, config.max_iterations)["frames"]]
    gaps = {int(b) - int(a) for a, b in zip(names, names[1:], strict=False)}
    assert names[-1] == str(snaps[-1].iteration) and len(gaps) == 1, gaps


def test_only_the_part_of_a_ghost_on_screen_widens_the_axis():
    layout = {"xaxis": {"range": [0, 2]}, "yaxis": {"range": [7, 26]}}
    ghost = {"label": "lr 1e-06", "x": list(range(500)), "y": [1e7] * 3 + [1e-4] * 497, "pinned": False,
             "boundary": None}
    fit_ghosts(TWO_LAYER, layout, ghost_traces(TWO_LAYER, [ghost]))
    assert layout["yaxis"]["range"] == [7, 26]  # its fall to 1e-4 comes after step 2, off the chart
