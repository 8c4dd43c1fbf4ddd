"""Lesson 5 names the colours it draws (class 0 is the palette's vermillion, which reads as orange, not red),
and its legend is short: one entry a class and one a curve, as wide as their text, over a plot it does not
crowd."""


from autodiff_core.figures.theme import CLASS_COLORS

NAMES = {"#d55e00": "orange", "#0072b2": "blue", "#e69f00": "orange", "#d62728": "red"}  # as a class sees them


def page_text(at) -> str:
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    return " ".join(texts)


def test_the_intro_names_the_colours_the_classes_are_drawn_in(app):
    at = app.switch_page("pages/playground.py").run()
    assert not at.exception
    zero, one = (NAMES[c.lower()] for c in CLASS_COLORS)
    text = page_text(at)
    assert f"0 ({zero}) and 1 ({one})" in text
    assert "(red)" not in text and "red -1" not in text and "and red for" not in text


def test_every_colour_named_on_the_page_is_one_it_draws(app):
    """The network diagram's note too: weights and neuron maps use the same two colours."""
    at = app.switch_page("pages/playground.py").run()
    zero, one = (NAMES[c.lower()] for c in CLASS_COLORS)
    payloads = " ".join(e.proto.json for e in at.get("bidi_component"))
    text = page_text(at) + " " + payloads
    assert f"{zero} -1, white 0, {one} +1" in text
    assert f"{one} for positive weights and {zero} for negative" in text


def test_the_legend_has_one_entry_a_class_and_one_a_curve():
    import numpy as np

    from autodiff_core.figures.playground import playground_live_payload

    x = np.array([[0.0, 0.0], [1.0, 1.0]])
    y = np.array([0, 1])
    data = playground_live_payload([], (-6, 6, -6, 6), 4, (x, y), (x, y), run_id="r", status="idle",
                                   status_text="", steps_axis=10)
    shown = [t["name"] for t in data["base"] if t.get("showlegend", True) and t.get("name")]
    assert shown == ["class 0", "class 1", "train loss", "test loss", "test accuracy"]
    legend = data["layout"]["legend"]
    assert legend["entrywidthmode"] == "pixels" and legend["entrywidth"] == 0  # as wide as the text: wraps late
    groups = {t["name"]: t.get("legendgroup") for t in data["base"] if t.get("legendgroup")}
    assert groups["class 0"] == groups["test 0"] != groups["class 1"] == groups["test 1"]  # one click hides both


def test_the_plane_axes_are_named_as_the_feature_toggles_are():
    """The toggles say X1 and X2 (TF Playground's names); the plane's axes say the same, not x₀ and x₁."""
    import numpy as np

    from autodiff_core.features import FEATURES
    from autodiff_core.figures.playground import playground_live_payload

    x, y = np.zeros((1, 2)), np.zeros(1)
    layout = playground_live_payload([], (-6, 6, -6, 6), 4, (x, y), (x, y), run_id="r", status="idle",
                                     status_text="", steps_axis=10)["layout"]
    assert [layout["xaxis"]["title"]["text"], layout["yaxis"]["title"]["text"]] == list(FEATURES)[:2] == ["X1", "X2"]
