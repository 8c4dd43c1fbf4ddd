"""Lesson 8: the rest of the autograd.Function API, one small Function per part: run it, break it, edit it."""

import streamlit as st

from autodiff_core.grading.sandbox import shared_sandbox
from studio import presenter
from studio.api_exercise import exercise
from studio.api_parts import PARTS, VIEWS
from studio.inputs import parse_vector
from studio.lessons import widget
from studio.page import require_app
from studio.presets import bind_lesson, settings_box

require_app()
st.title("8 · The whole autograd.\u200bFunction API")  # a phone breaks the line after the dot
presenter.intro(
    "Lesson 1's `MyReLU` uses three things of `ctx`: `save_for_backward`, `saved_tensors` and `needs_input_grad`. "
    "A Function can do more: be differentiated twice, run in forward mode, change its input in place, return "
    "outputs with no gradient, skip work nobody needs, and work under `torch.func`. Each part is one small "
    "Function, run here beside PyTorch's own op in float64 on the CPU; below it, edit the Function (or break it) "
    "and check it in the sandbox.")
bind_lesson("function_api")
LIMIT = 10.0  # |x| and |v|: sinh grows as e^|x|


def function_api_ui() -> tuple[str, list[float] | None, list[float] | None, str]:
    """Read the widgets; returns (part, x, v, error message). x and v are drawn where the part uses them (the
    session keeps them meanwhile, and the link too)."""
    part = widget("fa_part", horizontal=True, format_func=PARTS.get)
    if part == "needs_input_grad":
        return part, [], [], ""
    c1, c2 = st.columns(2)
    x, err = parse_vector(widget("fa_x", c1), name="x", max_values=12)
    if part not in ("double_backward", "forward_mode"):
        return part, x, [], err if err else _too_big(x)
    v, err_v = parse_vector(widget("fa_v", c2), name="v", max_values=12)
    if err or err_v:
        return part, None, None, err or err_v
    if len(v) != len(x):
        return part, None, None, f"v needs one number per element of x: {len(x)}, not {len(v)}."
    return part, x, v, _too_big(x + v)


def _too_big(values: list[float]) -> str:
    return f"Keep every number between -{LIMIT:g} and {LIMIT:g}." if max(map(abs, values)) > LIMIT else ""


shared_sandbox().start()  # warms up in the background while the student reads
with settings_box("function_api"):
    part, x, v, error = function_api_ui()
st.header(PARTS[part])
if error:
    st.error(error)
else:
    VIEWS[part](x, v)
exercise(part)
