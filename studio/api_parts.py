"""Lesson 8's parts on screen, one function each: the part's Function run on the student's x beside PyTorch's
own op (``autodiff_core.api_demos``), the errors autograd raises shown as plain text, and the code that ran
(``inspect.getsource``). The page (``pages/function_api.py``) picks the part; ``api_exercise.py`` draws the editor.
"""

from __future__ import annotations

import inspect

import streamlit as st
import torch

from autodiff_core import api_demos, function_api
from autodiff_core.api_demos import PARTS
from autodiff_core.figures.function_api import bars_figure, derivatives_figure, timing_figure
from autodiff_core.functions import MySigmoid, MyTanh

from . import presenter
from .charts import plot


def autograd_says(text: str, who: str) -> None:
    """An error autograd raised, as plain text in a box of its own (never a traceback, never markdown)."""
    st.markdown(f"**{who}**, autograd raises:")
    st.code(text, language="text", wrap_lines=True)


def verdict(ok: bool, yes: str, no: str) -> None:
    (st.success if ok else st.error)(yes if ok else no)


def numbers(values) -> str:
    return ", ".join(f"{v:.4g}" for v in values)


def same(a, b) -> bool:
    return torch.allclose(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64),
                          rtol=1e-6, atol=1e-9)


def gap(a, b) -> str:
    """The largest difference between two runs' numbers, in words."""
    diff = (torch.tensor(a, dtype=torch.float64) - torch.tensor(b, dtype=torch.float64)).abs().max().item()
    return f"largest difference {diff:.1e}"


def table(columns: dict[str, list], x: list[float]) -> None:
    """Numbers side by side, one row per input element, one column per series: narrow enough for a phone (an
    HTML table: the presenter view enlarges it)."""
    st.table({"element": [f"x[{i}] = {v:.3g}" for i, v in enumerate(x)],
              **{name: [f"{value:.4g}" for value in values] for name, values in columns.items()}}, hide_index=True)


def code(*objects) -> None:
    with st.expander("Show the code that ran", expanded=False):
        for obj in objects:
            st.code(inspect.getsource(obj), language="python")


@st.cache_data(max_entries=32, show_spinner=False)
def _run(part: str, x: tuple[float, ...], v: tuple[float, ...]):
    x_, v_ = torch.tensor(x, dtype=torch.float64), torch.tensor(v, dtype=torch.float64)
    if part == "double_backward":
        return api_demos.double_backward(x_, v_)
    if part == "forward_mode":
        return api_demos.forward_mode(x_, v_)
    return getattr(api_demos, part)(x_)


def double_backward(x: list[float], v: list[float]) -> None:
    presenter.intro("A backward made of torch ops can itself be differentiated: ask `torch.autograd.grad` for "
                    "`create_graph=True` and autograd records backward's ops too. `gradgradcheck` checks the "
                    "second derivative as `gradcheck` checks the first, and a Hessian-vector product H·v (here of "
                    "the loss ½·Σ sinh(x)², along your v) runs backward twice.")
    r = _run("double_backward", tuple(x), tuple(v))
    verdict(r.gradcheck and r.gradgradcheck, "MySinh: gradcheck and gradgradcheck pass (float64).",
            f"MySinh: gradcheck {'passed' if r.gradcheck else 'failed'}, gradgradcheck "
            f"{'passed' if r.gradgradcheck else 'failed'} (float64).")
    left, right = st.columns(2)
    with left:
        plot(derivatives_figure(r.grid, r.curves, x, "sinh, its backward, and a backward of that"), key="fa_curves")
        st.caption("sinh'' = sinh: the double backward lies on the function itself, and cosh, the backward, "
                   "above it.")
    with right:
        plot(bars_figure(x, {"MySinh": r.hvp, "MySinhSavedExp": r.saved_exp_hvp, "torch.sinh": r.torch_hvp},
                         "H·v of ½·Σ sinh(x)²", "H·v"), key="fa_hvp")
    st.markdown(f"MySinh's H·v {'equals' if same(r.hvp, r.torch_hvp) else 'differs from'} torch.sinh's. "
                f"**MySinhSavedExp** saves e^x and e^-x from forward: gradcheck "
                f"{'passes' if r.saved_exp_gradcheck else 'fails'}, but gradgradcheck "
                f"{'passes' if r.saved_exp_gradgradcheck else 'fails'}, and its H·v "
                f"{'equals' if same(r.saved_exp_hvp, r.torch_hvp) else 'is wrong'}: tensors made in forward are "
                "constants to autograd, so the part of the second derivative that flows through them is lost.")
    st.markdown("**MySinhOnce** marks its backward `@once_differentiable`: it may compute with anything (NumPy, a C "
                "library), and autograd refuses to go through it twice rather than give a wrong answer.")
    autograd_says(r.once_error or "(nothing)", "Asked for the same H·v through MySinhOnce")
    code(function_api.MySinh, function_api.MySinhSavedExp, function_api.MySinhOnce, api_demos.hvp)


