"""Words a student meets before any lesson explains them, each explained in one line where it first shows: the
ctx's ``needs_input_grad``, a leaf's ``|grad|``, and the names of the autograd graph's nodes (``TBackward0``...)."""

from __future__ import annotations

import streamlit as st

from autodiff_core.graph import Graph, ops_explained

NEEDS_INPUT_GRAD = ("one True or False per input of forward: whether autograd wants that input's gradient "
                    "(backward may return None for the others)")
GRAD_NORM = "the size of a weight's gradient after backward: its norm, √(sum of its squared entries)"


def graph_words(graph: Graph) -> None:
    """Under a graph: what each of its grey boxes is the backward of, and ``|grad|`` where a leaf shows one."""
    lines = [f"`{name}`: the backward of {words}" for name, words in ops_explained(graph)]
    if lines:
        lines.insert(0, "Each grey box is named after the operation whose backward it runs, with a version number:")
    if any(n.grad_norm is not None for n in graph.nodes):
        lines.append(f"`|grad|`: {GRAD_NORM}.")
    if lines:
        st.caption("  \n".join(lines))
