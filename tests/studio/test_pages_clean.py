"""No page ever shows Streamlit's internals: no DeltaGenerator repr (what magic printed for a bare
``st.success(...) if ... else st.error(...)``) and no exception box, on any page or X-ray tab."""

import pytest
from streamlit import config
from streamlit.testing.v1.util import patch_config_options

from studio.lessons import lessons
from tests.conftest import open_tab

PAGES = ["pages/home.py", *(x.page for x in lessons()), "pages/board.py"]


def elements(node):
    """Every node of an AppTest tree, blocks and elements (every tab's content included)."""
    yield node
    for child in getattr(node, "children", {}).values():
        yield from elements(child)


def internals_shown(at) -> list[str]:
    """The text of each element that shows a DeltaGenerator, or is an exception box."""
    found = []
    for node in elements(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None:
            continue
        text = str(proto)
        if "DeltaGenerator" in text or type(node).__name__ == "Exception":
            found.append(f"{type(node).__name__}: {text[:120]}")
    return found


def test_apptest_reads_the_apps_config_so_magic_is_off(app):
    """AppTest loads .streamlit/config.toml like `streamlit run`: the app's own setting is in force."""
    assert config.get_option("runner.magicEnabled") is False


@pytest.mark.parametrize("magic", [False, True], ids=["magic-off (config.toml)", "magic-on"])
@pytest.mark.parametrize("page", PAGES)
def test_no_page_shows_a_deltagenerator_or_an_exception(new_app, page, magic):
    """With magic on, any bare expression on a page would print: none does. The X-ray draws only its open tab:
    each of its six tabs is opened in turn, as a click does."""
    with patch_config_options({"runner.magicEnabled": magic}):
        at = new_app()
        at.run()
        at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
        assert internals_shown(at) == []
        for tab in [t.label for t in at.tabs] if page == "pages/xray.py" else []:
            open_tab(at, tab)
            assert not at.exception, (tab, [e.value for e in at.exception])
            assert internals_shown(at) == [], tab
    if page == "pages/xray.py":
        assert len(at.tabs) == 6
