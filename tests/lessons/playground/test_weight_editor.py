"""Setting a weight by hand (TF Playground: click a link, type a value): the engine's ``set_weight``, and the
editor under lesson 5's diagram, through AppTest."""

import json
import time

import pytest
import torch

from autodiff_core.playground import Playground, PlaygroundConfig
from autodiff_core.script_export import export_script
from tests.conftest import run_exported, wait_for_run

CONFIG = PlaygroundConfig(hidden=(4, 3), optimizer="SGD + momentum", learning_rate=0.05)


def test_set_weight_changes_that_weight_alone_and_training_continues_from_it():
    pg = Playground(CONFIG)
    list(pg.run(5, 5))
    before = [p.detach().clone() for p in pg.model.parameters()]
    pg.set_weight(1, 2, 3, 1.5)  # layer 1 -> layer 2: from neuron 4 to neuron 3
    pg.set_weight(2, 0, None, -0.25)  # the output's bias
    after = list(pg.model.parameters())
    expected = [p.clone() for p in before]
    expected[2][2, 3], expected[5][0] = 1.5, -0.25
    for got, want in zip(after, expected, strict=True):
        assert torch.equal(got, want)
    # the next step is the one PyTorch takes from the edited weights, with the optimizer's state kept
    reference = Playground(CONFIG)
    list(reference.run(5, 5))
    with torch.no_grad():
        reference.model.layers[1].weight[2, 3] = 1.5
        reference.model.layers[2].bias[0] = -0.25
    pg.step()
    reference.step()
    for got, want in zip(pg.model.parameters(), reference.model.parameters(), strict=True):
        assert torch.equal(got, want)


def test_the_exported_script_sets_the_same_weights_after_the_same_steps(tmp_path):
    """Edits before the first step, mid-run and after the last: the script's loss at every step is the app's."""
    pg = Playground(CONFIG)
    pg.set_weight(0, 3, 1, -1.25)
    snaps = [pg.snapshot(), *list(pg.run(12, 1))[1:]]
    pg.set_weight(1, 0, None, 0.75)
    pg.set_weight(1, 2, 0, 2.0)
    snaps += list(pg.run(13, 1))[1:]
    pg.set_weight(2, 0, 1, -3.0)
    final = pg.snapshot()
    assert [e[0] for e in pg.edits] == [0, 12, 12, 25]
    steps, final_test = run_exported(export_script(pg), tmp_path)
    torch.testing.assert_close(torch.tensor(steps), torch.tensor([s.train_loss for s in snaps[1:]]),
                               rtol=1e-5, atol=1e-6)
    assert final_test == pytest.approx(final.test_loss, rel=1e-5)  # the last edit too
    pg.reset()
    assert pg.edits == [] and "set_by_hand" not in export_script(pg)


@pytest.mark.parametrize("args, match", [
    ((3, 0, 0, 1.0), "layer must be 0 to 2"), ((0, 4, 0, 1.0), "target"), ((0, 0, 2, 1.0), "source"),
    ((0, 0, 0, float("nan")), "value"), ((0, 0, 0, 1e7), "value"), ((-1, 0, 0, 1.0), "layer")])
def test_set_weight_refuses_what_is_not_a_parameter(args, match):
    pg = Playground(CONFIG)
    with pytest.raises(ValueError, match=match):
        pg.set_weight(*args)


def payload(at):
    [el] = [e for e in at.get("bidi_component") if e.proto.id.endswith("playground_live")]
    return json.loads(el.proto.json)


def diagram(at) -> dict:
    [el] = [c for c in at.get("plotly_chart") if "pg_network" in c.proto.id]
    return json.loads(el.proto.spec)


def open_page(app):
    at = app.switch_page("pages/playground.py").run()
    at.number_input(key="pg_width_1").set_value(4).run()
    at.number_input(key="pg_width_2").set_value(3).run()
    at.button(key="pg_step").click().run()
    at.button(key="pg_step").click().run()
    assert not at.exception
    return at


def edit(at, layer: int, source: int, target: int, value: float):
    at.selectbox(key="pg_edit_layer").set_value(layer).run()
    at.selectbox(key="pg_edit_from").set_value(source).run()
    at.selectbox(key="pg_edit_to").set_value(target).run()
    at.number_input(key="pg_edit_value").set_value(value).run()
    assert not at.exception, [e.value for e in at.exception]


