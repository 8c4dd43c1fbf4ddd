// Live chart: one Plotly div that persists across updates. The script run gives it everything once
// (layout, base traces such as the points, curves, recent states). While a run is going this code asks
// the live feed (studio/feed.py) for what is new since its newest state, and paints the states one per
// tick, in order, jumping ahead only when far behind, so no state is skipped while the page keeps up.
// When the feed says the run ended it paints the last state at once and asks Streamlit for one rerun;
// when the feed no longer knows the run (404 after a server restart, 410 once its session ended) it
// says the run was lost and asks for the rerun too, which offers Train again.
const PLOTLY_SRC = "/api/assets/plotly.min.js";  // studio/assets.py
const FEED_MS = 100;  // pause between one feed response and the next request
const RETRY_MS = 1000;  // after a failed request (server busy or restarting)
const GOING = ["queued", "starting", "running"];  // a run's statuses while it is going
const MAX_POINTS = 20000;  // per curve: beyond it the chart keeps every other point of the older part
const MAX_STATES = 240;  // states kept for painting; older ones have been painted or skipped
const CANVAS_POINTS = 2000;  // a marker trace with more points than this is drawn on a canvas (see drawPoints)
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

function heavyTraces(base) {
  // Marker traces of the x/y subplot with thousands of points (lesson 3 at its largest sizes has
  // 10,000). As SVG they cost the browser about 100 ms a frame, since every frame repaints their
  // subplot; on a canvas under the (transparent) plot they are drawn once per layout.
  const heavy = new Set();
  base.forEach((t, i) => {
    if ((t.type || "scatter") === "scatter" && t.mode === "markers" && (t.xaxis || "x") === "x"
        && (t.yaxis || "y") === "y" && (t.x || []).length > CANVAS_POINTS) heavy.add(i);
  });
  return heavy;
}

function drawPoints(root) {
  const s = root.__studio, plot = root.querySelector(".studio-plot"), full = plot._fullLayout;
  let canvas = root.querySelector(".studio-points");
  if (!s.heavy || !s.heavy.size || !full) { if (canvas) canvas.remove(); return; }
  if (!canvas) {
    canvas = document.createElement("canvas");
    canvas.className = "studio-points";
    root.querySelector(".studio-plot-wrap").insertBefore(canvas, plot);  // over the surface, under the plot
  }
  const xa = full.xaxis, ya = full.yaxis, dpr = window.devicePixelRatio || 1;
  const key = [xa._offset, xa._length, ya._offset, ya._length, xa.range, ya.range, dpr, s.pointsRun].join();
  if (canvas.dataset.key === key) return;  // the same axes: what is drawn is right
  canvas.dataset.key = key;
  Object.assign(canvas.style, { left: `${xa._offset}px`, top: `${ya._offset}px`,
                                width: `${xa._length}px`, height: `${ya._length}px` });
  canvas.width = Math.round(xa._length * dpr);
  canvas.height = Math.round(ya._length * dpr);
  const ctx = canvas.getContext("2d");
  ctx.scale(dpr, dpr);
  for (const i of s.heavy) {
    const t = s.data.base[i], m = t.marker || {}, r = (m.size || 6) / 2, open = String(m.symbol || "").endsWith("-open");
    const line = m.line || {};
    ctx.globalAlpha = m.opacity ?? 1;
    ctx.beginPath();
    for (let k = 0; k < t.x.length; k++) {
      const px = xa.l2p(t.x[k]), py = ya.l2p(t.y[k]);
      if (!Number.isFinite(px) || !Number.isFinite(py)) continue;
      ctx.moveTo(px + r, py);
      ctx.arc(px, py, r, 0, 2 * Math.PI);
    }
    if (open) { ctx.strokeStyle = m.color || "#444"; ctx.lineWidth = line.width || 1.5; ctx.stroke(); }
    else {
      ctx.fillStyle = m.color || "#444";
      ctx.fill();
      if (line.width) { ctx.strokeStyle = line.color || "white"; ctx.lineWidth = line.width; ctx.stroke(); }
    }
  }
  ctx.globalAlpha = 1;
}

