"""Lesson 4: Autograd X-ray: the graph, ctx, gradcheck, and the classic mistakes, from code that runs."""

import inspect

import streamlit as st

from autodiff_core import LogisticConfig, TwoLayerConfig
from autodiff_core.compare import manual_vs_optim_sgd
from autodiff_core.functions import MyReLU, MyReLUModern
from autodiff_core.graph import FONTSIZE, logistic_graph, tensor_kinds, to_dot, two_layer_graph
from autodiff_core.inspector import inspector_table
from studio import presenter, xray_runs
from studio.charts import plot_panels
from studio.inputs import parse_vector
from studio.lessons import ZG_DATA, widget
from studio.page import require_app
from studio.presets import bind_lesson, settings_box
from studio.sidebar import current_settings
from studio.verdicts import show_gradcheck
from studio.words import NEEDS_INPUT_GRAD, graph_words

require_app()
st.title("4 · Autograd X\u2011ray")  # a hyphen no line breaks at: a phone broke the title as "X-" / "ray"
presenter.intro("What PyTorch does between `loss.backward()` and the updated weights, shown on the lessons' own runs.")
ZG_MEANS = dict(zip(ZG_DATA, xray_runs.ZG_MEANS, strict=True))
settings = current_settings()
bind_lesson("xray")
with settings_box("xray"):
    pass  # the preset picker; each tab keeps its own settings


def zero_grad_verdict(right, forgot) -> str:
    """What forgetting zero_grad() did, in one or two sentences, never as if it helped."""
    ratio = (abs(forgot.w0) + abs(forgot.w1)) / (abs(right.w0) + abs(right.w1))
    when = ("" if forgot.iteration == right.iteration
            else f" (it stopped at iteration {forgot.iteration}, against {right.iteration})")
    text = (f"Without `zero_grad()` the weights end **{ratio:.1f}× larger**, and the final loss is "
            f"**{forgot.loss:.3f}** against {right.loss:.3f}{when}.")
    if forgot.iteration < right.iteration and forgot.loss <= right.loss:
        text += (" It only *looks* better: each step used the sum of every gradient so far, a far bigger step "
                 "than the learning rate says, which happens to cross the wide gap between these clusters "
                 "sooner. Switch to overlapping clusters to see the same bug never settle.")
    return text


def kept(compute, config, what: str):
    """``compute(config)`` from ``studio.xray_runs``: kept per config, and at the defaults computed before the
    first visit; a spinner while it trains."""
    with st.spinner(f"Training both {what}…"):
        return compute(config)


EQ = "\u00a0=\u00a0"  # "H = 100" never broken across two lines


def net_graph(net: str, backward: bool):
    """The graph of the first step of lesson 2's or lesson 3's run at the tutorial's sizes (the shapes in the
    boxes are the lesson's, never a made-up small net), and which run that is, in words."""
    if net == "Two-layer net":
        c = TwoLayerConfig(device=settings.device, dtype=settings.dtype,
                           seed=TwoLayerConfig.seed if settings.seed is None else settings.seed)
        return two_layer_graph(c, backward=backward), (
            f"lesson 2's net at the tutorial's sizes: a batch of N{EQ}{c.N} rows, D_in{EQ}{c.D_in} inputs, "
            f"H{EQ}{c.H} hidden units, D_out{EQ}{c.D_out} outputs")
    c = LogisticConfig(device=settings.device, dtype=settings.dtype,
                       seed=LogisticConfig.seed if settings.seed is None else settings.seed)
    return logistic_graph(c, backward=backward), (
        f"lesson 3's logistic regression on the tutorial's {2 * c.n_per_class} points (2 features, 1 output)")


def graph_tab() -> None:
    c1, c2 = st.columns([2, 1])
    net = widget("xr_net", c1, horizontal=True)
    backward = widget("xr_backward", c2)
    graph, which = net_graph(net, backward)
    custom = [n.label for n in graph.nodes if n.kind == "custom"]
    st.caption(
        f"The graph autograd recorded during the first forward pass of {which}. Arrows follow the data, "
        "from the leaves at the top to the loss at the bottom; `loss.backward()` walks them the other way, "
        "starting at `loss.grad_fn`. Blue boxes are the leaves (the weights" + (", with their gradient norm "
        "after backward" if backward else "") + "), grey rounded boxes are built-in ops with the tensors they "
        f"saved for backward ({tensor_kinds(graph)}). " + (f"The orange one is our Function's node, {custom[0]}: "
                                                   "it *is* the `ctx` that forward filled." if custom else
                                                   "This network uses only built-in ops, so no node is ours."))
    # Streamlit's stylesheet sets all Graphviz text to 0.6rem whatever the DOT says (5-6 px once the graph is
    # scaled to fit): give it back the size Graphviz laid the boxes out for (the presenter view sets its own).
    st.html(f'<style>[data-testid="stGraphVizChart"] svg text {{ font-size: {FONTSIZE}px; }}</style>')
    st.graphviz_chart(to_dot(graph, key="tl" if net == "Two-layer net" else "lr", **presenter.dot_options()))
    graph_words(graph)