def forward_mode(x: list[float], v: list[float]) -> None:
    presenter.intro("Reverse mode (`backward`) answers: how does the loss change with every input? Forward mode "
                    "(`jvp`) answers: if the input moves along a tangent t, how does the output move? It is one "
                    "pass, computed alongside forward, and needs its own rule: `jvp`, reading what `setup_context` "
                    "kept with `ctx.save_for_forward`.")
    r = _run("forward_mode", tuple(x), tuple(v))
    verdict(r.gradcheck_forward, "gradcheck(..., check_forward_ad=True) passes: jvp matches the slope of forward.",
            "gradcheck(..., check_forward_ad=True) fails.")
    plot(bars_figure(x, {"torch.autograd.forward_ad": r.dual, "torch.func.jvp": r.func_jvp,
                         "torch.sigmoid (func.jvp)": r.torch_jvp}, "The output's tangent, with your v as t",
                     "tangent"), key="fa_jvp")
    st.markdown(f"Both ways through `MySigmoidJvp.jvp` {'equal' if same(r.dual, r.torch_jvp) else 'differ from'} "
                "torch.sigmoid's tangent. **Why the modern form:** `torch.func.jvp` calls `forward` as plain maths "
                "and `setup_context` apart, so it refuses a Function written in the classic `forward(ctx, ...)`. "
                "Lesson 1's `MySigmoid` is classic and has no jvp:")
    autograd_says(r.classic_dual_error, "MySigmoid under torch.autograd.forward_ad")
    autograd_says(r.classic_func_error, "MySigmoid under torch.func.jvp")
    code(function_api.MySigmoidJvp, api_demos.dual_tangent, MySigmoid)


def in_place(x: list[float], v: list[float]) -> None:
    presenter.intro("A Function may change its input in place, to save memory, as `torch.relu_` does. "
                    "`ctx.mark_dirty(input)` tells autograd: the tensor now has this Function's history, and its "
                    "version counter protects the values backward needs.")
    r = _run("in_place", tuple(x), tuple(v))
    st.markdown(f"`MyReLUInPlace` returned {'its input itself' if r.same_tensor else 'another tensor'}: "
                f"{numbers(r.output)}. gradcheck (on a copy of x) {'passes' if r.gradcheck else 'fails'}.")
    if 0.0 in x:
        st.info("x holds a 0, ReLU's kink: there the slope is not one number, and gradcheck can fail.")
    st.markdown("**Another in-place op after it**, `y = relu_(h); y.mul_(2)`: the gradient")
    table({"with mark_dirty": r.chain, "2 * torch.relu (out of place)": r.torch_chain}, x)
    autograd_says(r.unmarked_chain_error, "Without mark_dirty (MyReLUInPlaceUnmarked)")
    st.markdown("**The input, used after the call**, `relu_(h); loss = Σ 3·h`: the gradient")
    table({"with mark_dirty": r.later, "torch.relu_": r.torch_later, "without mark_dirty": r.unmarked_later}, x)
    st.markdown("Without `mark_dirty` no error comes here: autograd still takes h for the tensor before the ReLU, "
                f"and the gradient is {'right' if same(r.unmarked_later, r.torch_later) else '**silently wrong**'}.")
    code(function_api.MyReLUInPlace, function_api.MyReLUInPlaceUnmarked, api_demos.chain_grad, api_demos.later_grad)


def non_differentiable(x: list[float], v: list[float]) -> None:
    presenter.intro("Some outputs carry no gradient: the indices a sort or an argmax returns. "
                    "`ctx.mark_non_differentiable(indices)` says so, and `ctx.set_materialize_grads(False)` lets "
                    "backward receive None, instead of a tensor of zeros, for an output nobody used.")
    r = _run("non_differentiable", tuple(x), tuple(v))
    ok = r.values == r.torch_values and r.indices == r.torch_indices
    verdict(ok, "MySort's values and indices equal torch.sort's.", "MySort differs from torch.sort.")
    st.table({"": ["values", "indices", "needs a gradient"],
              "MySort": [numbers(r.values), str(r.indices), f"values {r.values_need_grad}, indices "
                                                             f"{r.indices_need_grad}"],
              "torch.sort": [numbers(r.torch_values), str(r.torch_indices), ""]}, hide_index=True)
    st.markdown("**What backward receives** when only the values are used:")
    st.table({"": ["set_materialize_grads(True), the default", "set_materialize_grads(False)"],
              "grad_values": [r.materialized[0], r.not_materialized[0]],
              "grad_indices": [r.materialized[1], r.not_materialized[1]]}, hide_index=True)
    st.markdown("**The gradient of Σ (k+1)·values[k]**: each value's weight goes back to where it came from.")
    table({"MySort": r.grad, "torch.sort": r.torch_grad}, x)
    verdict(r.gradcheck, "gradcheck on the values passes.", "gradcheck on the values fails.")
    if len(set(x)) < len(x):
        st.info("x holds equal values: there the order can flip at any nudge, a kink like ReLU's at 0.")
    st.caption("Integer outputs such as these indices never need a gradient anyway; mark_non_differentiable is what "
               "a floating-point output with no gradient (a mask of 0s and 1s) needs.")
    code(function_api.MySort, api_demos.ranked_grad)


