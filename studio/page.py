"""The first line of every page: make sure it runs inside app.py, never on its own."""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx


def require_app() -> None:
    """Rerun through app.py when Streamlit ran this page file by itself.

    Because a ``pages/`` folder exists, Streamlit starts each process in its old multipage mode and
    only leaves it once ``st.navigation`` has run. Until then a deep link such as ``/logistic`` runs
    ``pages/logistic.py`` alone: no sidebar, no shared state. Leaving that mode and rerunning sends
    the same URL through app.py's ``st.navigation``, which resolves it to the same page.

    This run's own pages tell the mode, not the class flag: when several sessions open deep links at once
    on a fresh process, all of them start in the old mode, and the first to get here clears the flag for
    the others while their runs are still in it. In the old mode app.py itself is one of the pages.
    """
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    main = Path(ctx.pages_manager.main_script_path).resolve()
    if any(Path(str(info.get("script_path", ""))).resolve() == main for info in ctx.pages_manager.get_pages().values()):
        PagesManager.uses_pages_directory = False
        st.rerun()
