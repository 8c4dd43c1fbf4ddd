// Live chart: one Plotly div that persists across updates. The script run gives it everything once
// (layout, base traces such as the points, curves, recent states). While a run is going this code asks
// the live feed (studio/feed.py) for what is new since its newest state, and paints the states one per
// frame, in order, skipping only what is beyond max_behind, so no state is skipped while the page keeps up.
// When the feed says the run ended it paints the last state at once and asks Streamlit for one rerun;
// when the feed no longer knows the run (404 after a server restart, 410 once its session ended) it
// says the run was lost and asks for the rerun too, which offers Train again.
const PLOTLY_SRC = "/api/assets/plotly.min.js";  // studio/assets.py
const FEED_MS = 100;  // pause between one feed response and the next request
const RELAY_IDLE_MS = 400;  // between asks of a class relay while the teacher's run is not going
const RETRY_MS = 1000;  // after a failed request (server busy or restarting)
const ASK_MS = 3000, ASK_TRIES = 10;  // the rerun asked for when a run ends: asked again until one draws
const GOING = ["queued", "starting", "running"];  // a run's statuses while it is going
const MAX_POINTS = 20000;  // per curve: beyond it the chart keeps every other point of the older part
const MAX_STATES = 240;  // states kept for painting; older ones have been painted or skipped
const CANVAS_POINTS = 2000;  // a marker trace with more points than this is drawn on a canvas (see drawPoints)
const FLOW_MS = 400;  // the gradient flow repaints at most this often
const DIAGRAM_MS = 200;  // and the network diagram
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

function surfaceColor(v, spec) {
  // One grid point's colour and how far towards it: two classes on spec.colors (RGB at 0, 0.5 and 1), or
  // with many, v = class + strength: from spec.unsure (strength 0) to the class's colour (strength 1).
  if (spec.classes) {
    const k = Math.min(spec.classes.length - 1, Math.max(0, Math.floor(v)));
    return [spec.unsure, spec.classes[k], Math.min(1, Math.max(0, v - k))];
  }
  const colors = spec.colors, p = Math.min(1, Math.max(0, v));
  return p < 0.5 ? [colors[0], colors[1], p * 2] : [colors[1], colors[2], p * 2 - 1];
}

function drawSurface(root, z, spec) {
  // z: rows of the surface from the bottom of the plot up, coloured by spec (surfaceColor). Drawn on a
  // canvas under the (transparent) plot: updating it costs no Plotly work at all.
  const rows = z.length, cols = z[0].length;
  const small = document.createElement("canvas");
  small.width = cols;
  small.height = rows;
  const img = small.getContext("2d").createImageData(cols, rows);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const [a, b, t] = surfaceColor(z[i][j], spec);
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
    if (s.surface) drawSurface(root, s.surface, s.data.surface);
  }
}

