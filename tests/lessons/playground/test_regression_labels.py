"""Lesson 5 names a regression's score for what it is, the variance explained (R²), everywhere it shows it:
the live heading and metrics, the legend and axes, the replay's caption, the intro and the notes."""

import json

from autodiff_core.figures.playground import playground_replay_figure


def live_payload(at) -> dict:
    [el] = [e for e in at.get("bidi_component") if e.proto.id.endswith("playground_live")]
    return json.loads(el.proto.json)


def words(data: dict) -> str:
    """Every label the live chart paints: heading, metric names, legend, axis titles."""
    state = data["states"][-1]
    layout = data["layout"]
    return " | ".join([state["caption"], *(label for label, _ in state["metrics"]),
                       *(t.get("name", "") for t in data["base"]),
                       *(layout[a]["title"]["text"] for a in ("yaxis2", "yaxis3"))])


def test_a_regression_says_variance_explained_not_accuracy(app):
    at = app.switch_page("pages/playground.py").run()
    assert "probability of class 1" in " ".join(m.value for m in at.markdown)
    data = live_payload(at)
    assert "accuracy" in words(data) and "variance explained" not in words(data)  # a classification's score

    at.selectbox(key="pg_dataset").select("Plane (regression)").run()
    intro = " ".join(m.value for m in at.markdown)
    assert "probability of class 1" not in intro and "two classes" not in intro
    assert "regression" in intro and "variance explained" in intro and "R²" in intro
    for _ in range(3):
        at.button(key="pg_step").click().run()
    data = live_payload(at)
    said = words(data)
    assert "accuracy" not in said.lower(), said
    state = data["states"][-1]
    assert "test variance explained" in state["caption"]
    assert [label for label, _ in state["metrics"]][3:] == ["train variance explained", "test variance explained"]
    assert "test variance explained" in [t.get("name") for t in data["base"]]
    assert data["layout"]["yaxis2"]["title"]["text"] == "squared error"
    assert data["layout"]["yaxis3"]["title"]["text"] == "variance explained"

    at.slider(key="pg_noise").set_value(0.0).run()
    infos = " ".join(i.value for i in at.info)
    assert "Noise 0" in infos and "accuracy" not in infos and "variance explained" in infos

    for _ in range(3):  # new data, a new model: steps for the replay to show
        at.button(key="pg_step").click().run()
    at.toggle(key="pg_replay_on").set_value(True).run()
    [replay] = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if "pg_replay" in c.proto.id]
    shown = [replay["layout"]["title"]["text"], *(t.get("name", "") for t in replay["data"]),
             *(f["layout"]["title"]["text"] for f in replay["frames"])]
    assert not any("accuracy" in s for s in shown) and "test variance explained" in replay["layout"]["title"]["text"]
    assert not at.exception


def test_the_replay_figure_names_a_regression_by_its_targets():
    """Built elsewhere (a classroom's replay) from points with their targets, it says variance explained too."""
    import numpy as np

    from autodiff_core.playground import Playground, PlaygroundConfig

    pg = Playground(PlaygroundConfig(dataset="Multi-Gaussian (regression)"))
    snaps = list(pg.run(3, record_every=1))
    x, y = pg.points_train.numpy(), pg.y_train.numpy()
    fig = playground_replay_figure(snaps, pg.extent, pg.config.grid, (x, (y > 0).astype(np.float32), y),
                                   (x[:0], y[:0], y[:0]))
    assert "test variance explained" in fig.layout.title.text and "accuracy" not in fig.layout.title.text
    assert fig.layout.yaxis3.title.text == "variance explained" and fig.layout.yaxis2.title.text == "squared error"
    # the surface is the network's output, -1..1, on the points' scale (the snapshot stores (output + 1) / 2)
    heat = fig.data[0]
    assert (heat.zmin, heat.zmax) == (-1, 1) and "output" in heat.hovertemplate and "class" not in heat.hovertemplate
    assert np.allclose(heat.z, np.array(snaps[-1].surface) * 2 - 1, atol=1e-6)
    classes = playground_replay_figure(snaps, pg.extent, pg.config.grid, (x, y > 0), (x[:0], y[:0] > 0))
    assert "test accuracy" in classes.layout.title.text
