"""Lesson 6: write your own autograd Function; gradcheck judges it in a sandbox, and a passing one trains."""

import inspect
import re

import streamlit as st

from autodiff_core.figures.judged import curve_figure, jacobians_figure
from autodiff_core.grading.challenges import CHALLENGES, format_solved, parse_solved
from autodiff_core.grading.judge import check, run_checks
from autodiff_core.grading.sandbox import shared_sandbox
from autodiff_core.grading.validator import CTX_ATTRIBUTES, TENSOR_METHODS, TORCH_FUNCTIONS
from studio import code_editor, presenter
from studio.charts import plot_panels
from studio.lessons import widget
from studio.page import require_app
from studio.presets import bind_lesson
from studio.room import board, board_view
from studio.room.keep import save_code, saved_code
from studio.runner import current_session_id
from studio.session_functions import adopt

require_app()
st.title("6 · Write your own Function")
presenter.intro("Fill in `forward` and `backward`, then press **Apply** under the editor (**Check** with the "
                "plain text box). That runs `torch.autograd.gradcheck` on your Function in float64 and compares "
                "your forward with PyTorch's own op. Your code runs in a sandbox, with a limit on time and memory.")
bind_lesson("write_function")  # ?wf_challenge=tanh opens that challenge; a bad value warns and leaves the URL
ss = st.session_state
if "wf_sources" not in ss:  # in a class, the code kept for this browser comes back after a reload
    ss["wf_sources"] = saved_code()
code_editor.init("wf")  # the editor's keys: wf_sources, wf_versions, wf_verdicts, wf_plain
for name in ("wf_checked", "wf_offered"):  # per challenge
    if name not in ss:
        ss[name] = {}
if "wf_solved" not in ss:  # once per session: the link may say which challenges were solved
    ss.wf_solved, warning = parse_solved(st.query_params.get("solved"))
    ss.wf_url_warning = warning
shared_sandbox().start()  # warms up in the background while the student reads


def plain(text: str) -> str:
    """Student code, error texts and anything from outside, made inert for markdown."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$:=])", r"\\\1", text)


def challenge_ui():
    """The challenge picker; returns the challenge."""
    c = st.columns([3, 1], vertical_alignment="bottom")
    widget("wf_challenge", c[0], format_func=lambda k: CHALLENGES[k].title)
    code_editor.plain_toggle("wf", c[1])
    return CHALLENGES[ss.wf_challenge]


def show_verdict(ch, v) -> None:
    (st.success if v.passed else st.error)(v.headline)
    for reason in v.reasons:
        st.error(plain(reason))
    for note in v.notes:
        st.warning(plain(note))
    if v.analytical is not None:
        st.markdown("**Jacobians.** Row i, column j: how output i moves when input j moves. Your backward gives "
                    "the *analytical* one; finite differences of your forward give the *numerical* one (side by side "
                    "on a wide screen, one under the other on a phone). ✕ marks a mismatch.")
        plot_panels(jacobians_figure(v), key="wf_jacobians", height=300 + 12 * len(v.output_labels))
    if v.curve:
        plot_panels(curve_figure(v, ch.reference_name), key="wf_curve")
    if v.kinks:
        st.markdown("**The kinks, shown apart.** Here the function has no single slope, so gradcheck keeps its "
                    "points away. Any value between the two one-sided slopes is a valid choice.")
        st.dataframe({"x": [k.x for k in v.kinks], "slope from the left": [round(k.left, 4) for k in v.kinks],
                      "slope from the right": [round(k.right, 4) for k in v.kinks],
                      "your backward": [k.yours for k in v.kinks],
                      f"{ch.reference_name}'s backward": [k.torch_value for k in v.kinks]}, hide_index=True)


ch = challenge_ui()
if ss.wf_url_warning:
    st.warning(ss.wf_url_warning)
left, right = st.columns([3, 2])
with right:
    with presenter.lead("wf_task"):
        st.markdown(f"**{ch.title}**: {ch.task}")
        st.code(ch.formula, language=None)
    with st.expander("Hint"):
        st.markdown(ch.hint)
    with st.expander("Show a solution"):
        st.code(ch.solution, language="python", wrap_lines=True)
    said = {"needs_input_grad": " (whether autograd wants each input's gradient)"}  # a word not met before
    ctx_attributes = ", ".join(f"`ctx.{a}`{said.get(a, '')}" for a in sorted(CTX_ATTRIBUTES))
    st.caption("Allowed: arithmetic, comparisons, `if`, masked assignment (`t[input < 0] = 0`), "
               f"`ctx.save_for_backward`, {ctx_attributes}, "
               f"`torch.` {', '.join(sorted(TORCH_FUNCTIONS))}, and the tensor methods "
               f"{', '.join(sorted(TENSOR_METHODS))}. No imports, loops or names starting with _.")
    st.button("Start over", key="wf_reset", on_click=code_editor.replace, args=("wf", ch.key, ch.skeleton),
              help="Back to the skeleton.")
with left:
    source, wanted = code_editor.editor("wf", ch.key, ch.skeleton)
if wanted:
    ss.wf_url_warning = ""
    with st.spinner("Checking in the sandbox…"):
        ss.wf_verdicts[ch.key] = check(source, ch.key, owner=current_session_id())
    ss.wf_checked[ch.key] = source  # the code the verdict is about: the only code "Use" may adopt
    save_code(ss.wf_sources)  # in a class, kept for this browser: a reload brings it back
    if ss.wf_verdicts[ch.key].passed:
        ss.wf_solved = [k for k in CHALLENGES if k in {*ss.wf_solved, ch.key}]
        if ch.key in ss.wf_offered:  # already in use: lessons 2 and 5 get the new version, under its own name
            ss.wf_offered[ch.key] = adopt(ch, source, ss.wf_verdicts[ch.key].cost)
    code_editor.rerun_to_mark("wf", ch.key)
verdict = ss.wf_verdicts.get(ch.key)
if verdict is not None:
    show_verdict(ch, verdict)
    board.send_button(lambda: board.verdict_entry("write_function", ch.key, ss.wf_checked[ch.key], verdict),
                      key="wf_send")
board_view.lesson_panel("write_function")  # in the presenter view, who solved which challenge, and their mistakes

if verdict is not None and verdict.passed and ch.n_inputs == 1:
    st.subheader("Use it")
    if st.button("Use my Function in lessons 2 and 5", key="wf_use",
                 help="Adds the code that passed to the activation choices of lessons 2 and 5, for you only."):
        ss.wf_offered[ch.key] = adopt(ch, ss.wf_checked[ch.key], verdict.cost)
    if name := ss.wf_offered.get(ch.key):
        st.success(f"Added **{plain(name)}**: pick it as the activation in lesson 2 or 5 and train. Their "
                   "links then carry its code, so they open with it in any browser.")
        c = st.columns(2)
        c[0].page_link("pages/two_layer.py", label="Open 2 · Two-layer net")
        c[1].page_link("pages/playground.py", label="Open 5 · Classification playground")

solved = format_solved(ss.wf_solved)
if st.query_params.get("solved") != solved:
    if solved:
        st.query_params["solved"] = solved
    elif "solved" in st.query_params:
        del st.query_params["solved"]
done = ", ".join(f"✓ {CHALLENGES[k].title}" for k in ss.wf_solved) or "none yet"
st.caption(f"Solved {len(ss.wf_solved)} of {len(CHALLENGES)}: {done}. The address bar keeps them, so a link "
           "shares them.")
with st.expander("Show the code that checks yours", expanded=False):
    st.code(inspect.getsource(run_checks), language="python", wrap_lines=True)