function paint(root, state, data) {
  const s = root.__studio;
  const plot = root.querySelector(".studio-plot");
  const update = {};  // trace index -> new x, y, ...
  for (const [i, props] of Object.entries(state.traces || {})) update[i] = Object.assign({}, props);
  for (const [i, curve] of Object.entries(data.curves || {})) {
    if (i[0] === "f") continue;  // the gradient flow's (see paintFlow)
    const n = upperBound(curve.x, state.step);
    if (i[0] === "p") {  // a path (lesson 7): y holds its points [x, y] by step, drawn on trace i.slice(1)
      const points = curve.y.slice(0, n), t = i.slice(1);
      update[t] = Object.assign(update[t] || {}, { x: points.map((p) => p[0]), y: points.map((p) => p[1]) });
      continue;
    }
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
    drawSurface(root, state.surface, data.surface);
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

// ---- the network diagram (lesson 5): figures.network.network_live_spec and network_live_state ----
const TILE = 1.0, GAP_X = 2.2, GAP_Y = 1.35;  // as autodiff_core/figures/network.py draws it
const STEP_ROW = 24;  // px under the diagram for its step

function decode(b64, Type) {
  const text = atob(b64), bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return Type === Uint8Array ? bytes : new Type(bytes.buffer);
}

function onScreen(root, el) {
  // Whether ``el`` is in the viewport (an IntersectionObserver keeps it up to date): the diagram and the
  // gradient flow paint only while seen, and catch up with the newest state once scrolled into view.
  const s = root.__studio;
  if (!s.seen) {
    s.seen = new Map();
    if (!window.IntersectionObserver) return true;
    s.observer = new IntersectionObserver((entries) => entries.forEach((e) => {
      s.seen.set(e.target, e.isIntersecting);
      if (e.isIntersecting) catchUp(root);
    }));
  }
  if (!s.seen.has(el)) { s.seen.set(el, true); if (s.observer) s.observer.observe(el); }
  return s.seen.get(el);
}

function catchUp(root) {  // a section scrolled into view: paint what it missed
  const s = root.__studio, data = s.data;
  if (!data) return;
  if (s.diagramLatest) paintDiagram(root, s.diagramLatest, data);
  if (data.flow && s.flowStep !== undefined) paintFlow(root, s.flowStep, data);
}

function watchWidth(root) {
  // Plotly's `responsive` follows the window only, but the page's content also widens when the sidebar closes
  // or the presenter view turns on: then draw the charts again at their new width (once a frame at most).
  const s = root.__studio;
  if (s.resizer || !window.ResizeObserver) return;
  let width = root.clientWidth, queued = false;
  s.resizer = new ResizeObserver(() => {
    if (queued || root.clientWidth === width || !root.clientWidth) return;  // (0: hidden, nothing to draw)
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      width = root.clientWidth;
      if (!window.Plotly) return;
      root.querySelectorAll(".js-plotly-plot").forEach((div) => {
        if (div.data && div.offsetParent !== null) window.Plotly.Plots.resize(div).catch(() => {});  // shown only
      });
      catchUp(root);  // the diagram's canvas and the gradient flow, at the new width
    });
  });
  s.resizer.observe(root);
}

function showSections(root, data) {
  const diagram = root.querySelector(".studio-diagram-wrap"), flow = root.querySelector(".studio-flow-wrap");
  diagram.hidden = !data.diagram;
  flow.hidden = !data.flow;
  const s = root.__studio;
  if (data.diagram) {
    setText(diagram.querySelector(".studio-section-title"), data.diagram.title || "");
    setText(diagram.querySelector(".studio-section-note"), data.diagram.note || "");
    if (s.diagramRun !== data.run) { s.diagramRun = data.run; s.diagramStep = -1; s.diagramNext = null; }
  }
  if (data.diagram) {  // the room the diagram will take, before its first paint: nothing below jumps
    const canvas = diagram.querySelector("canvas");
    if (!canvas.style.height) canvas.style.height = `${diagramGeometry(data.diagram, root.clientWidth || 700).height}px`;
  }
  if (data.flow) {
    flow.querySelector(".studio-flow").style.height = `${data.flow.layout.height || 520}px`;
    setText(flow.querySelector(".studio-section-title"), data.flow.title || "");
    setText(flow.querySelector(".studio-section-note"), data.flow.note || "");
  } else if (s.flowDrawn) {
    window.Plotly && window.Plotly.purge(flow.querySelector(".studio-flow"));
    s.flowDrawn = false;
  }
}

function diagramGeometry(spec, width) {
  const cols = spec.columns, rows = Math.max(...cols), top = 40;
  const x0 = -TILE / 2 - (spec.name_room || 0), x1 = (cols.length - 1) * GAP_X + TILE, y0 = -(rows / 2) * GAP_Y, y1 = (rows / 2) * GAP_Y + 0.3;
  // The static figure's height, or less where the width cannot use it (a phone): no empty band above and below.
  const height = Math.min(120 + 62 * rows, Math.ceil(top + 10 + (width - 20) / (x1 - x0) * (y1 - y0)));
  const unit = Math.min((width - 20) / (x1 - x0), (height - top - 10) / (y1 - y0));
  const left = (width - unit * (x1 - x0)) / 2, bottom = top + (height - top - 10 + unit * (y1 - y0)) / 2;
  const px = (x) => left + (x - x0) * unit, py = (y) => bottom - (y - y0) * unit;
  const centres = cols.map((n, c) => Array.from({ length: n }, (_, i) => [px(c * GAP_X), py((n - 1 - i - (n - 1) / 2) * GAP_Y)]));
  return { width, height: height + STEP_ROW, unit, centres, top, bottom: height };
}

