"""Lesson 1: how MyReLU's forward and backward work, one element at a time."""

import inspect

import numpy as np
import streamlit as st
import torch

from autodiff_core import FUNCTIONS, gradcheck_report, resolve_dtype
from autodiff_core.figures.function import function_panels
from autodiff_core.inspector import compare_to_reference, readable, rounded, trace_function
from studio import presenter
from studio.charts import plot
from studio.inputs import parse_vector
from studio.lessons import widget
from studio.page import require_app
from studio.presets import bind_lesson, settings_box
from studio.sidebar import current_settings
from studio.verdicts import show_gradcheck
from studio.words import NEEDS_INPUT_GRAD

require_app()
st.title("1 · A custom autograd Function")
presenter.intro(
    "A `torch.autograd.Function` pairs a **forward** (compute the output, save what backward needs in `ctx`) "
    "with a **backward** (receive `grad_output` = ∂loss/∂output, return `grad_input` = ∂loss/∂input). "
    "For ReLU, backward passes the gradient through where the input was positive and zeroes it where it "
    "was negative."
)

bind_lesson("custom_function")


def custom_function_ui() -> tuple[str, list[float] | None, list[float] | None, str]:
    """Read the widgets; returns (Function name, input, grad_output, error message)."""
    c1, c2, c3 = st.columns([4, 3, 3])  # the Function's name in full: "BROKEN Tanh: derivative of the input"
    name = widget("cf_function", c1)
    x, err = parse_vector(widget("cf_input", c2), name="the input")
    g, err_g = parse_vector(widget("cf_grad_output", c3), name="grad_output")
    if x is not None and g is not None and len(g) != len(x):
        return name, x, None, (f"grad_output needs one number per input element: {len(x)}, "
                               f"not {len(g)}.")
    return name, x, g, err or err_g


def verdict(spec, cls: str, agree, trace) -> str:
    """Forward and backward against the built-in, each said separately; a broken backward is never praised.
    Every number it quotes is one of the table's (``trace``)."""
    ref = spec.reference_name
    tol = (f"`torch.allclose` in {agree.dtype} (rtol={agree.rtol:g}, atol={agree.atol:g}); "
           f"largest difference {agree.forward_diff:.2g} forward, {agree.backward_diff:.2g} backward")
    against = f"row 2 against `{ref}(x)`, the curve of the forward chart"  # the table has no row of it
    forward = (f"**Forward agrees** with `{ref}` ({against})" if agree.forward_ok
               else f"**Forward differs** from `{ref}` ({against})")
    if not agree.backward_ok and agree.at_kinks_only and spec.correct:
        yours, theirs = trace.grad_input, trace.reference_grad_input
        i = max(range(len(yours)), key=lambda j: abs(yours[j] - theirs[j]))  # the kink's column
        at = f"at x = {trace.input[i]:g}, `{cls}` gives {yours[i]:g} and `{ref}` {theirs[i]:g}"
        return (f"{forward}. Backward differs only at a kink (rows 5 and 6: {at}), and both are right there: at a "
                f"kink any slope between those on either side is a valid subgradient, so `{cls}`'s choice is as valid "
                f"as `{ref}`'s. Lesson 4 shows where this makes two trainings differ. Compared with {tol}.")
    if not agree.backward_ok:
        return f"{forward}. **Backward differs**: rows 5 and 6 disagree. Compared with {tol}."
    if not spec.correct:
        return (f"{forward}. At these inputs and this grad_output, `{cls}.backward` happens to give the "
                f"numbers `{ref}` gives (rows 5 and 6), **but the backward is wrong**: {spec.summary} "
                f"Change the inputs or grad_output to expose it. Compared with {tol}.")
    return f"{forward}, and **so does backward** (rows 5 and 6). Compared with {tol}."


with settings_box("custom_function"):
    name, x, g, error = custom_function_ui()
spec = FUNCTIONS[name]
if error:
    st.error(error)
    st.stop()

dtype = resolve_dtype(current_settings().dtype)
trace = trace_function(name, torch.tensor(x, dtype=dtype), torch.tensor(g, dtype=dtype))
reference = spec.reference_name
cls = spec.fn.__name__  # "MyReLU", "ReLUNoChainRule": the class whose backward ran

st.subheader("Step by step")
steps = {
    "1 · input x": trace.input,
    "2 · forward returns": trace.output,
    **{f"3 · ctx.saved_tensors[{i}]": s.values for i, s in enumerate(trace.saved)},
    "4 · grad_output (fed in)": trace.grad_output,
    f"5 · {cls}.backward returns": trace.grad_input,
    f"6 · {reference} backward": trace.reference_grad_input,
}
if presenter.presenting():  # text the presenter CSS can enlarge (the interactive grid draws on a canvas at 14 px)
    st.table({"step": list(steps), **{f"x[{i}]": [readable(v[i], trace.dtype) for v in steps.values()]
                                      for i in range(len(x))}}, hide_index=True)
else:
    st.dataframe({"step": list(steps), **{f"x[{i}]": [rounded(v[i], trace.dtype) for v in steps.values()]
                                           for i in range(len(x))}}, hide_index=True, width="stretch",
                 column_config={"step": st.column_config.TextColumn(pinned=True)})  # a phone scrolls the numbers
shapes = ", ".join(f"shape {s.shape}, {s.dtype}, on {s.device}" for s in trace.saved)
st.caption(f"ctx.saved_tensors holds {len(trace.saved)} tensor(s): {shapes}. "
           f"ctx.needs_input_grad = {trace.needs_input_grad}, {NEEDS_INPUT_GRAD}.")

lo, hi = min(min(x), -3.0), max(max(x), 3.0)
curve_x = np.linspace(lo, hi, 301)
curve_y = spec.reference(torch.tensor(curve_x)).tolist()
for i, (column, panel) in enumerate(zip(st.columns(2), function_panels(
        cls, curve_x, curve_y, trace.input, trace.output, trace.grad_input, trace.reference_grad_input, reference),
        strict=True)):
    with column:  # side by side on a laptop, one under the other on a phone
        plot(panel, key=f"cf_figure_{i}")

show_gradcheck(gradcheck_report(name, torch.tensor(x, dtype=torch.float64)))
st.markdown(verdict(spec, cls, compare_to_reference(trace, spec.kinks), trace))

with st.expander("Show the code that ran", expanded=False):
    st.code(inspect.getsource(spec.fn), language="python", wrap_lines=True)
