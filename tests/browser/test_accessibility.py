"""axe-core, the accessibility checker (WCAG 2.1 A and AA rules), in Chromium on every page: at 1280x720, in the
presenter view (its settings box opened) and on a 390x844 phone; lesson 4 on each of its tabs. axe comes from
npm at the version package.json pins (``bash scripts/install-test-deps.sh``) and is loaded from ./node_modules,
never from a CDN. Only violations fail: what axe cannot decide (the text of a Plotly chart, drawn over its plot)
it lists as incomplete, which is for a person to look at."""

from __future__ import annotations

import os

import pytest

from testkit.browser import ROOT, open_page, open_tab, wait_idle

pytestmark = pytest.mark.browser
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
PAGES = ("", "custom_function", "two_layer", "logistic", "xray", "playground", "write_function")
XRAY_TABS = ("Graph", "ctx inspector", "Gradcheck lab", "zero_grad()", "Manual SGD", "Custom vs built-in")
VIEWS = {"1280x720": ({"width": 1280, "height": 720}, ""),
         "presenter": ({"width": 1280, "height": 720}, "?present=1"),
         "390x844": ({"width": 390, "height": 844}, "")}
RULES = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]  # axe's tags for WCAG 2.0 and 2.1, levels A and AA
RUN_AXE = """async (rules) => {
  const result = await axe.run(document, {runOnly: {type: 'tag', values: rules}});
  return result.violations.map((v) => ({rule: v.id, nodes: v.nodes.map((n) =>
    `${n.html.slice(0, 120)}: ${(n.failureSummary || '').split('\\n').slice(1).join(' ').trim().slice(0, 200)}`)}));
}"""


def violations(page) -> list[dict]:
    """axe's violations on the page as drawn now (axe is loaded once per page)."""
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate(RUN_AXE, RULES)


def settled(page) -> None:
    """The script run is over and nothing Streamlit draws is still a placeholder."""
    wait_idle(page)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')")


@pytest.fixture(scope="module")
def axe_path():
    if not AXE.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{AXE} is missing: bash scripts/install-test-deps.sh installs it")
        pytest.skip("axe-core is not installed: bash scripts/install-test-deps.sh")
    return AXE


@pytest.mark.parametrize("view", VIEWS)
def test_no_page_breaks_a_wcag_rule(server, browser, axe_path, view):
    viewport, query = VIEWS[view]
    context = browser.new_context(viewport=viewport)
    found = {}
    for path in PAGES:
        page = open_page(context, f"{server}/{path}{query}")
        settled(page)
        if query and page.get_by_text("Settings and presets").count():
            page.get_by_text("Settings and presets").click()
            settled(page)
        for tab in XRAY_TABS if path == "xray" else (None,):
            if tab:
                open_tab(page, tab)
                settled(page)
            if bad := violations(page):
                found[f"{path or 'home'}{f' ({tab})' if tab else ''}"] = bad
        page.close()
    context.close()
    assert not found, "\n".join(f"{where}: {len(v['nodes'])} {v['rule']}: {node}" for where, bad in found.items()
                                 for v in bad for node in v["nodes"])