function paintDiagram(root, d, data) {
  const s = root.__studio, spec = data.diagram;
  const wrap = root.querySelector(".studio-diagram-wrap"), canvas = wrap.querySelector("canvas");
  s.diagramLatest = d;
  if (!spec || d.step === s.diagramStep && s.diagramWidth === root.clientWidth) return;
  if (s.diagramStep !== -1 && !onScreen(root, canvas)) return;  // the first paint gives the section its height
  const width = Math.max(200, wrap.clientWidth || root.clientWidth), g = spec.grid;
  const geo = diagramGeometry(spec, width), dpr = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(geo.height * dpr)) {
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(geo.height * dpr);
    canvas.style.height = `${geo.height}px`;
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, geo.height);
  const maps = decode(d.maps, Uint8Array), weights = decode(d.weights, Float32Array), biases = decode(d.biases, Float32Array);
  const [red, white, blue] = spec.colors, tile = TILE * geo.unit, bins = spec.width_bins || [];
  // links, under the tiles: from neuron i of column c to neuron j of column c + 1, weight (out, in) row by row
  const links = [], groups = new Map();  // (sign, width) -> segments: one stroke each
  let w0 = 0;
  for (let c = 0; c + 1 < spec.columns.length; c++) {
    const nIn = spec.columns[c], nOut = spec.columns[c + 1];
    for (let j = 0; j < nOut; j++) {
      for (let i = 0; i < nIn; i++) {
        const w = weights[w0 + j * nIn + i], [ax, ay] = geo.centres[c][i], [bx, by] = geo.centres[c + 1][j];
        const seg = [ax + tile / 2, ay, bx - tile / 2, by, w];
        links.push(seg);
        const key = (w > 0 ? 100 : 0) + bins.filter((b) => b < Math.abs(w)).length;
        (groups.get(key) || groups.set(key, []).get(key)).push(seg);
      }
    }
    w0 += nIn * nOut;
  }
  ctx.globalAlpha = 0.75;
  for (const [key, segs] of [...groups].sort((a, b) => a[0] - b[0])) {
    ctx.strokeStyle = `rgb(${(key >= 100 ? blue : red).join()})`;
    ctx.lineWidth = 1 + (key % 100);
    ctx.beginPath();
    for (const seg of segs) { ctx.moveTo(seg[0], seg[1]); ctx.lineTo(seg[2], seg[3]); }
    ctx.stroke();
  }
  ctx.globalAlpha = 1;
  // tiles: each neuron's map, g x g cells, row 0 at the bottom
  const small = s.diagramTile || (s.diagramTile = document.createElement("canvas"));
  small.width = g;
  small.height = g;
  const sctx = small.getContext("2d"), img = sctx.createImageData(g, g);
  ctx.imageSmoothingEnabled = false;
  let m0 = 0;
  spec.columns.forEach((n, c) => {
    for (let i = 0; i < n; i++, m0 += g * g) {
      for (let r = 0; r < g; r++) {
        for (let k = 0; k < g; k++) {
          const v = maps[m0 + r * g + k] / 127.5 - 1, [a, b, t] = v < 0 ? [white, red, -v] : [white, blue, v];
          const p = ((g - 1 - r) * g + k) * 4;
          for (let ch = 0; ch < 3; ch++) img.data[p + ch] = Math.round(a[ch] + (b[ch] - a[ch]) * t);
          img.data[p + 3] = 255;
        }
      }
      sctx.putImageData(img, 0, 0);
      const [cx, cy] = geo.centres[c][i];
      ctx.drawImage(small, cx - tile / 2, cy - tile / 2, tile, tile);
    }
  });
  // biases: a small square at the lower left corner of each neuron after the inputs
  let b0 = 0;
  const half = Math.min(4.5, tile / 6);  // 9 px, as in the static figure, or less where the tiles are small
  spec.columns.slice(1).forEach((n, c) => {
    for (let i = 0; i < n; i++, b0++) {
      const [cx, cy] = geo.centres[c + 1][i];
      ctx.fillStyle = `rgb(${(biases[b0] > 0 ? blue : red).join()})`;
      ctx.strokeStyle = "white";
      ctx.lineWidth = 1;
      ctx.fillRect(cx - tile / 2 - half, cy + tile / 2 - half, 2 * half, 2 * half);
      ctx.strokeRect(cx - tile / 2 - half, cy + tile / 2 - half, 2 * half, 2 * half);
    }
  });
  ctx.fillStyle = "#262730";
  ctx.font = `${spec.font.size}px ${spec.font.family}`;
  ctx.textAlign = "center";
  ctx.textBaseline = "bottom";
  // Column titles; where they would meet (a deep network on a phone), short ones: in, 1, 2, ..., out.
  const room = spec.columns.length > 1 ? geo.centres[1][0][0] - geo.centres[0][0][0] - 6 : width;
  const last = spec.headers.length - 1;
  const short = spec.headers.some((h) => ctx.measureText(h).width > room);
  const label = (h, c) => (!short ? h : c === 0 ? "in" : c === last ? "out" : String(c));
  spec.headers.forEach((h, c) => ctx.fillText(label(h, c), geo.centres[c][0][0], geo.top - 6));
  // Each input's name at its tile's left (X1, sin X1, ...), in the room left for it: smaller if it does not fit.
  const names = spec.labels[0] || [], nameRoom = (spec.name_room || 0) * geo.unit - 6;
  const nameSize = spec.name_size || spec.font.size;
  ctx.font = `${nameSize}px ${spec.font.family}`;
  const widest = Math.max(0, ...names.map((n) => ctx.measureText(n).width));
  if (widest > nameRoom && nameRoom > 0) ctx.font = `${Math.max(9, Math.floor(nameSize * nameRoom / widest))}px ${spec.font.family}`;
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  names.forEach((n, i) => ctx.fillText(n, geo.centres[0][i][0] - tile / 2 - 4, geo.centres[0][i][1]));
  ctx.font = `${spec.font.size}px ${spec.font.family}`;
  ctx.textBaseline = "bottom";
  ctx.textAlign = "left";  // the step in the canvas: text changed in the page would lay the page out again
  ctx.fillText(`step ${d.step.toLocaleString("en-US")}`, 4, geo.height - 2);
  s.diagramHover = { geo, links, maps, biases, spec, tile };
  s.diagramStep = d.step;
  s.diagramWidth = root.clientWidth;
  s.diagramPaints = (s.diagramPaints || 0) + 1;
  Object.assign(root.dataset, { diagramStep: d.step, diagramPaints: s.diagramPaints });
  hoverDiagram(root, canvas);
}

