"""Lesson 5's page with TF Playground's controls: features, depth 6, L1, regression, the two toggles,
gradient flow and the export button."""

import json
import subprocess
import sys


def payload(at):
    [el] = [e for e in at.get("bidi_component") if e.proto.id.endswith("playground_live")]
    return json.loads(el.proto.json)


def chart(at, key):
    [el] = [c for c in at.get("plotly_chart") if key in c.proto.id]
    return json.loads(el.proto.spec)


def test_features_depth_l1_reach_the_model(app):
    at = app.switch_page("pages/playground.py").run()
    at.checkbox(key="pg_sinx1").check().run()
    at.checkbox(key="pg_x1x2").check().run()
    at.number_input(key="pg_layers").set_value(6).run()
    at.select_slider(key="pg_l1").set_value(1e-3).run()
    config = at.session_state["pg_session"].model.config
    assert config.features == ("X1", "X2", "X1X2", "sin X1") and len(config.hidden) == 6 and config.l1 == 1e-3
    for key in ("pg_x1", "pg_x2", "pg_sinx1", "pg_x1x2"):
        at.checkbox(key=key).uncheck().run()
    assert any("features must list" in e.value for e in at.error) and not at.exception


def test_regression_toggles_gradient_flow_and_export(app, tmp_path):
    at = app.switch_page("pages/playground.py").run()
    at.selectbox(key="pg_dataset").set_value("Plane (regression)").run()
    at.toggle(key="pg_show_test").set_value(False).run()
    for _ in range(3):
        at.button(key="pg_step").click().run()
    assert not at.exception
    base = {t["name"]: t for t in payload(at)["base"]}
    assert base["train ≤ 0"]["x"] and base["train > 0"]["x"]  # targets below and above 0
    assert not base["test ≤ 0"]["x"] and not base["test > 0"]["x"]  # test data hidden
    assert max(map(abs, base["train ≤ 0"]["x"])) > 4  # TF's plane, about -6..6
    layout = payload(at)["layout"]
    assert layout["yaxis2"]["title"]["text"] == "squared error"
    assert layout["yaxis3"]["title"]["text"] == "variance explained"
    network = chart(at, "pg_network")  # the diagram: a tile per neuron (2 features, 8 + 8 hidden, 1 output)
    assert len([d for d in network["data"] if d["type"] == "heatmap"]) == 2 + 8 + 8 + 1
    flow = chart(at, "pg_gradflow")
    assert flow["layout"]["yaxis"]["type"] == "log" and len([d for d in flow["data"] if d.get("yaxis") != "y2"]) == 3
    at.toggle(key="pg_discretize").set_value(True).run()
    surface = payload(at)["states"][-1]["surface"]
    assert {v for row in surface for v in row} <= {0.0, 1.0}
    assert [b for b in at.get("download_button") if "pg_export" in b.proto.id]  # offered once the run has steps
    pg = at.session_state["pg_session"].model
    from autodiff_core.script_export import export_script

    path = tmp_path / "run.py"
    path.write_text(export_script(pg))
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    last = float(out.stdout.splitlines()[-2].split()[1])
    assert abs(last - at.session_state["pg_session"].history[-1].train_loss) < 1e-5


def test_step_in_slow_motion_shows_forward_loss_backward_update(app):
    at = app.switch_page("pages/playground.py").run()
    at.selectbox(key="pg_activation").set_value("Tanh").run()
    at.toggle(key="pg_slow").set_value(True).run()
    at.button(key="pg_step").click().run()
    assert not at.exception and at.session_state["pg_session"].model.steps_done == 1
    assert any("Step 1 in slow motion" in h.value for h in at.subheader)
    tables = at.dataframe
    assert len(tables) == 3  # forward/backward per layer, the Function's ctx, the update
    assert at.get("graphviz_chart")  # the X-ray's graph of this step
    at.button(key="pg_step").click().run()
    assert any("Step 2 in slow motion" in h.value for h in at.subheader)
