"""Plotly's Play/Pause replays, kept quiet in the browser.

``Plotly.animate`` rejects its promise with ``undefined`` whenever a newer animation interrupts it: the
Pause button does that, and so does the slider while Play runs. Plotly's own buttons never catch that
promise, so every Pause would surface as an uncaught page error. An interrupted animation is expected,
so exactly those rejections (reason ``undefined``) are marked handled; any other error still shows.
"""

from __future__ import annotations

import streamlit as st

_SCRIPT = """<script>
if (!window.__studioQuietAnimations) {
  window.__studioQuietAnimations = true;
  window.addEventListener("unhandledrejection", (event) => {
    if (event.reason === undefined) event.preventDefault();  // Plotly.animate, interrupted
  });
}
</script>"""


def quiet_interrupted_animations() -> None:
    """Install the handler once per browser tab (idempotent); call it on a page that draws a replay."""
    st.html(_SCRIPT, unsafe_allow_javascript=True)
