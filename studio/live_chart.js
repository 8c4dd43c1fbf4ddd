// Live chart: one Plotly div that persists across updates. Python re-sends the run's recent states
// (a fragment polls while training runs); this code paints them one per tick, in order, jumping ahead
// only when far behind, so no state is skipped while the page keeps up.
const PLOTLY_SRC = "/app/static/plotly.min.js";

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
  const traces = data.base.map((t) => Object.assign({}, t));
  for (const [i, props] of Object.entries(state.traces || {})) Object.assign(traces[i], props);
  for (const [i, curve] of Object.entries(data.curves || {})) {
    const n = upperBound(curve.x, state.step);
    Object.assign(traces[i], { x: curve.x.slice(0, n), y: curve.y.slice(0, n) });
  }
  const layout = Object.assign({}, data.layout, { datarevision: `${data.run}:${state.seq}` });
  const plot = root.querySelector(".studio-plot");
  window.Plotly.react(plot, traces, layout, { displayModeBar: false, responsive: true });
  root.querySelector(".studio-caption").textContent = state.caption || "";
  const metrics = root.querySelector(".studio-metrics");
  metrics.replaceChildren(...(state.metrics || []).map(([label, value]) => {
    const box = document.createElement("div");
    box.className = "studio-metric";
    box.innerHTML = "<span></span><b></b>";
    box.firstChild.textContent = label;
    box.lastChild.textContent = value;
    return box;
  }));
  const s = root.__studio;
  s.paints += 1;
  Object.assign(root.dataset, { run: data.run, painted: state.seq, step: state.step, paints: s.paints });
}

function tick(root) {
  const s = root.__studio, data = s.data;
  root.querySelector(".studio-status").textContent = data.status_text || "";
  root.dataset.status = data.status || "";
  const states = data.states || [];
  if (!states.length) {
    if (s.painted !== -2) {  // an empty chart with the run's axes
      paint(root, { seq: -1, step: -Infinity, traces: {}, caption: data.empty_caption || "" }, data);
      s.painted = -2;
    }
    return;
  }
  const latest = states[states.length - 1].seq;
  if (s.painted >= latest) return;
  let target = s.painted + 1;
  if (latest - s.painted > data.max_behind) target = latest - Math.floor(data.max_behind / 4);
  const state = states.find((st) => st.seq >= target) || states[states.length - 1];
  s.painted = state.seq;
  paint(root, state, data);
}

export default function (component) {
  const { data, parentElement } = component;
  const root = parentElement.querySelector(".studio-live");
  if (!root || !data) return;
  const s = root.__studio || (root.__studio = { painted: -2, run: null, paints: 0, timer: null });
  if (data.run !== s.run) { s.run = data.run; s.painted = -2; }
  s.data = data;
  root.querySelector(".studio-plot").style.height = `${data.height || 420}px`;
  loadPlotly().then(() => {
    tick(root);
    if (!s.timer) s.timer = setInterval(() => tick(root), data.pace_ms || 40);
  }).catch((err) => { root.querySelector(".studio-status").textContent = String(err); });
  return () => { clearInterval(s.timer); s.timer = null; };
}
