// Live chart: one Plotly div that persists across updates. While a run is going this code reads the
// run's recent states from the live feed (studio/feed.py) and paints them one per tick, in order,
// jumping ahead only when far behind, so no state is skipped while the page keeps up. When the feed
// says the run ended it paints the last state at once and asks Streamlit for one rerun.
const PLOTLY_SRC = "/api/assets/plotly.min.js";  // studio/assets.py
const FEED_MS = 100;  // pause between one feed response and the next request
const RETRY_MS = 1000;  // after a failed request (server busy or restarting)
const PLOT_CONFIG = { displayModeBar: false, responsive: true };
const ANIMATE = { mode: "immediate", transition: { duration: 0 }, frame: { duration: 0, redraw: false } };

function loadPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window.__studioPlotly) {
    window.__studioPlotly = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = PLOTLY_SRC;
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => { window.__studioPlotly = null; reject(new Error("plotly.js did not load")); };
      document.head.appendChild(script);
    });
  }
  return window.__studioPlotly;
}

function upperBound(xs, step) {  // number of entries with x <= step (xs ascending)
  let lo = 0, hi = xs.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (xs[mid] <= step) lo = mid + 1; else hi = mid; }
  return lo;
}

function drawSurface(root, z, colors) {
  // z: rows of probabilities from the bottom of the plot up; colors: RGB at 0, 0.5 and 1. Drawn on a
  // canvas under the (transparent) plot: updating it costs no Plotly work at all.
  const rows = z.length, cols = z[0].length;
  const small = document.createElement("canvas");
  small.width = cols;
  small.height = rows;
  const img = small.getContext("2d").createImageData(cols, rows);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const v = Math.min(1, Math.max(0, z[i][j]));
      const [a, b, t] = v < 0.5 ? [colors[0], colors[1], v * 2] : [colors[1], colors[2], v * 2 - 1];
      const k = ((rows - 1 - i) * cols + j) * 4;
      for (let c = 0; c < 3; c++) img.data[k + c] = Math.round(a[c] + (b[c] - a[c]) * t);
      img.data[k + 3] = 255;
    }
  }
  small.getContext("2d").putImageData(img, 0, 0);
  const canvas = surfaceCanvas(root);
  const ctx = canvas.getContext("2d");
  ctx.imageSmoothingEnabled = true;
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(small, 0, 0, canvas.width, canvas.height);
}

function surfaceCanvas(root) {
  let canvas = root.querySelector(".studio-surface");
  if (!canvas) {
    canvas = document.createElement("canvas");
    canvas.className = "studio-surface";
    root.querySelector(".studio-plot-wrap").prepend(canvas);
  }
  return canvas;
}

function placeSurface(root) {  // over the x/y plot area, which Plotly knows after each draw
  const plot = root.querySelector(".studio-plot");
  const full = plot._fullLayout;
  const canvas = root.querySelector(".studio-surface");
  if (!full || !canvas) return;
  const x = full.xaxis, y = full.yaxis;
  Object.assign(canvas.style, { left: `${x._offset}px`, top: `${y._offset}px`,
                                width: `${x._length}px`, height: `${y._length}px` });
  if (canvas.width !== Math.round(x._length) || canvas.height !== Math.round(y._length)) {
    canvas.width = Math.round(x._length);
    canvas.height = Math.round(y._length);
    const s = root.__studio;
    if (s.surface) drawSurface(root, s.surface, s.data.surface.colors);
  }
}

