"""What a phone gets besides the page every screen gets: on a screen under 640 px wide, where Streamlit stacks
columns one under another, a lesson's run controls stay at the foot of the screen while the settings above them
scroll by (lesson 5 has twenty settings: 2,000 px of page before Play)."""

from __future__ import annotations

import streamlit as st

PHONE = 640  # px: Streamlit's own width under which columns stack
_CSS = """<style>
@media (max-width: %(phone)spx) {
  /* the wrapper Streamlit puts around a keyed container spans only it: it is what sticks */
  [data-testid="stLayoutWrapper"]:has(> .st-key-%(key)s) { position: sticky; bottom: 0; z-index: 5;
    background: #fff; padding: 0.5rem 0 0.25rem; border-top: 1px solid rgba(11, 13, 18, 0.2); }
  .st-key-%(key)s [data-testid="stHorizontalBlock"] { flex-wrap: wrap; gap: 0.5rem; }
  .st-key-%(key)s [data-testid="stColumn"] { flex: 1 1 20%% !important; min-width: 0 !important;
    width: auto !important; }
  .st-key-%(key)s [data-testid="stColumn"]:last-child { flex-basis: 100%% !important; }
}
</style>"""


def sticky_controls(key: str):
    """A container for one row of buttons and a last, wider column (the speed): on a phone the buttons share one
    line, the last column takes the next, and the whole stays at the foot of the screen until the page scrolls
    to it. ``key`` names it (Streamlit makes it a CSS class); elsewhere it is a plain container."""
    st.html(_CSS % {"phone": PHONE, "key": key})
    return st.container(key=key)