function hoverDiagram(root, canvas) {
  // What the static figure shows on hover: a neuron's name, bias and output there; a link's weight.
  if (canvas.__studioHover) return;
  canvas.__studioHover = true;
  const tip = root.querySelector(".studio-diagram-tip");
  canvas.addEventListener("mouseleave", () => { tip.hidden = true; });
  canvas.addEventListener("mousemove", (ev) => {
    const h = root.__studio.diagramHover;
    if (!h) return;
    const box = canvas.getBoundingClientRect(), x = ev.clientX - box.left, y = ev.clientY - box.top;
    const text = hitDiagram(h, x, y);
    tip.hidden = !text;
    if (!text) return;
    tip.textContent = text;
    tip.style.left = `${Math.min(x + 12, box.width - 180)}px`;
    tip.style.top = `${y + 12}px`;
  });
}

function hitDiagram(h, x, y) {
  const { geo, spec, tile, maps, biases } = h, g = spec.grid;
  let m0 = 0, b0 = 0;
  for (let c = 0; c < spec.columns.length; c++) {
    for (let i = 0; i < spec.columns[c]; i++, m0 += g * g) {
      const [cx, cy] = geo.centres[c][i], bias = c > 0 ? biases[b0 + i] : null;
      if (Math.abs(x - (cx - tile / 2)) <= 5 && Math.abs(y - (cy + tile / 2)) <= 5 && c > 0) return `bias ${fmt(bias)}`;
      if (Math.abs(x - cx) <= tile / 2 && Math.abs(y - cy) <= tile / 2) {
        const k = Math.min(g - 1, Math.floor((x - cx + tile / 2) / tile * g));
        const r = Math.min(g - 1, Math.floor((cy + tile / 2 - y) / tile * g));
        const out = (maps[m0 + r * g + k] / 127.5 - 1).toFixed(2);
        return `${spec.labels[c][i]}${c > 0 ? `, bias ${fmt(bias)}` : ""}, output ${out}`;
      }
    }
    if (c > 0) b0 += spec.columns[c];
  }
  let best = null, bestD = 5;
  for (const [ax, ay, bx, by, w] of h.links) {
    const dx = bx - ax, dy = by - ay, t = Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)));
    const d = Math.hypot(x - ax - t * dx, y - ay - t * dy);
    if (d < bestD) { bestD = d; best = w; }
  }
  return best === null ? "" : `weight ${fmt(best)}`;
}