function placeSurface(root) {  // over the x/y plot area, which Plotly knows after each draw
  const plot = root.querySelector(".studio-plot");
  drawPoints(root);
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
    s.heavy = heavyTraces(data.base);
    s.pointsRun = `${data.run}|${data.layout_id || ""}`;
    // A heavy trace keeps its legend entry in Plotly, with one empty point; its points go on the canvas,
    // which shows through the plot's (then transparent) background.
    const traces = data.base.map((t, i) => Object.assign({}, t, s.heavy.has(i) ? { x: [null], y: [null] } : update[i] || {}));
    const layout = s.heavy.size ? Object.assign({}, data.layout, { plot_bgcolor: "rgba(0,0,0,0)", paper_bgcolor: "rgba(0,0,0,0)" })
      : data.layout;
    drawing(s, window.Plotly.react(plot, traces, layout, PLOT_CONFIG).then(() => placeSurface(root)));
    if (!s.afterplot && plot.on) { plot.on("plotly_afterplot", () => placeSurface(root)); s.afterplot = true; }
    s.drawnLayout = s.layoutKey;
  } else {
    // The traces that changed take part, and every trace of a subplot none of whose traces changed
    // ({} leaves one as it is): such a subplot loses its markers on this path (seen with the
    // playground's points). Static points beside a moving trace stay out: with 10,000 of them, taking
    // part cost about a second a frame.
    const idx = animated(data.base, update);
    // A newer state interrupts this animation, which rejects its promise: expected, not an error.
    drawing(s, window.Plotly.animate(plot, { data: idx.map((i) => update[i] || {}), traces: idx }, ANIMATE));
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

function drawing(s, promise) {
  // Paint again only once this drawing is done, and, when it took over 30 ms, after as long again: a
  // chart that costs the browser 100 ms a frame then paints 5 frames a second and leaves the page half
  // of its time for clicks, such as Stop. A cheap chart still paints every tick.
  const t0 = performance.now();
  s.busy = t0;
  const done = () => {
    const cost = performance.now() - t0;
    s.busy = false;
    s.nextAt = cost > 30 ? performance.now() + cost : 0;
  };
  promise.then(done, done);  // a newer state may interrupt an animation: that rejects, as expected
}

function animated(base, update) {
  const subplot = (t) => `${t.xaxis || "x"}${t.yaxis || "y"}`;
  const moving = new Set(base.filter((_, i) => update[i]).map(subplot));
  return base.map((t, i) => i).filter((i) => update[i] || !moving.has(subplot(base[i])));
}

function setText(el, text) {  // writing the same text still costs a layout pass: skip it
  if (el.textContent !== text) el.textContent = text;
}

function tick(root) {
  const s = root.__studio, data = s.data;
  showStatus(root);
  const now = performance.now();
  if ((s.busy && now - s.busy < 2000) || now < (s.nextAt || 0)) return;  // (a drawing never done: go on)
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
  const ended = !GOING.includes(data.status);
  // A chart mounted while its run is going (the student came back to the page) starts at the newest.
  const state = ended || s.painted === -2 ? pending[pending.length - 1]
    : pending.length > data.max_behind ? pending[pending.length - Math.ceil(data.max_behind / 4)] : pending[0];
  s.painted = state.seq;
  paint(root, state, data);
}

function newestSeq(data) {
  const states = data.states || [];
  return states.length ? states[states.length - 1].seq : -1;
}

function merge(root, update) {
  // Add what the feed says is new (states, curve points, and the layout if it changed) to what the
  // chart holds. The script run gave the chart everything else once: the points, the trace styles.
  const s = root.__studio, data = s.data;
  Object.assign(data, { status: update.status, status_text: update.status_text });
  if (update.layout) {  // new axes or trace styles: a full draw
    Object.assign(data, { layout: update.layout, base: update.base || data.base, layout_id: update.layout_id });
    layoutChanged(root);
  }
  const known = newestSeq(data);  // only what is newer than what the chart holds (an answer may repeat)
  const states = (update.states || []).filter((st) => st.seq > known);
  if (states.length) {
    const newest = states[states.length - 1];  // kept even once painted: the chart needs one
    data.states = (data.states || []).concat(states).filter((st) => st.seq > s.painted || st === newest);
    if (data.states.length > MAX_STATES) data.states = data.states.slice(-MAX_STATES);
  }
  for (const [i, add] of Object.entries(update.curves || {})) {
    const curve = (data.curves || (data.curves = {}))[i] || (data.curves[i] = { x: [], y: [] });
    const last = curve.x.length ? curve.x[curve.x.length - 1] : -Infinity;
    const from = upperBound(add.x, last);
    for (let k = from; k < add.x.length; k++) { curve.x.push(add.x[k]); curve.y.push(add.y[k]); }
    if (curve.x.length > MAX_POINTS) {  // thin the older half, keep the newest quarter whole
      const keep = Math.floor(curve.x.length * 3 / 4);
      const thin = (xs) => xs.slice(0, keep).filter((_, k) => k % 2 === 0).concat(xs.slice(keep));
      curve.x = thin(curve.x);
      curve.y = thin(curve.y);
    }
  }
}

function lost(root, message) {
  // The feed no longer knows the run (the server restarted, or the session ended): say so where the
  // status was, and ask for a rerun, which draws the page as it is now (Train again, Stop disabled).
  const s = root.__studio;
  s.lost = { run: s.data.run, message };
  s.data.status = "lost";
  showStatus(root);
  s.setTriggerValue("ended", s.data.run);
}

function showStatus(root) {
  const s = root.__studio, data = s.data;
  // A run lost with the server stays reported until a new run starts.
  const isLost = !!s.lost && (data.run === s.lost.run || !GOING.includes(data.status));
  setText(root.querySelector(".studio-status"), isLost ? s.lost.message : data.status_text || "");
  const status = isLost ? "lost" : data.status || "";
  if (root.dataset.status !== status) root.dataset.status = status;
}

function follow(root) {
  // Ask the feed for what is new until it says the run ended, then ask for the rerun that draws the
  // finished run.
  const s = root.__studio, feed = s.data.feed;
  if (!feed || s.feed === feed) return;  // no run going, or already following this one
  s.feed = feed;
  s.failures = 0;
  const chain = s.chain = (s.chain || 0) + 1;  // one request at a time, whatever mounts and cleanups happen
  const next = () => {
    if (s.feed !== feed || s.chain !== chain) return;  // a newer run, or the script run after Stop, took over
    const url = `${feed}?after=${newestSeq(s.data)}&layout=${encodeURIComponent(s.data.layout_id || "")}`;
    fetch(url, { cache: "no-store" })
      .then((r) => (r.ok ? r.json() : [404, 410].includes(r.status) ? { gone: r.status } : Promise.reject(new Error(r.statusText))))
      .then((update) => {
        if (s.feed !== feed || s.chain !== chain) return;
        s.failures = 0;
        if (update.gone) {
          s.feed = null;
          lost(root, update.gone === 410
            ? "This run ended with its session. Press Train to start a new one."
            : "The run was lost: the server restarted. Press Train to start again.");
          return;
        }
        merge(root, update);
        if (GOING.includes(update.status)) { setTimeout(next, FEED_MS); return; }
        s.feed = null;
        tick(root);
        s.setTriggerValue("ended", s.data.run);
      })
      .catch(() => {
        s.failures += 1;  // server busy or restarting: say so after a few seconds, and keep asking
        if (s.failures === 3) setText(root.querySelector(".studio-status"), "Waiting for the server…");
        setTimeout(next, RETRY_MS);
      });
  };
  next();
}

function layoutChanged(root) {
  const s = root.__studio;
  s.layoutKey = `${s.data.run}|${s.data.layout_id || JSON.stringify(s.data.layout)}`;
}

function setData(root, data) {
  const s = root.__studio;
  if (data.run !== s.run) { s.run = data.run; s.painted = -2; }  // -2: nothing drawn yet
  if (s.lost && data.run !== s.lost.run && GOING.includes(data.status)) s.lost = null;  // a new run
  s.data = data;
  layoutChanged(root);
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
