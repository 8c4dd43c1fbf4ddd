"""Words a student meets before any lesson explains them (``ctx.needs_input_grad``, ``|grad|``, the autograd
graph's ``TBackward0``, ``AddmmBackward0``, ``SumBackward0``) are explained in a line where each first shows on a
page: in the element that shows it, or the one right under it (a graph's caption)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import open_tab
from tests.studio.test_pages_clean import elements
from tests.studio.test_url_fuzz import open_app, q

# a word, and what its explanation must say (besides the word itself)
MEANS = {"ctx.needs_input_grad": r"wants.*gradient", "|grad|": r"norm", "TBackward0": r"transpose",
         "AddmmBackward0": r"nn\.Linear", "SumBackward0": r"\bsum\b"}


def shown(at) -> list[str]:
    """The text of every element on the page, in the order they show (a graph's DOT source included)."""
    return [str(node.proto) for node in elements(at.main) if getattr(node, "proto", None) is not None
            and type(node).__name__ not in ("Block", "Tab", "Column", "Expander")]


def explained_where_first_shown(at, word: str) -> bool:
    texts = shown(at)
    first = next((i for i, t in enumerate(texts) if word in t), None)
    assert first is not None, f"{word} is not on the page"
    near = " ".join(texts[first:first + 2]).replace(word, "")
    return re.search(MEANS[word], near, re.S | re.I) is not None


@pytest.mark.parametrize(("page", "query", "word", "tab"), [
    ("custom_function", "", "ctx.needs_input_grad", None),
    ("xray", "", "|grad|", None),
    ("xray", "", "SumBackward0", None),
    ("xray", "", "ctx.needs_input_grad", "ctx inspector"),  # lesson 4 draws only the open tab
    ("xray", q(xr_net="Logistic regression"), "TBackward0", None),
    ("xray", q(xr_net="Logistic regression"), "AddmmBackward0", None),
    ("write_function", "", "ctx.needs_input_grad", None),
])
def test_a_new_word_is_explained_where_it_first_shows(new_app, page, query, word, tab):
    at = open_app(new_app, page, query)
    if tab is not None:
        open_tab(at, tab)
    assert not at.exception
    assert explained_where_first_shown(at, word)


@pytest.mark.parametrize("word", ["AddmmBackward0", "TBackward0"])
def test_lesson5_slow_motion_graph_explains_its_names(new_app, word):
    at = open_app(new_app, "playground", "")
    at.toggle(key="pg_slow").set_value(True).run()
    at.button(key="pg_step").click().run()
    assert not at.exception and any("Step 1 in slow motion" in h.value for h in at.subheader)
    assert explained_where_first_shown(at, word)
