"""The first line of every page: make sure it runs inside app.py, never on its own."""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx


def navigation_only() -> None:
    """Keep Streamlit out of its old ``pages/``-folder mode in this process (the server calls this as it
    starts, before any session). app.py's ``st.navigation`` names every page; in the old mode a fresh
    process ran a deep link's page file alone until some session ran app.py, and a page reconnecting to
    a restarted server under load got Streamlit's error box instead of the page."""
    PagesManager.uses_pages_directory = False


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


def student_function_stopped(exc: BaseException) -> bool:
    """Say so in one sentence when ``exc`` is a student's Function stopping at a limit (or failing) while the
    page drew it, and return True; False for anything else, which the caller raises again. The check needs
    no torch: a page that never used a student's Function never loaded the module that raises this."""
    remote = sys.modules.get("autodiff_core.grading.remote")
    if remote is None or not isinstance(exc, remote.StudentFunctionError):
        return False
    st.error(f"Your Function from lesson 6 was stopped: {exc} Choose another activation, or change the Function "
             "in lesson 6 and check it again.")
    return True
