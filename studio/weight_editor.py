"""Lesson 5: set a weight by hand, as TF Playground lets you click a link of its diagram and type a value.

Under the diagram, while no run is going: click a link or a bias square of the diagram (``CLICKABLE``), or
pick it in the row (which layers, from which neuron or the bias, to which neuron), and type its value. The
model changes at once (``Playground.set_weight``), the state it is now in replaces the history's state at
this step, and the surface and the diagram are drawn again; Play and Step continue from the edited weights.
The value box always shows the link's weight as it is now, so its +/- nudge the weight and the boundary
moves with it.
"""

from __future__ import annotations

import math

import streamlit as st

from autodiff_core.diagram import drawable
from autodiff_core.figures.network import output_name
from autodiff_core.playground import Playground

from .playground_session import PlaygroundSession
from .state import drawn_at

LAYER, SOURCE, TARGET, VALUE = "pg_edit_layer", "pg_edit_from", "pg_edit_to", "pg_edit_value"
BIAS = -1  # the "From" choice that means the target neuron's bias
LIMIT = 1000.0  # the largest weight one can type (the engine takes up to 1e6)


def column_name(pg: Playground, column: int) -> str:
    """Column 0 is the inputs, then each hidden layer, then the output (as the diagram titles them)."""
    last = len(pg.model.layers)
    return "inputs" if column == 0 else "output" if column == last else f"layer {column}"


def neuron_name(pg: Playground, column: int, i: int) -> str:
    if column == 0:
        return pg.config.features[i]
    return output_name(i, pg.config.outputs) if column == len(pg.model.layers) else f"neuron {i + 1}"


def current_value(pg: Playground, layer: int, target: int, source: int) -> float:
    """The parameter now: the weight from ``source`` to ``target`` of ``layer``, or ``target``'s bias."""
    linear = pg.model.layers[layer]
    value = (linear.bias[target] if source == BIAS else linear.weight[target, source]).item()
    return min(max(value, -LIMIT), LIMIT) if math.isfinite(value) else 0.0  # what the box can show


def pick_link() -> None:
    """The diagram's ``on_select``: the link or bias square clicked (its ``customdata``, [column, to, from],
    from -1 for a bias) becomes the row's choice. A click elsewhere changes nothing."""
    ss = st.session_state
    for point in (ss.get(DIAGRAM) or {}).get("selection", {}).get("points", []):
        which = point.get("customdata")
        if isinstance(which, list) and len(which) == 3 and all(isinstance(v, int) for v in which):
            ss[LAYER], ss[TARGET], ss[SOURCE] = which[0], which[1], BIAS if which[2] < 0 else which[2]
            return


DIAGRAM = "pg_network"  # the diagram's chart key
CLICKABLE = {"on_select": pick_link, "selection_mode": "points"}  # for charts.plot: a click picks a link


def _keep_in_range(key: str, options: list[int]) -> None:
    """A choice made for another network shape falls back to the first."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = options[0]


def weight_editor(session: PlaygroundSession, *, disabled: bool = False) -> None:
    """The editor's one row, for the session's model."""
    ss, pg = st.session_state, session.model
    layers = list(range(len(pg.model.layers)))
    _keep_in_range(LAYER, layers)
    weight = pg.model.layers[ss[LAYER]].weight  # (out, in)
    _keep_in_range(SOURCE, [*range(weight.shape[1]), BIAS])
    _keep_in_range(TARGET, list(range(weight.shape[0])))
    layer = ss[LAYER]
    ss[VALUE] = current_value(pg, layer, ss[TARGET], ss[SOURCE])
    where = "click a link or a bias square above (or pick it here)" if drawable(pg) else "pick a link"
    st.caption(f"Set a weight by hand: {where} and type its value, or nudge it with −/+. The surface and the "
               "diagram follow; Play and Step continue from it, and Reset brings back the initial weights.")
    with st.container(horizontal=True, gap="small", vertical_alignment="bottom"):
        st.selectbox("Link", layers, key=LAYER, disabled=disabled, width=200,
                     **drawn_at("selectbox", LAYER, options=layers),
                     format_func=lambda c: f"{column_name(pg, c)} → {column_name(pg, c + 1)}")
        sources, targets = [*range(weight.shape[1]), BIAS], list(range(weight.shape[0]))
        st.selectbox("From", sources, key=SOURCE, disabled=disabled, width=140,
                     **drawn_at("selectbox", SOURCE, options=sources),
                     format_func=lambda i: "bias" if i == BIAS else neuron_name(pg, layer, i),
                     help="A neuron of the left column, or the bias of the neuron it goes to.")
        st.selectbox("To", targets, key=TARGET, disabled=disabled, width=140,
                     **drawn_at("selectbox", TARGET, options=targets),
                     format_func=lambda j: neuron_name(pg, layer + 1, j))
        st.number_input("Bias" if ss[SOURCE] == BIAS else "Weight", -LIMIT, LIMIT, step=0.1, format="%.3f",
                        key=VALUE, disabled=disabled, width=160, on_change=_edit, args=(session,),
                        **drawn_at("number_input", VALUE, lo=-LIMIT, hi=LIMIT),
                        help="Type a value and press Enter: the model takes it at once.")


def _edit(session: PlaygroundSession) -> None:
    """Set the parameter: the session makes the model's new state the history's state at this step."""
    ss = st.session_state
    if ss.get(VALUE) is not None:
        session.set_weight(ss[LAYER], ss[TARGET], None if ss[SOURCE] == BIAS else ss[SOURCE], float(ss[VALUE]))