function fmt(v) {
  return `${v >= 0 ? "+" : ""}${v.toFixed(3)}`;
}

// ---- the gradient flow (lesson 5): figures.gradflow.gradient_flow_live ----
function paintFlow(root, step, data) {
  // Axis ranges are fixed here and change only now and then (the step axis doubles, the log axis grows by
  // whole decades), so most repaints take Plotly's animation path, which does not lay the chart out again.
  const s = root.__studio, spec = data.flow, div = root.querySelector(".studio-flow");
  s.flowStep = step;
  if (div.data && !onScreen(root, div)) return;
  let lo = Infinity, hi = -Infinity;
  const traces = spec.traces.map((t, k) => {
    const curve = (data.curves || {})[`f${k}`] || { x: [], y: [] };
    const n = upperBound(curve.x, step), every = Math.max(1, Math.ceil(n / (spec.points || 400)));
    const x = [], y = [];
    const add = (i) => {
      x.push(curve.x[i]);
      y.push(curve.y[i]);
      if ((t.yaxis || "y") === "y" && curve.y[i] > 0) { lo = Math.min(lo, curve.y[i]); hi = Math.max(hi, curve.y[i]); }
    };
    for (let i = 0; i < n; i += every) add(i);
    if (n && (n - 1) % every) add(n - 1);  // always the newest
    return Object.assign({}, t, { x, y });
  });
  const r = s.flowRanges && s.flowRun === data.run ? s.flowRanges : { x: 500, lo: 0, hi: 0 };
  while (step > r.x) r.x *= 2;
  if (Number.isFinite(lo)) {
    const a = Math.floor(Math.log10(lo)), b = Math.ceil(Math.log10(hi) + 1e-9);
    if (r.lo === r.hi) { r.lo = a; r.hi = Math.max(b, a + 1); } else { r.lo = Math.min(r.lo, a); r.hi = Math.max(r.hi, b); }
  }
  // a note where the norms cannot be drawn (figures.gradflow.unplottable) comes and goes with a new layout
  const key = `${data.run}|${r.x}|${r.lo}|${r.hi}|${root.clientWidth}|${JSON.stringify(spec.layout.annotations || [])}`;
  if (key !== s.flowKey || !div.data) {
    const layout = JSON.parse(JSON.stringify(spec.layout));
    layout.xaxis2 = Object.assign(layout.xaxis2 || {}, { range: [0, r.x], autorange: false });
    if (r.lo !== r.hi) layout.yaxis = Object.assign(layout.yaxis || {}, { range: [r.lo, r.hi], autorange: false });
    div.style.height = `${spec.layout.height || 520}px`;
    window.Plotly.react(div, traces, layout, PLOT_CONFIG);
    s.flowKey = key;
  } else {
    window.Plotly.animate(div, { data: traces.map((t) => ({ x: t.x, y: t.y })), traces: traces.map((_, i) => i) }, ANIMATE)
      .catch(() => {});  // a newer repaint interrupts this one: expected
  }
  Object.assign(s, { flowRanges: r, flowRun: data.run, flowDrawn: true, flowPaints: (s.flowPaints || 0) + 1 });
  root.dataset.flowPaints = s.flowPaints;
}

