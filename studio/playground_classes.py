"""Lesson 5 with 3 to 6 classes: inside MySoftmax, on the page. At the training point the network is least sure
of, the output layer's logits and MySoftmax's probabilities, and the softmax's Jacobian twice, built from
MySoftmax's backward and from ``torch.softmax``'s (``autodiff_core.classes.jacobians``), beside the formula
diag(y) - y yᵀ; then the Function's own source."""

from __future__ import annotations

import inspect

import streamlit as st
import torch

from autodiff_core.classes import jacobian_formula, jacobians
from autodiff_core.functions import MySoftmax
from autodiff_core.playground import Playground
from autodiff_core.slow_step import number

NOTE = ("The last layer gives each class a number, its logit z; MySoftmax turns them into probabilities y, "
        "y_i = exp(z_i) / Σ_j exp(z_j). Each y depends on every z, so its backward is not a slope but a product "
        "with the Jacobian dy/dz: y_i (1 − y_i) on the diagonal and −y_i y_j off it, diag(y) − y yᵀ. The backward "
        "never builds that matrix: for the gradient g = dLoss/dy it returns `y * (g - (g * y).sum(-1, "
        "keepdim=True))`, which is g times it.")


def _matrix(j: torch.Tensor) -> dict[str, list[str]]:
    """A Jacobian as a table: row i is dy_i, column j is d/dz_j, each entry in a few characters."""
    return {"": [f"dy{i}" for i in range(len(j))],
            **{f"/dz{k}": [number(v) for v in j[:, k].tolist()] for k in range(j.shape[1])}}


def _least_sure(pg: Playground) -> tuple[int, torch.Tensor]:
    """The training point whose most likely class has the smallest probability, and its logits (classes,):
    there the Jacobian's entries are far from 0."""
    with torch.no_grad():
        x = pg.x_train
        for weight, bias in pg.model.pairs[:-1]:
            x = pg.model.act(torch.nn.functional.linear(x, weight, bias))
        z = torch.nn.functional.linear(x, *pg.model.pairs[-1])  # (n, classes)
        i = int(pg.model.head(z).amax(1).nan_to_num(2.0).argmin())
    return i, z[i].double().cpu()


def softmax_panel(pg: Playground) -> None:
    """Nothing for one output (a sigmoid, or a regression)."""
    if pg.config.outputs == 1 or not len(pg.y_train):
        return
    i, z = _least_sure(pg)
    ours, theirs = jacobians(z)
    y = torch.softmax(z, -1)
    (x1, x2), label = pg.points_train[i].tolist(), int(pg.y_train[i].item())
    st.subheader("Inside MySoftmax")
    st.caption(NOTE)
    st.markdown(f"At the training point the network is least sure of, ({x1:.2f}, {x2:.2f}) of class {label}, at "
                f"step {pg.steps_done:,} (float64):")
    st.dataframe({"class": list(range(len(z))), "logit z": [number(v) for v in z.tolist()],
                  "y = MySoftmax(z)": [number(v) for v in y.tolist()]}, hide_index=True)
    c = st.columns(2)
    c[0].markdown("**Jacobian from MySoftmax's backward**")
    c[0].dataframe(_matrix(ours), hide_index=True)
    c[1].markdown("**Jacobian from torch.softmax**")
    c[1].dataframe(_matrix(theirs), hide_index=True)
    gap, formula = (ours - theirs).abs().max().item(), (ours - jacobian_formula(y)).abs().max().item()
    st.caption(f"Built by `torch.autograd.functional.jacobian`, one backward per row. Largest difference between "
               f"the two: {gap:.1e}; between MySoftmax's and diag(y) − y yᵀ: {formula:.1e}.")
    with st.expander("The code of MySoftmax"):
        st.code(inspect.getsource(MySoftmax), language="python")
