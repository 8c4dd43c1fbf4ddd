"""The Autograd X-ray page through AppTest."""

import json


def open_xray(app):
    app.switch_page("pages/xray.py").run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def test_graph_shows_the_custom_node_and_leaf_gradients(app):
    at = open_xray(app)
    dot = at.get("graphviz_chart")[0].proto.spec
    assert "MyReLUBackward" in dot and "#ff9f40" in dot  # highlighted
    assert "|grad| =" in dot and "saved_tensors[0]: (8, 4) float32 cpu" in dot
    at.toggle(key="xr_backward").set_value(False).run()
    assert "|grad| =" not in at.get("graphviz_chart")[0].proto.spec
    at.radio(key="xr_net").set_value("Logistic regression").run()
    dot = at.get("graphviz_chart")[0].proto.spec
    assert "BinaryCrossEntropyBackward0" in dot and "MyReLUBackward" not in dot


def test_ctx_inspector_shows_both_forms_agree(app):
    at = open_xray(app)
    assert any("Both forms return the same grad_input" in s.value for s in at.success)
    codes = [c.proto.code_text for c in at.get("code")]
    assert any("def setup_context" in c for c in codes) and any("class MyReLU(Function)" in c for c in codes)


def test_gradcheck_lab_catches_a_broken_function_and_marks_mismatches(app):
    at = open_xray(app)
    assert any("gradcheck failed" in e.value and "The bug:" in e.value for e in at.error)
    fig = json.loads([c for c in at.get("plotly_chart") if "xr_jacobians" in c.proto.id][0].proto.spec)
    assert [t["type"] for t in fig["data"]][:2] == ["heatmap", "heatmap"]
    assert any(t.get("name") == "mismatch" for t in fig["data"])


def test_gradcheck_lab_kink_and_float32(app):
    at = open_xray(app)
    at.selectbox(key="xr_fn").select("ReLU").run()
    assert any("gradcheck passed" in s.value for s in at.success)
    at.text_input(key="xr_points").input("0, 1").run()
    assert any("kink" in e.value for e in at.error)
    at.text_input(key="xr_points").input("0.5, 1").run()
    at.selectbox(key="xr_fn").select("Tanh").run()
    at.toggle(key="xr_float64").set_value(False).run()
    assert any("float64" in e.value for e in at.error)


def test_comparisons_render_their_findings(app):
    at = open_xray(app)
    text = " ".join(m.value for m in at.markdown)
    assert "larger**" in text
    assert any("identical, bit for bit" in s.value for s in at.success)
    assert any("exactly 0.0 at step 34" in i.value for i in at.info)
    ids = {c.proto.id.split("-")[-1] for c in at.get("plotly_chart")}
    assert {"xr_zero_grad", "xr_sgd", "xr_relu"} <= ids
