"""The Autograd X-ray page through AppTest."""

import json

from autodiff_core import TwoLayerConfig
from autodiff_core.compare import custom_vs_builtin
from tests.conftest import open_tab


def panels(at, key):
    """The figures of a row of panels drawn under ``key_0``, ``key_1``, ..., in order."""
    charts = {c.proto.id.rsplit("-", 1)[-1]: c for c in at.get("plotly_chart") if f"{key}_" in c.proto.id}
    return [json.loads(charts[name].proto.spec) for name in sorted(charts)]


def open_xray(app, tab: str | None = None):
    """Lesson 4, on ``tab`` (the first, Graph, when None): only the open tab is drawn."""
    app.switch_page("pages/xray.py").run()
    if tab is not None:
        open_tab(app, tab)
    assert not app.exception, [e.value for e in app.exception]
    return app


PANEL_TABS = {"xr_jacobians": "Gradcheck lab", "xr_zero_grad": "zero_grad()", "xr_sgd": "Manual SGD",
              "xr_relu": "Custom vs built-in"}


def tab_panels(at, key):
    """``panels`` of ``key``, with its tab opened first."""
    return panels(open_tab(at, PANEL_TABS[key]), key)


def test_graph_shows_the_custom_node_and_leaf_gradients(app):
    at = open_xray(app)
    dot = at.get("graphviz_chart")[0].proto.spec
    assert "MyReLUBackward" in dot and "#ff9f40" in dot  # highlighted
    assert "|grad| =" in dot and "ctx.saved_tensors[0]: (64, 100)" in dot
    at.toggle(key="xr_backward").set_value(False).run()
    assert "|grad| =" not in at.get("graphviz_chart")[0].proto.spec
    at.radio(key="xr_net").set_value("Logistic regression").run()
    dot = at.get("graphviz_chart")[0].proto.spec
    assert "BinaryCrossEntropyBackward0" in dot and "MyReLUBackward" not in dot


def test_ctx_inspector_shows_both_forms_agree(app):
    at = open_xray(app, "ctx inspector")
    assert any("Both forms return the same grad_input" in s.value for s in at.success)
    codes = [c.proto.code_text for c in at.get("code")]
    assert any("def setup_context" in c for c in codes) and any("class MyReLU(Function)" in c for c in codes)


def test_gradcheck_lab_catches_a_broken_function_and_marks_mismatches(app):
    at = open_xray(app, "Gradcheck lab")
    assert any("gradcheck failed" in e.value and "The bug:" in e.value for e in at.error)
    analytical, numerical = panels(at, "xr_jacobians")
    assert analytical["data"][0]["type"] == numerical["data"][0]["type"] == "heatmap"
    assert any(t.get("name") == "mismatch" for t in analytical["data"])


def test_gradcheck_lab_kink_and_float32(app):
    at = open_xray(app, "Gradcheck lab")
    at.selectbox(key="xr_fn").select("ReLU").run()
    assert any("gradcheck passed" in s.value for s in at.success)
    at.text_input(key="xr_points").input("0, 1").run()
    assert any("kink" in e.value for e in at.error)
    at.text_input(key="xr_points").input("0.5, 1").run()
    at.selectbox(key="xr_fn").select("Tanh").run()
    at.toggle(key="xr_float64").set_value(False).run()
    assert any("float64" in e.value for e in at.error)


def test_comparisons_render_their_findings(app):
    at = open_xray(app, "zero_grad()")
    text = " ".join(m.value for m in at.markdown)
    assert "larger**" in text
    assert any("identical, bit for bit" in s.value for s in open_tab(at, "Manual SGD").success)
    open_tab(at, "Custom vs built-in")
    # the step is the engine's, computed here as the page computes it (float sums differ between CPUs' kernels)
    steps = custom_vs_builtin(TwoLayerConfig(steps=200))
    first_zero = next(s.step for s in steps if s.exact_zeros)
    assert any(f"exactly 0.0 at step {first_zero};" in i.value for i in at.info), [i.value for i in at.info]
    assert [len(tab_panels(at, key)) for key in ("xr_zero_grad", "xr_sgd", "xr_relu")] == [3, 2, 2]




def test_graph_caption_matches_the_picture(app):
    """Arrows follow the data (leaves at the top, loss at the bottom); the orange node is mentioned only
    when one is drawn; every node has an outline."""
    at = open_xray(app)
    for net, orange in (("Two-layer net", True), ("Logistic regression", False)):
        at.radio(key="xr_net").set_value(net).run()
        caption = at.tabs[0].caption[0].value
        dot = at.get("graphviz_chart")[0].proto.spec
        assert "Arrows follow the data" in caption and 'rankdir="TB"' in dot
        assert ("orange" in caption) == orange == ("#ff9f40" in dot)
        assert all("color=" in line for line in dot.splitlines() if "[label=" in line)