function timed(root, key, work) {  // the milliseconds each part costs, summed, for bench/browser_live.py
  const t0 = performance.now();
  work();
  root.dataset[key] = Math.round(Number(root.dataset[key] || 0) + performance.now() - t0);
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
  paintBelow(root, now, false);  // what waited for its turn
  const states = data.states || [];
  if (!states.length) {
    if (s.painted !== -1) {  // an empty chart with the run's axes
      paint(root, { seq: -1, step: -Infinity, traces: {}, caption: data.empty_caption || "" }, data);
      s.painted = -1;
    }
    return;
  }
  const latest = states[states.length - 1].seq;
  if (s.painted >= latest) {
    // Nothing new to paint, but the axes may have changed since the last paint (Stop: the step axis
    // shrinks from the planned steps to the steps taken): draw the newest state again with them.
    if (s.drawnLayout !== undefined && s.drawnLayout !== s.layoutKey) paint(root, states[states.length - 1], data);
    return;
  }
  const pending = states.filter((st) => st.seq > s.painted);
  const ended = !GOING.includes(data.status);
  const state = nextState(pending, data.max_behind, ended || s.painted === -2);
  s.painted = state.seq;
  paint(root, state, data);
  // The diagram rides on some states only (a few a second): the newest of them up to the one painted,
  // also when a jump ahead skipped it.
  const withDiagram = pending.filter((st) => st.diagram && st.seq <= state.seq).pop();
  if (withDiagram) s.diagramNext = withDiagram.diagram;
  if (data.flow) s.flowNext = state.step;
  paintBelow(root, now, ended);
}

export function nextState(pending, maxBehind, newest) {
  // The state to paint of those waiting (oldest first): one per tick, in order; when more than maxBehind are
  // waiting, skip just the excess. States come in batches (the feed builds a run's payload a few times a
  // second), so the backlog left is what keeps each frame painted until the next batch: a jump to a few states
  // before the newest left the chart with nothing new for a tenth of a second after each batch (44 painted
  // states a second where 60 were due). ``newest``: the run has ended (Stop, say), or the chart was mounted
  // while its run was going (the student came back to the page): the newest at once.
  if (newest) return pending[pending.length - 1];
  return pending.length > maxBehind ? pending[pending.length - maxBehind] : pending[0];
}

function paintBelow(root, now, force) {
  // The diagram and the gradient flow, a few times a second: each repaint takes the newest state.
  const s = root.__studio, data = s.data;
  if (s.diagramNext && (force || now - (s.diagramAt || 0) > DIAGRAM_MS)) {
    const d = s.diagramNext;
    s.diagramNext = null;
    s.diagramAt = now;
    timed(root, "diagramMs", () => paintDiagram(root, d, data));
  }
  if (data.flow && s.flowNext !== undefined && (force || now - (s.flowAt || 0) > FLOW_MS)) {
    const step = s.flowNext;
    s.flowNext = undefined;
    s.flowAt = now;
    timed(root, "flowMs", () => paintFlow(root, step, data));
  }
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
  askRerun(root);
}

