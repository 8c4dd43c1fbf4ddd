"""The live chart: a custom component that keeps one Plotly div and repaints it in place.

``st.plotly_chart`` remounts whenever its figure changes (its element id hashes the spec), which blanks
the chart during a live run. This component is mounted once under a fixed key, so its DOM persists.
The script run gives it the whole payload once; while its run is going it asks the live feed
(``studio.feed``) for what is new by itself, paces the painting in the browser, and asks for one
script rerun when the feed says the run ended (or that the server no longer knows it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

from .feed import PLAIN, layout_id, publish
from .room.lead import relay_run, was_trained
from .runner import LiveRun

_HTML = """<div class="studio-live">
  <div class="studio-status" aria-live="polite"></div>
  <div class="studio-caption"></div>
  <div class="studio-plot-wrap"><div class="studio-plot"></div></div>
  <div class="studio-metrics"></div>
  <div class="studio-diagram-wrap" hidden>
    <div class="studio-section-title"></div><div class="studio-section-note"></div>
    <canvas class="studio-diagram"></canvas><div class="studio-diagram-tip" hidden></div>
  </div>
  <div class="studio-flow-wrap" hidden>
    <div class="studio-section-title"></div><div class="studio-section-note"></div>
    <div class="studio-flow"></div>
  </div>
</div>"""

_CSS = """
.studio-live { font-family: var(--st-font, "Source Sans Pro", sans-serif); color: var(--st-text-color, #31333f); }
.studio-status { font-size: 0.95rem; opacity: 0.8; min-height: 1.3em; }
.studio-live[data-status="lost"] .studio-status { opacity: 1; font-weight: 600; color: #b42318; }
.studio-caption { font-size: 1.1rem; font-weight: 600; min-height: 1.4em; font-variant-numeric: tabular-nums; }
.studio-plot-wrap { position: relative; width: 100%; }
.studio-plot { width: 100%; position: relative; z-index: 1; }
.studio-surface { position: absolute; z-index: 0; pointer-events: none; opacity: 0.8; }
.studio-points { position: absolute; z-index: 0; pointer-events: none; }
.studio-live[data-draw="1"] .studio-plot .nsewdrag { cursor: crosshair !important; }
.studio-metrics { display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; margin-top: 0.25rem; }
.studio-metric { display: flex; flex-direction: column; font-variant-numeric: tabular-nums; }
.studio-metric span { font-size: 0.85rem; opacity: 0.75; }
.studio-metric b { font-size: 1.35rem; font-weight: 600; }
.studio-diagram-wrap, .studio-flow-wrap { position: relative; margin-top: 1.5rem; }
.studio-diagram-wrap[hidden], .studio-flow-wrap[hidden] { display: none; }
.studio-section-title { font-size: 1.5rem; font-weight: 600; line-height: 1.2; margin-bottom: 0.25rem;
  font-variant-numeric: tabular-nums; }
.studio-section-note { font-size: 0.875rem; opacity: 0.6; margin-bottom: 0.5rem; }
.studio-diagram { display: block; width: 100%; background: white; }
.studio-diagram-tip { position: absolute; z-index: 2; pointer-events: none; background: white; padding: 2px 6px;
  border: 1px solid #bbb; border-radius: 3px; font-size: 1rem; white-space: nowrap; }
"""

_JS = (Path(__file__).with_name("live_chart.js")).read_text(encoding="utf-8")

_component = st.components.v2.component(
    "autograd_studio.live_chart", html=_HTML, css=_CSS, js=_JS, isolate_styles=False
)


def live_chart(payload: Callable[[LiveRun | None], dict], run: LiveRun | None, *, key: str,
               live: bool | None = None, on_click: Callable[[object], None] | None = None) -> None:
    """Mount (first call) or update (later calls, same ``key``) the live chart with ``payload(run)``.

    ``payload`` wraps one of ``autodiff_core.figures``' ``*_live_payload`` functions. While the run is
    going, the live feed calls it again, off the script thread, each time the browser asks. ``live``:
    whether the page chose this view because the run was going (read now when None). A run that ends
    after that choice is still followed, so the browser learns it ended and reruns the page.

    ``on_click``: for a payload marked ``draw``, called (before the rerun it causes) with what a click on the
    plane sent, ``{"x", "y", "erase"}``: data from the browser, which it checks.
    """
    if live is None:
        live = run is not None and run.running
    data = payload(run)
    data.pop(PLAIN, None)  # the class relay's, not the chart's
    data["layout_id"] = layout_id(data.get("layout"), data.get("base"))  # the feed resends them when they change
    if live and run is not None and not run.released:
        data["feed"] = publish(run, payload)
        relay_run(run)  # a teacher's run is relayed to the class that follows it
    else:
        relay_ended(run, lambda: payload)
    clicks = {} if on_click is None else {"on_click_change": lambda: _clicked(key, on_click)}
    _component(key=key, data=data, height="content", on_ended_change=_ended, **clicks)


def relay_ended(run: LiveRun | None, payload: Callable[[], Callable[[LiveRun | None], dict]]) -> None:
    """A teacher's run that ended before the page drew it live (a short run at max speed can end within the script
    run that its Train started): relayed now, as it ended, so that the class follows it as it follows any run.
    ``payload()``: what the live chart would have been given (made only then, on the script thread). Once per
    run, and only the run that Train last started in the class, once it holds a state (one computed whole as the
    settings moved is followed by its settings, and one trained before the class began is not news to it)."""
    if run is not None and not run.released and not run.running and run.last is not None and was_trained(run):
        relay_run(run, lambda: publish(run, payload()))


def _clicked(key: str, on_click: Callable[[object], None]) -> None:
    state = st.session_state.get(key)
    on_click(state.get("click") if hasattr(state, "get") else getattr(state, "click", None))


def follow_chart(data: dict, *, key: str) -> None:
    """The live chart under ``key`` with a payload from the class relay (``studio.room.relay``), which it keeps
    reading for the teacher's next run after one ends (``data["follow"]``)."""
    _component(key=key, data=data, height="content", on_ended_change=_ended)


def _ended() -> None:
    """The browser saw the run end on the feed: the whole page reruns (also when the chart is in a lesson's run
    section, a fragment, ``live_view.train_section``) and draws the finished view."""
    st.rerun()