def test_ctx_inspector_follows_the_sidebar_dtype_and_prints_readable_numbers(app):
    for dtype in ("float32", "float64"):
        app.sidebar.radio(key="dtype").set_value(dtype).run()
        at = open_xray(app, "ctx inspector")
        tab = at.tabs[1]
        assert dtype in tab.caption[0].value
        tables = [d.value for d in tab.dataframe]
        assert len(tables) == 2
        for table in tables:
            cells = [str(v) for col in table.columns for v in table[col]]
            assert "0.1" in cells and not [c for c in cells if "0000000" in c], cells
            assert len(table.columns) <= 5  # the step, then one column per element: fits 1280 px


def test_gradcheck_lab_says_when_gradcheck_misses_a_bug(app):
    at = open_xray(app, "Gradcheck lab")
    at.selectbox(key="xr_fn").select("BROKEN ReLU: mask from grad_output").run()
    at.text_input(key="xr_points").input("0.5, 1, 2").run()
    assert any("this backward is wrong" in w.value and "one-hot" in w.value for w in at.warning)
    assert not any("gradcheck passed" in s.value for s in at.success)
    at.text_input(key="xr_points").input("-0.5, 1, 2").run()
    assert any("gradcheck failed" in e.value for e in at.error)


def test_comparison_charts_title_every_axis_and_name_the_buffers(app):
    """One chart per panel (columns stack on a phone), each with titled axes, the house font, and a height
    shared by its row so the plots line up."""
    at = open_xray(app)
    for key in ("xr_zero_grad", "xr_sgd", "xr_relu", "xr_jacobians"):
        row = tab_panels(at, key)
        assert len(row) >= 2 and len({p["layout"]["height"] for p in row}) == 1, key
        for p in row:
            layout = p["layout"]
            assert layout["xaxis"]["title"]["text"] and layout["title"]["text"], key
            assert layout["font"]["size"] == 16
    assert [p["layout"]["xaxis"]["title"]["text"] for p in tab_panels(at, "xr_zero_grad")[1:]] == ["iteration"] * 2
    assert [p["layout"]["xaxis"]["title"]["text"] for p in tab_panels(at, "xr_sgd")] == ["iteration"] * 2
    assert [p["layout"]["xaxis"]["title"]["text"] for p in tab_panels(at, "xr_relu")] == ["step"] * 2
    buffers = [t for t in tab_panels(at, "xr_sgd")[1]["data"] if (t.get("name") or "").endswith(" buffer")]
    assert len(buffers) == 3 and all(t.get("showlegend") is not False for t in buffers)


def test_forgetting_zero_grad_is_never_shown_as_an_improvement(app):
    """Overlapping clusters by default, where the harm shows; on the tutorial's far-apart clusters the
    sooner stop is explained as oversized steps, not praised."""
    from autodiff_core import LogisticConfig
    from autodiff_core.compare import zero_grad_comparison

    at = open_xray(app, "zero_grad()")
    right, forgot = zero_grad_comparison(LogisticConfig(mean=1.0, record_every=1))
    assert forgot[-1].loss > 10 * right[-1].loss  # the case shown first really is worse without zero_grad
    text = " ".join(m.value for m in at.markdown)
    assert "larger**" in text and f"**{forgot[-1].loss:.3f}** against {right[-1].loss:.3f}" in text
    assert "only *looks* better" not in text
    at.radio(key="xr_zg_data").set_value("The tutorial's clusters (mean 1.7)").run()
    text = " ".join(m.value for m in at.markdown)
    assert "only *looks* better" in text and "sum of every gradient so far" in text
    assert not at.exception


def test_graph_is_drawn_at_the_lessons_sizes_and_says_so(app):
    """The boxes' shapes are lesson 2's (the tutorial's sizes), and the caption names them: a teacher who
    compares them with lesson 2 finds the same numbers, not a silently shrunk net."""
    from autodiff_core import TwoLayerConfig

    c = TwoLayerConfig()
    at = open_xray(app)
    dot, caption = at.get("graphviz_chart")[0].proto.spec, at.tabs[0].caption[0].value.replace("\u00a0", " ")
    assert f"w1: ({c.D_in}, {c.H})" in dot and f"w2: ({c.H}, {c.D_out})" in dot
    assert f"saved self: ({c.N}, {c.D_in})" in dot
    assert "lesson 2" in caption and all(f"{k} = {v}" in caption
                                         for k, v in (("N", c.N), ("D_in", c.D_in), ("H", c.H), ("D_out", c.D_out)))
    at.radio(key="xr_net").set_value("Logistic regression").run()
    caption = at.tabs[0].caption[0].value
    assert "lesson 3" in caption and "200 points" in caption