function askRerun(root) {
  // Ask for the rerun, and ask again every few seconds until a script run draws this chart: a request
  // sent while the page's websocket is still reconnecting to a restarted server never reaches it.
  const s = root.__studio, drawn = s.drawn, run = s.data.run;
  let tries = 0;
  clearInterval(s.asking);
  s.setTriggerValue("ended", run);
  s.asking = setInterval(() => {
    if (s.drawn !== drawn || ++tries > ASK_TRIES) { clearInterval(s.asking); return; }
    s.setTriggerValue("ended", run);
  }, ASK_MS);
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
  // finished run. A chart that follows a class's teacher (data.follow) keeps asking after a run ends: the
  // class relay answers with the teacher's next run whole when it starts.
  const s = root.__studio, feed = s.data.feed, relayed = !!s.data.follow;
  if (!feed || s.feed === feed) return;  // no run going, or already following this one
  s.feed = feed;
  s.failures = 0;
  const chain = s.chain = (s.chain || 0) + 1;  // one request at a time, whatever mounts and cleanups happen
  const next = () => {
    if (s.feed !== feed || s.chain !== chain) return;  // a newer run, or the script run after Stop, took over
    const run = relayed ? `&run=${encodeURIComponent(s.data.run || "")}` : "";
    const url = `${feed}${feed.includes("?") ? "&" : "?"}after=${newestSeq(s.data)}` +
      `&layout=${encodeURIComponent(s.data.layout_id || "")}${run}`;
    fetch(url, { cache: "no-store" })
      .then((r) => (r.ok ? r.json() : [404, 410].includes(r.status) ? { gone: r.status } : Promise.reject(new Error(r.statusText))))
      .then((update) => {
        if (s.feed !== feed || s.chain !== chain) return;
        s.failures = 0;
        if (relayed && !update.gone) {
          if (update.full) setData(root, Object.assign(update, { feed, follow: true }));  // the teacher's next run
          else if (!update.waiting) merge(root, update);
          tick(root);
          setTimeout(next, GOING.includes(s.data.status) ? FEED_MS : RELAY_IDLE_MS);
          return;
        }
        if (update.gone) {
          s.feed = null;
          lost(root, relayed ? "This class has ended." : update.gone === 410
            ? "This run ended with its session. Press Train to start a new one."
            : "The run was lost: the server restarted. Press Train to start again.");
          return;
        }
        merge(root, update);
        if (GOING.includes(update.status)) { setTimeout(next, FEED_MS); return; }
        s.feed = null;
        tick(root);
        askRerun(root);
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
  showSections(root, data);
}

function sendClicks(root) {
  // A payload marked draw (lesson 5's own points): a click on the plane sends its coordinates, and whether
  // Shift was held, to the page (a trigger: the page reruns once with it).
  const plot = root.querySelector(".studio-plot");
  root.dataset.draw = root.__studio.data.draw ? "1" : "";
  if (plot.__studioClicks) return;
  plot.__studioClicks = true;
  plot.addEventListener("click", (ev) => {
    const s = root.__studio, full = plot._fullLayout;
    if (!s.data || !s.data.draw || !full || !full.xaxis) return;
    const box = plot.getBoundingClientRect(), xa = full.xaxis, ya = full.yaxis;
    const px = ev.clientX - box.left - xa._offset, py = ev.clientY - box.top - ya._offset;
    if (px < 0 || py < 0 || px > xa._length || py > ya._length) return;  // on the plane only
    s.clicks = (s.clicks || 0) + 1;
    root.dataset.clicks = s.clicks;
    s.setTriggerValue("click", { x: xa.p2l(px), y: ya.p2l(py), erase: ev.shiftKey, n: s.clicks });
  });
}

function startTicks(root, paceMs) {
  // While a run is going (or states wait to be painted), a tick on every frame the browser shows: at most one
  // state per frame and up to the screen's rate (60 a second and more), where a timer paced at 20 ms capped a
  // tab at 50, and ticks between two frames paint what nobody sees. Otherwise the timer ticks alone: a loop of
  // frames on an idle chart would keep the browser drawing frames for nothing. A hidden tab gets no frames:
  // there the timer ticks (the browser slows it to about one a second), so a run that ends still asks for its
  // rerun.
  const s = root.__studio;
  const live = () => !document.hidden && s.data
    && (GOING.includes(s.data.status) || s.painted < newestSeq(s.data));
  const frame = () => {
    tick(root);
    s.frame = live() ? requestAnimationFrame(frame) : null;
  };
  s.timer = setInterval(() => {
    if (s.frame) return;  // the frames tick
    if (live()) s.frame = requestAnimationFrame(frame);
    else tick(root);
  }, paceMs);
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const root = parentElement.querySelector(".studio-live");
  if (!root || !data) return;
  const s = root.__studio || (root.__studio = { painted: -2, run: null, paints: 0, timer: null, feed: null });
  s.setTriggerValue = setTriggerValue;
  s.drawn = (s.drawn || 0) + 1;  // one more script run drew this chart (askRerun waits for one)
  if (!data.feed) s.feed = null;  // the script drew a run that is not going: stop following
  // While following, the feed is newer than what a script run drew (another widget changed, say).
  if (!(s.feed && s.feed === data.feed)) setData(root, data);
  root.querySelector(".studio-plot").style.height = `${data.height || 420}px`;
  sendClicks(root);
  loadPlotly().then(() => {
    watchWidth(root);
    tick(root);
    if (!s.timer) startTicks(root, data.pace_ms || 40);
    follow(root);
  }).catch((err) => { root.querySelector(".studio-status").textContent = String(err); });
  return () => {
    clearInterval(s.timer); cancelAnimationFrame(s.frame); clearInterval(s.asking);
    s.timer = null; s.frame = null; s.feed = null;
    if (s.resizer) { s.resizer.disconnect(); s.resizer = null; }
  };
}