def test_editing_a_weight_changes_the_model_the_surface_and_the_diagram(app):
    at = open_page(app)
    pg = at.session_state["pg_session"].model
    surface, links = payload(at)["states"][-1]["surface"], diagram(at)
    edit(at, 0, 1, 2, 3.0)  # from input X2 to neuron 3 of layer 1
    assert at.session_state["pg_session"].model is pg and pg.model.layers[0].weight[2, 1].item() == 3.0
    assert at.number_input(key="pg_edit_value").value == 3.0 and at.number_input(key="pg_edit_value").label == "Weight"
    state = payload(at)["states"][-1]
    assert state["step"] == 2 and state["surface"] != surface  # the surface is drawn from the edited model
    assert diagram(at) != links and "weight +3.000" in json.dumps(diagram(at))
    history = at.session_state["pg_session"].history
    assert [s.step for s in history] == [0, 1, 2] and history[-1].surface == pg.snapshot().surface
    edit(at, 2, -1, 0, -0.5)  # the output's bias
    assert pg.model.layers[2].bias[0].item() == -0.5 and at.number_input(key="pg_edit_value").label == "Bias"
    assert [s.step for s in at.session_state["pg_session"].history] == [0, 1, 2]  # still one state per step


def test_the_value_box_shows_the_link_as_it_is_now(app):
    at = open_page(app)
    pg = at.session_state["pg_session"].model
    at.selectbox(key="pg_edit_layer").set_value(1).run()
    at.selectbox(key="pg_edit_from").set_value(3).run()
    at.selectbox(key="pg_edit_to").set_value(2).run()
    assert at.number_input(key="pg_edit_value").value == pg.model.layers[1].weight[2, 3].item()
    at.button(key="pg_step").click().run()
    assert at.number_input(key="pg_edit_value").value == pg.model.layers[1].weight[2, 3].item()
    at.number_input(key="pg_width_2").set_value(2).run()  # a new model: neuron 3 of layer 2 is gone
    assert at.selectbox(key="pg_edit_to").value == 0 and not at.exception


def test_a_run_after_an_edit_starts_from_the_edited_weights(app):
    at = open_page(app)
    at.button(key="pg_reset").click().run()
    edit(at, 1, 0, 1, -2.0)
    edited = at.session_state["pg_session"].model.snapshot()
    at.select_slider(key="pg_speed").set_value("200").run()
    at.button(key="pg_play").click().run()
    time.sleep(0.5)
    at.button(key="pg_pause").click().run()
    run = wait_for_run(at, "playground", timeout=10)
    pg = at.session_state["pg_session"].model
    assert run.view()[0][0].surface == edited.surface  # its first state is the edited one
    reference = Playground(pg.config)  # the same steps from the same edit, in the engine alone
    reference.set_weight(1, 1, 0, -2.0)
    for _ in range(pg.steps_done):
        reference.step()
    for got, want in zip(pg.model.parameters(), reference.model.parameters(), strict=True):
        assert torch.equal(got, want)
    assert pg.steps_done > 0 and not at.exception


def test_every_link_and_bias_of_the_diagram_names_itself_for_a_click():
    """A click on the diagram selects a point; its ``customdata`` must name the parameter its hover text shows."""
    from autodiff_core.diagram import network_state
    from autodiff_core.figures.network import network_figure

    pg = Playground(CONFIG)
    fig = network_figure(network_state(pg)).to_plotly_json()
    named = [t for t in fig["data"] if t.get("customdata") is not None]
    assert len(named) == 2  # the links' hover points, the bias squares
    seen = 0
    for trace in named:
        for (c, to, frm), text in zip(trace["customdata"], trace["text"], strict=True):
            layer = pg.model.layers[c]
            value = layer.bias[to] if frm == -1 else layer.weight[to, frm]
            assert text == f"{'bias' if frm == -1 else 'weight'} {value.item():+.3f}"
            seen += 1
    assert seen == sum(p.numel() for p in pg.model.parameters())  # every weight and every bias, once


def test_a_network_too_wide_to_draw_can_still_be_edited(app):
    at = app.switch_page("pages/playground.py").run()
    at.number_input(key="pg_width_1").set_value(20).run()
    assert any("at most 16 neurons" in i.value for i in at.info)
    assert any(c.value.startswith("Set a weight by hand: pick a link") for c in at.caption)
    edit(at, 0, 0, 19, 1.5)  # from X1 to neuron 20 of layer 1
    assert at.session_state["pg_session"].model.model.layers[0].weight[19, 0].item() == 1.5