def needs_input_grad(x: list[float], v: list[float]) -> None:
    presenter.intro("`ctx.needs_input_grad[i]` is False when input i needs no gradient: the data a layer reads, a "
                    "frozen weight. Backward can skip that input's gradient. In y = x @ W with data x, the gradient "
                    "of x is a whole matrix product that nobody would use.")
    if st.button("Time both backwards", key="fa_time", type="primary",
                 help="Times the backward of each Function on the same tensors, alternating."):
        st.session_state["fa_timing"] = api_demos.time_needs_input_grad()
    timing = st.session_state.get("fa_timing")
    if timing is not None:
        c = timing.config
        st.success(f"MyMatMul's backward took **{timing.ratio:.2f}×** the time of MyMatMulEveryGrad's: "
                   f"{timing.products[0]} matrix product instead of {timing.products[1]}.")
        st.caption(f"Measured here: y = x @ W with x ({c.n}, {c.k}) data, W ({c.k}, {c.m}) needing a gradient, "
                   f"float32 on the CPU with {timing.threads} thread(s); {c.repeats} backwards of each, alternating, "
                   "after one warm-up each; the ratio of the medians. Matrix products counted as backward ran.")
        plot(timing_figure({"MyMatMul (skips grad_x)": timing.skipping, "MyMatMulEveryGrad": timing.every},
                           "Backward, only W needing a gradient"), key="fa_timing_chart")
    left, right = st.columns(2)
    left.code(inspect.getsource(function_api.MyMatMul), language="python")
    right.code(inspect.getsource(function_api.MyMatMulEveryGrad), language="python")
    st.markdown("Write one yourself: lesson 6's two-input challenge, **a · b**, asks for exactly this check.")
    st.page_link("pages/write_function.py", label="Open 6 · Write your own Function: a · b",
                 query_params={"wf_challenge": "multiply"})
    code(api_demos.time_needs_input_grad, api_demos.backward_seconds)


def torch_func(x: list[float], v: list[float]) -> None:
    presenter.intro("`torch.func` transforms functions: `vmap` runs one on a whole batch as if on each sample, "
                    "`grad` returns its gradient as a function. They call `forward` as plain maths, so a Function "
                    "needs the modern form (`forward` without ctx, then `setup_context`); `generate_vmap_rule = "
                    "True` lets vmap batch it by running that forward on the batch.")
    r = _run("torch_func", tuple(x), tuple(v))
    verdict(same(r.vmapped, r.looped) and same(r.vmapped, r.torch_out),
            f"vmap over the batch equals the plain loop, row by row ({gap(r.vmapped, r.looped)}), and torch.tanh "
            f"({gap(r.vmapped, r.torch_out)}).", f"vmap differs from the loop ({gap(r.vmapped, r.looped)}).")
    verdict(same(r.grads, r.looped_grads) and same(r.grads, r.torch_grads),
            "vmap(grad(Σ MyTanhModern)): one gradient per sample, equal to torch.autograd.grad in a plain loop "
            f"({gap(r.grads, r.looped_grads)}) and to torch.tanh's ({gap(r.grads, r.torch_grads)}).",
            f"vmap(grad) differs from the loop ({gap(r.grads, r.looped_grads)}).")
    for rows, what in ((r.batch, "The batch: three samples (x, x/2, -x)"),
                       (r.vmapped, "vmap(MyTanhModern.apply)(batch)"),
                       (r.grads, "vmap(grad(Σ MyTanhModern))(batch): each sample's gradient")):
        st.markdown(f"**{what}**")
        table({f"sample {i}": row for i, row in enumerate(rows)}, x)
    autograd_says(r.classic_error, "Lesson 1's MyTanh (classic form) under vmap")
    autograd_says(r.no_rule_error, "MyTanhModern without generate_vmap_rule")
    code(function_api.MyTanhModern, MyTanh, api_demos.torch_func, api_demos.looped_grads)


assert list(PARTS) == ["double_backward", "forward_mode", "in_place", "non_differentiable", "needs_input_grad",
                       "torch_func"]
VIEWS = {"double_backward": double_backward, "forward_mode": forward_mode, "in_place": in_place,
         "non_differentiable": non_differentiable, "needs_input_grad": needs_input_grad, "torch_func": torch_func}