function paint(root, state, data) {
  const s = root.__studio;
  const plot = root.querySelector(".studio-plot");
  const update = {};  // trace index -> new x, y, ...
  for (const [i, props] of Object.entries(state.traces || {})) update[i] = Object.assign({}, props);
  for (const [i, curve] of Object.entries(data.curves || {})) {
    const n = upperBound(curve.x, state.step);
    update[i] = Object.assign(update[i] || {}, { x: curve.x.slice(0, n), y: curve.y.slice(0, n) });
  }
  if (s.drawnLayout !== s.layoutKey || !plot.data) {
    // New run or new axes: a full draw. Otherwise only trace data changes, and Plotly's animation
    // path (redraw: false, axis ranges fixed by Python) repaints them without laying out the figure.
    const traces = data.base.map((t, i) => Object.assign({}, t, update[i] || {}));
    window.Plotly.react(plot, traces, data.layout, PLOT_CONFIG).then(() => placeSurface(root));
    if (!s.afterplot && plot.on) { plot.on("plotly_afterplot", () => placeSurface(root)); s.afterplot = true; }
    s.drawnLayout = s.layoutKey;
  } else {
    // Every trace takes part ({} leaves one as it is): a subplot none of whose traces is animated
    // loses its markers on this path (seen with the playground's points).
    const idx = data.base.map((_, i) => i);
    // A newer state interrupts this animation, which rejects its promise: expected, not an error.
    window.Plotly.animate(plot, { data: idx.map((i) => update[i] || {}), traces: idx }, ANIMATE).catch(() => {});
  }
  if (state.surface && data.surface) {
    s.surface = state.surface;
    surfaceCanvas(root);
    placeSurface(root);
    drawSurface(root, state.surface, data.surface.colors);
  }
  setText(root.querySelector(".studio-caption"), state.caption || "");
  const metrics = root.querySelector(".studio-metrics");
  const rows = state.metrics || [];
  if (metrics.children.length !== rows.length) {  // build the boxes once, then only change their text
    metrics.replaceChildren(...rows.map(() => {
      const box = document.createElement("div");
      box.className = "studio-metric";
      box.append(document.createElement("span"), document.createElement("b"));
      return box;
    }));
  }
  rows.forEach(([label, value], i) => {
    setText(metrics.children[i].firstChild, label);
    setText(metrics.children[i].lastChild, value);
  });
  s.paints += 1;
  Object.assign(root.dataset, { run: data.run, painted: state.seq, step: state.step, paints: s.paints });
}

function setText(el, text) {  // writing the same text still costs a layout pass: skip it
  if (el.textContent !== text) el.textContent = text;
}

function tick(root) {
  const s = root.__studio, data = s.data;
  setText(root.querySelector(".studio-status"), data.status_text || "");
  if (root.dataset.status !== (data.status || "")) root.dataset.status = data.status || "";
  const states = data.states || [];
  if (!states.length) {
    if (s.painted !== -1) {  // an empty chart with the run's axes
      paint(root, { seq: -1, step: -Infinity, traces: {}, caption: data.empty_caption || "" }, data);
      s.painted = -1;
    }
    return;
  }
  const latest = states[states.length - 1].seq;
  if (s.painted >= latest) return;
  const pending = states.filter((st) => st.seq > s.painted);
  // One state per tick, in order; when far behind, jump to a few states before the newest. Once the
  // run has ended (Stop, say), the last state at once.
  const ended = !["starting", "running"].includes(data.status);
  const state = ended ? pending[pending.length - 1]
    : pending.length > data.max_behind ? pending[pending.length - Math.ceil(data.max_behind / 4)] : pending[0];
  s.painted = state.seq;
  paint(root, state, data);
}

function follow(root) {
  // Read the feed until it says the run ended, then ask for the rerun that draws the finished run.
  const s = root.__studio, feed = s.data.feed;
  if (!feed || s.feed === feed) return;  // no run going, or already following this one
  s.feed = feed;
  const next = () => {
    if (s.feed !== feed) return;  // a newer run, or the script run after Stop, took over
    fetch(feed, { cache: "no-store" })
      .then((r) => (r.ok ? r.json() : r.status === 404 ? null : Promise.reject(new Error(r.statusText))))
      .then((data) => {
        if (s.feed !== feed) return;
        if (!data) { s.feed = null; return; }  // the run is gone (session ended): keep what is shown
        setData(root, data);
        if (["starting", "running"].includes(data.status)) { setTimeout(next, FEED_MS); return; }
        s.feed = null;
        tick(root);
        s.setTriggerValue("ended", data.run);
      })
      .catch(() => setTimeout(next, RETRY_MS));
  };
  next();
}

function setData(root, data) {
  const s = root.__studio;
  if (data.run !== s.run) { s.run = data.run; s.painted = -2; }  // -2: nothing drawn yet
  s.data = data;
  s.layoutKey = `${data.run}|${JSON.stringify(data.layout)}`;
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const root = parentElement.querySelector(".studio-live");
  if (!root || !data) return;
  const s = root.__studio || (root.__studio = { painted: -2, run: null, paints: 0, timer: null, feed: null });
  s.setTriggerValue = setTriggerValue;
  if (!data.feed) s.feed = null;  // the script drew a run that is not going: stop following
  // While following, the feed is newer than what a script run drew (another widget changed, say).
  if (!(s.feed && s.feed === data.feed)) setData(root, data);
  root.querySelector(".studio-plot").style.height = `${data.height || 420}px`;
  loadPlotly().then(() => {
    tick(root);
    if (!s.timer) s.timer = setInterval(() => tick(root), data.pace_ms || 40);
    follow(root);
  }).catch((err) => { root.querySelector(".studio-status").textContent = String(err); });
  return () => { clearInterval(s.timer); s.timer = null; s.feed = null; };
}
