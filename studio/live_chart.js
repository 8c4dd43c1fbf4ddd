// Live chart: one Plotly div that persists across updates. Python re-sends the run's recent states
// (a fragment polls while training runs); this code paints them one per tick, in order, jumping ahead
// only when far behind, so no state is skipped while the page keeps up.
const PLOTLY_SRC = "/app/static/plotly.min.js";
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
    window.Plotly.react(plot, traces, data.layout, PLOT_CONFIG);
    s.drawnLayout = s.layoutKey;
  } else {
    const idx = Object.keys(update).map(Number);
    window.Plotly.animate(plot, { data: idx.map((i) => update[i]), traces: idx }, ANIMATE);
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
  // One state per tick, in order; when far behind, jump to a few states before the newest.
  const state = pending.length > data.max_behind ? pending[pending.length - Math.ceil(data.max_behind / 4)]
    : pending[0];
  s.painted = state.seq;
  paint(root, state, data);
}

export default function (component) {
  const { data, parentElement } = component;
  const root = parentElement.querySelector(".studio-live");
  if (!root || !data) return;
  const s = root.__studio || (root.__studio = { painted: -2, run: null, paints: 0, timer: null });
  if (data.run !== s.run) { s.run = data.run; s.painted = -2; }  // -2: nothing drawn yet
  s.data = data;
  s.layoutKey = `${data.run}|${JSON.stringify(data.layout)}`;
  s.updates = (s.updates || 0) + 1;
  root.querySelector(".studio-plot").style.height = `${data.height || 420}px`;
  loadPlotly().then(() => {
    tick(root);
    if (!s.timer) s.timer = setInterval(() => tick(root), data.pace_ms || 40);
  }).catch((err) => { root.querySelector(".studio-status").textContent = String(err); });
  return () => { clearInterval(s.timer); s.timer = null; };
}