def ctx_tab() -> None:
    st.caption(f"One forward and backward of MyReLU in {settings.dtype} (the sidebar's dtype), step by step; "
               "the classic form and the modern form agree.")
    traces = xray_runs.ctx_traces(settings.dtype)
    for label, t in traces.items():
        st.markdown(f"**{label}**")
        presenter.table(inspector_table(t))
        st.caption(f"ctx.needs_input_grad = {t.needs_input_grad}, {NEEDS_INPUT_GRAD}; saved tensors: "
                   + ", ".join(f"shape {s.shape}, {s.dtype}, on {s.device}" for s in t.saved) + ".")
    a, b = (t.grad_input for t in traces.values())
    if a == b:
        st.success("Both forms return the same grad_input.")
    else:
        st.error("The two forms disagree.")
    st.markdown("`@once_differentiable` marks a backward that is not itself differentiable (no double backward); "
                "`ctx.mark_non_differentiable(out)` says an output, such as an index or a mask, gets no gradient.")
    c1, c2 = st.columns(2)
    c1.code(inspect.getsource(MyReLU), language="python", wrap_lines=True)
    c2.code(inspect.getsource(MyReLUModern), language="python", wrap_lines=True)


def gradcheck_tab() -> None:
    st.caption("gradcheck compares your backward (analytical Jacobian) with finite differences of forward "
               "(numerical Jacobian). Put a point at 0 to see why the kink misleads it, or switch to float32.")
    c1, c2, c3 = st.columns([3, 3, 1])
    name = widget("xr_fn", c1)
    points, problem = parse_vector(widget("xr_points", c2), name="the points", max_values=16)
    use64 = widget("xr_float64", c3)
    if problem:
        st.error(problem)
    else:
        report, panels = xray_runs.gradcheck_lab(name, tuple(points), bool(use64))
        show_gradcheck(report)
        st.caption(f"gradgradcheck (double backward): {'passed' if report.gradgrad_passed else 'failed'}.")
        plot_panels(panels, key="xr_jacobians")


def zero_grad_tab() -> None:
    st.caption("The tutorial's logistic regression with and without `optimizer.zero_grad()`, same data, same start. "
               "`backward()` *adds* into `.grad`, so without zeroing, every step's gradient piles onto all the "
               "earlier ones and the weights grow many times larger.")
    data = widget("xr_zg_data", horizontal=True)
    config = xray_runs.zero_grad_config(ZG_MEANS[data], settings.device, settings.dtype)
    right, forgot = kept(xray_runs.zero_grad_runs, config, "runs")
    plot_panels(kept(xray_runs.zero_grad_panels, config, "runs"), key="xr_zero_grad")
    st.markdown(zero_grad_verdict(right[-1], forgot[-1]))


def sgd_tab() -> None:
    st.caption("The same logistic run updated by hand (a momentum buffer we keep ourselves) and by "
               "`torch.optim.SGD`: the steps are identical.")
    config = xray_runs.sgd_config(settings.device, settings.dtype)
    steps = kept(xray_runs.sgd_steps, config, "runs")
    same = all(s.manual == s.optim and s.manual_buffer == s.optim_buffer for s in steps)
    if same:
        st.success(f"{len(steps)} steps: weights and momentum buffers identical, bit for bit.")
    else:
        st.warning(f"{len(steps)} steps: the weights or momentum buffers differ.")
    plot_panels(kept(xray_runs.sgd_panels, config, "runs"), key="xr_sgd")
    st.code(inspect.getsource(manual_vs_optim_sgd), language="python", wrap_lines=True)


def relu_tab() -> None:
    st.caption("The two-layer net trained with MyReLU and with torch.relu from the same start. Their backwards "
               "differ only where a pre-activation is exactly 0: MyReLU zeroes where input < 0, so it lets the "
               "gradient through at 0, while torch.relu's slope at 0 is 0.")
    config = xray_runs.relu_config(settings.device, settings.dtype)
    steps = kept(xray_runs.relu_steps, config, "nets")
    hits = [s.step for s in steps if s.exact_zeros]
    first_diff = next((s.step for s in steps if s.max_grad_diff > 0), None)
    if first_diff is None:
        st.success(f"In {settings.dtype}, no pre-activation was exactly 0: the gradients are identical at every step.")
    else:
        st.info(f"In {settings.dtype}, a pre-activation was exactly 0.0 at step {hits[0] if hits else '?'}; the "
                f"gradients first differ at step {first_diff}, and the runs part from there. Try float64.")
    plot_panels(kept(xray_runs.relu_panels, config, "nets"), key="xr_relu")


TABS = ("Graph", "ctx inspector", "Gradcheck lab", "zero_grad()", "Manual SGD", "Custom vs built-in")
tabs = st.tabs(TABS, key="xr_tab", on_change="rerun")
# Only the open tab is drawn (``on_change="rerun"``: a switch reruns the page): a first visit draws the graph alone, and
# a browser renders one tab's charts, tables and code, not six tabs' (lesson 4's first visit, bench/startup.py).
for tab, draw in zip(tabs, (graph_tab, ctx_tab, gradcheck_tab, zero_grad_tab, sgd_tab, relu_tab), strict=True):
    if tab.open is not False:
        with tab:
            draw()
