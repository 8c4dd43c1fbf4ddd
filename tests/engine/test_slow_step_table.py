"""The slow-motion forward/backward table fits a laptop's page: short cells, a few columns, and its numbers are
the trace's, to 3 significant figures."""

import math

import pytest

from autodiff_core.playground import Playground, PlaygroundConfig
from autodiff_core.slow_step import UNITS, forward_backward_table, number, slow_step

# At 1280 × 720 the page's column is about 820 px: the layer, the row's name and UNITS numbers of at most
# 9 characters (about 80 px each with the grid's padding) fit it; the old cells, eight numbers each, did not.
MOST_COLUMNS, LONGEST_NUMBER, LONGEST_LABEL = 2 + UNITS, 9, 13


@pytest.mark.parametrize("hidden", [(8, 8), (64,), (3,)])
def test_the_table_is_narrow_and_holds_the_traces_numbers(hidden):
    pg = Playground(PlaygroundConfig(hidden=hidden, learning_rate=3.0))
    for _ in range(5):  # a large rate: gradients of every size, some tiny
        trace = slow_step(pg)
    table = forward_backward_table(trace)
    assert len(table) <= MOST_COLUMNS
    assert list(table)[:2] == ["layer", "value"] and len(table) == 2 + min(UNITS, max(hidden))
    rows = len(table["layer"])
    assert rows == 4 * len(trace.layers)
    assert [n for n in table["layer"] if n] == [f"layer {i + 1}" for i in range(len(hidden))] + ["output"]
    assert max(len(label) for label in table["value"] + table["layer"]) <= LONGEST_LABEL
    for i, layer in enumerate(trace.layers):
        for r, values in enumerate((layer.pre, layer.post, layer.grad_post, layer.grad_pre)):
            shown = [table[f"unit {j + 1}"][4 * i + r] for j in range(len(table) - 2)]
            assert all(len(cell) <= LONGEST_NUMBER for cell in shown), shown
            for cell, v in zip(shown, values, strict=False):
                assert float(cell) == pytest.approx(v, rel=5e-3, abs=1e-300)
            assert all(cell == "" for cell in shown[len(values):])  # the output has one unit


@pytest.mark.parametrize("v", [0.0, 6.04, -0.0123, 5.19e-4, -1.13e-5, 123.456, -1234.5, 999.9, -0.009999, 1e-30])
def test_number_is_short_and_keeps_three_significant_figures(v):
    text = number(v)
    assert len(text) <= 8 and float(text) == pytest.approx(float(f"{v:.3g}"), rel=1e-12)
    assert "e+" not in text and "e-0" not in text


def test_number_of_nan_and_infinity():
    assert math.isnan(float(number(math.nan))) and number(math.inf) == "inf"


def test_the_functions_table_is_the_inspectors_for_the_first_units_in_short_numbers():
    from autodiff_core.inspector import inspector_table
    from autodiff_core.slow_step import function_table

    pg = Playground(PlaygroundConfig(hidden=(64,)))
    trace = slow_step(pg)
    table, full = function_table(trace), inspector_table(trace.function)
    assert list(table) == ["step"] + [f"x[{j}]" for j in range(UNITS)] and table["step"] == full["step"]
    for key in list(table)[1:]:
        assert all(len(cell) <= LONGEST_NUMBER for cell in table[key])
        assert [float(c) for c in table[key]] == pytest.approx([float(c) for c in full[key]], rel=5e-3, abs=1e-300)
