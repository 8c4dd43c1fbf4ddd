"""The first line of every page: make sure it runs inside app.py, never on its own."""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager


def require_app() -> None:
    """Rerun through app.py when Streamlit ran this page file by itself.

    Because a ``pages/`` folder exists, Streamlit starts each process in its old multipage mode and
    only leaves it once ``st.navigation`` has run. Until then a deep link such as ``/logistic`` runs
    ``pages/logistic.py`` alone: no sidebar, no shared state. Leaving that mode and rerunning sends
    the same URL through app.py's ``st.navigation``, which resolves it to the same page.
    """
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
