"""A button that saves the page's live chart as a PNG at the projector's size (1280x720), in the browser.

Finished charts drawn by ``studio.charts.plot`` have this in their own toolbar (the camera); the live chart
keeps its toolbar hidden, so a lesson whose finished view is the live chart gets this button instead. The
playground's decision surface is a canvas under the plot, so this button draws it into the picture too."""

from __future__ import annotations

import streamlit as st

_HTML = '<button class="studio-png" type="button" title="Save the chart as a 1280×720 PNG">PNG</button>'
_CSS = """.studio-png { width: 100%; min-height: 2.5rem; border-radius: 0.5rem; cursor: pointer;
  border: 1px solid rgba(49, 51, 63, 0.2); background: white; color: inherit; font: inherit;
  font-size: 0.875rem; line-height: 1.6; }  /* as Streamlit's own buttons beside it (CSV, JSON, HTML) */
.studio-png:hover { border-color: #ff4b4b; color: #ff4b4b; }"""
_JS = """
const SIZE = { width: 1280, height: 720 };
function loadPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  return new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = "/api/assets/plotly.min.js";
    s.onload = () => resolve(window.Plotly);
    s.onerror = () => reject(new Error("plotly.js did not load"));
    document.head.appendChild(s);
  });
}
async function save(name) {
  const live = document.querySelector(".studio-live");
  const div = live && live.querySelector(".js-plotly-plot");
  if (!div) return;
  const Plotly = await loadPlotly();
  const url = await Plotly.toImage(div, { format: "png", ...SIZE });
  const img = new Image();
  await new Promise((ok) => { img.onload = ok; img.src = url; });
  const canvas = document.createElement("canvas");
  canvas.width = SIZE.width; canvas.height = SIZE.height;
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "white";
  ctx.fillRect(0, 0, SIZE.width, SIZE.height);
  const surface = live.querySelector(".studio-surface");
  const L = div._fullLayout;
  if (surface && surface.width && L && L.xaxis && L.yaxis) {  // where the export puts the x/y plot area
    const m = L.margin, w = SIZE.width - m.l - m.r, h = SIZE.height - m.t - m.b;
    const [x0, x1] = L.xaxis.domain, [y0, y1] = L.yaxis.domain;
    ctx.globalAlpha = 0.8;
    ctx.drawImage(surface, m.l + x0 * w, m.t + (1 - y1) * h, (x1 - x0) * w, (y1 - y0) * h);
    ctx.globalAlpha = 1;
  }
  ctx.drawImage(img, 0, 0);
  const link = document.createElement("a");
  link.download = name + ".png";
  link.href = canvas.toDataURL("image/png");
  link.click();
}
export default function (component) {
  const { data, parentElement } = component;
  const button = parentElement.querySelector(".studio-png");
  if (button) button.onclick = () => save((data && data.name) || "chart");
}
"""

_component = st.components.v2.component("autograd_studio.png_button", html=_HTML, css=_CSS, js=_JS,
                                        isolate_styles=False)


def png_button(name: str, *, key: str) -> None:
    """The PNG button for the live chart on this page; ``name`` is the file's name without ``.png``."""
    _component(key=key, data={"name": name}, height="content")
