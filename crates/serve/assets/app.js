// tracecube page: an explorer (a time chart of a metric per top-N members, its top-k
// table, drill-down by clicking a row, roll-up by the breadcrumbs) above an overview
// of synchronised views (CPU per CPU and per process, I/O per process and per folder,
// event rate by name, and the latencies: system calls, wake-ups, interrupts, block
// requests), all on the one time range chosen by dragging across any chart.
// The view (metric, aggregate, level, drill path, range, top) lives in the address, so it can be
// shared and reloaded. Everything comes from the JSON API (/api/openapi.json).
"use strict";

const $ = (id) => document.getElementById(id);
const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
// A process is a pid, a folder its first directory: where drilling usually starts.
const START_LEVEL = { process: "pid", file: "d1", operation: "kind", cpu: "cpu", machine: "host" };
const NICE_NS = [1e3, 1e4, 1e5, 1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8, 2e8, 5e8, 1e9, 2e9, 5e9, 1e10, 3e10, 6e10, 3e11, 6e11, 1.8e12, 3.6e12, 2.16e13, 8.64e13];
// The overview: each view a metric by a level (summed, or the aggregate `agg`); shown
// when the cube has the metric.
const VIEWS = [
  { title: "CPU usage per CPU", metric: "cpu_time", by: "cpu:cpu" },
  { title: "CPU usage per process", metric: "cpu_time", by: "process:pid" },
  { title: "Bytes read per process", metric: "bytes_read", by: "process:pid" },
  { title: "Bytes written per folder", metric: "bytes_written", by: "file:d1" },
  { title: "Event rate by name", metric: "events", by: "operation:name" },
  { title: "System call latency per call (mean)", metric: "syscall_latency", by: "operation:name", agg: "avg" },
  { title: "Wake-up latency per process (longest)", metric: "sched_latency", by: "process:pid", agg: "max" },
  { title: "Interrupt handler time per handler", metric: "irq_time", by: "operation:name" },
  { title: "Block request latency per disk (mean)", metric: "block_latency", by: "operation:name", agg: "avg" },
];

const S = {
  info: null, metrics: [], dims: {}, metric: null, agg: "sum", dim: null, level: null,
  crumbs: [],      // [{dim, level, label}] from the roll-up root down
  range: null,     // [begin_ns, end_ns] chosen by brushing, or null: everything
  top: 5, plot: null, plots: [], paths: {}, loads: 0,
};

async function api(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of params || []) q.append(k, v);
  const r = await fetch(path + (params ? "?" + q : ""));
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

function status(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

function metricOf(name) { return S.metrics.find((m) => m.name === name); }

// ---- Units: the same in charts and tables --------------------------------------

function bytesText(v) {
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return (i ? v.toFixed(2) : v.toFixed(0)) + " " + u[i];
}

function secondsText(ns) {
  const a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
  if (a >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
  if (a >= 1e3) return (ns / 1e3).toFixed(3) + " µs";
  return ns.toFixed(0) + " ns";
}

function countText(v) { return Number.isInteger(v) ? v.toLocaleString("en-US") : v.toFixed(3); }

// The aggregate asked by query parameters `extra` (`sum` when none).
function aggOf(extra) { const a = extra.find((p) => p[0] === "agg"); return a ? a[1] : "sum"; }

// A metric's unit under aggregate `agg`: how a value over `spanNs` is charted (a rate,
// a share, or a duration as it is) and the table's text for the same value (the
// chart's unit, then the raw total).
function unitOf(metric, agg) {
  const m = metricOf(metric);
  const measure = m ? m.measure : "";
  const time = measure.endsWith("_ns");
  if (time && ["avg", "min", "max"].includes(agg)) {
    return { axis: { avg: "mean", min: "shortest", max: "longest" }[agg] + " duration", chart: (v) => v, tick: (v) => secondsText(v),
      table: (v) => secondsText(v) };
  }
  if (time && agg !== "count") {
    const axis = measure === "cpu_ns" ? "% of one CPU" : "% of the time (summed)";
    return { axis, chart: (v, span) => (100 * v) / Math.max(1, span), tick: (v) => v.toFixed(0) + " %",
      table: (v, span) => `${((100 * v) / Math.max(1, span)).toFixed(1)} % · ${secondsText(v)}` };
  }
  if (measure.startsWith("bytes") && ["avg", "min", "max"].includes(agg)) {
    return { axis: "bytes", chart: (v) => v, tick: (v) => bytesText(v), table: (v) => bytesText(v) };
  }
  if (measure.startsWith("bytes") && agg !== "count") {
    return { axis: "bytes per second", chart: (v, span) => (v * 1e9) / Math.max(1, span), tick: (v) => bytesText(v) + "/s",
      table: (v, span) => `${bytesText((v * 1e9) / Math.max(1, span))}/s · ${bytesText(v)}` };
  }
  return { axis: "per second", chart: (v, span) => (v * 1e9) / Math.max(1, span), tick: (v) => countText(Math.round(v)) + "/s",
    table: (v, span) => `${countText(Math.round((v * 1e9) / Math.max(1, span)))}/s · ${countText(v)}` };
}

// ---- Times: of day and from the first event, never "+-" --------------------------

function offsetText(ns) {
  const d = ns - S.info.origin_ns;
  return `${d < 0 ? "−" : "+"}${(Math.floor(Math.abs(d) / 1e6) / 1e3).toFixed(3)}s`;
}

function timeOfDay(ns, digits) {
  const d = new Date(Math.floor(ns / 1e6));
  const p = (x, n) => String(x).padStart(n, "0");
  const frac = digits ? "." + p(Math.floor((ns % 1e9) / 10 ** (9 - digits)), digits) : "";
  return `${p(d.getHours(), 2)}:${p(d.getMinutes(), 2)}:${p(d.getSeconds(), 2)}${frac}`;
}

function rangeText(b, e) { return `[${timeOfDay(b, 3)}, ${timeOfDay(e, 3)}) = [${offsetText(b)}, ${offsetText(e)})`; }

// ---- The view in the address -----------------------------------------------------

function saveView() {
  const q = new URLSearchParams();
  q.set("metric", S.metric);
  if (S.agg !== "sum") q.set("agg", S.agg);
  q.set("by", `${S.dim}:${S.level}`);
  q.set("top", String(S.top));
  for (const c of S.crumbs) q.append("crumb", `${c.dim}:${c.level}=${c.label}`);
  if (S.range) q.set("range", `${S.range[0]}..${S.range[1]}`);
  history.replaceState(null, "", "#" + q);
}

function loadView() {
  const q = new URLSearchParams(location.hash.slice(1));
  const metric = q.get("metric");
  if (metric && metricOf(metric)) S.metric = metric;
  const agg = q.get("agg");
  if (agg && metricOf(S.metric).aggs.includes(agg)) S.agg = agg;
  const by = q.get("by");
  if (by && by.includes(":")) [S.dim, S.level] = by.split(":");
  const top = Number(q.get("top"));
  if (top >= 1 && top <= 50) S.top = top;
  S.crumbs = q.getAll("crumb").map((c) => {
    const [dl, label] = [c.slice(0, c.indexOf("=")), c.slice(c.indexOf("=") + 1)];
    const [dim, level] = dl.split(":");
    return { dim, level, label };
  });
  const r = (q.get("range") || "").match(/^(\d+)\.\.(\d+)$/);
  S.range = r ? [Number(r[1]), Number(r[2])] : null;
}

// ---- Members and their paths -----------------------------------------------------

function filters() { return S.crumbs.map((c) => ["where", `${c.dim}:${c.level}=${c.label}`]); }

// The explorer's query parameters beside metric, level and range: its drill path and
// aggregate.
function explorerParams() { return [...filters(), ...(S.agg === "sum" ? [] : [["agg", S.agg]])]; }

// A view's query parameters beside metric, level and range: its aggregate.
function viewParams(v) { return v.agg ? [["agg", v.agg]] : []; }

function levelsOf(dim) { return S.dims[dim].levels; }

async function loadPaths(dim, level) {
  const key = dim + ":" + level;
  if (!S.paths[key]) {
    const r = await api("/api/members", [["dim", dim], ["level", level]]);
    const m = new Map();
    for (const x of r.members) if (!m.has(x.label)) m.set(x.label, x.path);
    S.paths[key] = m;
  }
  return S.paths[key];
}

// A member's path without the levels that tell nothing: one member named "other"
// (no process groups configured) is not a level worth showing.
function shownPath(dim, path) {
  const d = S.dims[dim];
  return path.filter((label, i) => !(label === "other" && d.members[i + 1] === 1));
}

// ---- Selectors -------------------------------------------------------------------

function fillSelectors() {
  const sel = $("metric");
  sel.innerHTML = "";
  for (const m of S.metrics.filter((m) => !m.name.includes("."))) sel.add(new Option(`${m.name} (${m.measure})`, m.name));
  sel.value = S.metric;
  fillAggs();
  fillLevels();
  $("top").value = String(S.top);
}

// The aggregates the metric answers (sum; count and avg with counts; min and max with
// extremes).
function fillAggs() {
  const sel = $("agg");
  sel.innerHTML = "";
  const aggs = metricOf(S.metric).aggs;
  for (const a of aggs) sel.add(new Option(a, a));
  if (!aggs.includes(S.agg)) S.agg = "sum";
  sel.value = S.agg;
}

function fillLevels() {
  const sel = $("level");
  sel.innerHTML = "";
  const m = metricOf(S.metric);
  m.by.forEach((leaf, i) => {
    const dim = m.dims[i];
    const levels = levelsOf(dim);
    const last = levels.indexOf(leaf.split(":")[1]);
    for (let l = 1; l <= last; l++) sel.add(new Option(`${dim}:${levels[l]}`, `${dim}:${levels[l]}`));
  });
  if (!S.dim || !m.dims.includes(S.dim) || !levelsOf(S.dim).includes(S.level)) {
    S.dim = m.dims[0];
    const want = START_LEVEL[S.dim];
    const leaf = m.by[0].split(":")[1];
    const levels = levelsOf(S.dim);
    S.level = want && levels.indexOf(want) <= levels.indexOf(leaf) ? want : leaf;
  }
  sel.value = `${S.dim}:${S.level}`;
}

// The finest level `metric` keeps for a dimension.
function leafOf(metric, dim) {
  const m = metricOf(metric);
  return m.by[m.dims.indexOf(dim)].split(":")[1];
}

function bucketNs() {
  const span = Math.max(1, S.info.now_ns - S.info.data_begin_ns);
  const g0 = S.info.levels.length ? S.info.levels[0].granularity_ns : 1;
  return NICE_NS.find((n) => n >= span / 120 && n >= g0) || NICE_NS[NICE_NS.length - 1];
}

function durationText(ns) {
  for (const [u, m] of [["d", 864e11], ["h", 36e11], ["min", 6e10], ["s", 1e9], ["ms", 1e6], ["us", 1e3]]) {
    if (ns >= m && ns % m === 0) return `${ns / m}${u}`;
  }
  return `${ns}ns`;
}

// ---- Charts ----------------------------------------------------------------------

// Draws `metric` per member of `by` (the top `top` of the whole trace) over time in
// `box`; returns the uPlot. Axis labels are times of day, spaced so that they never
// overlap (`data-ticks-fit` says whether they fit, for the browser test).
async function drawSeries(box, metric, by, extra, top, height) {
  const [dim, level] = by.split(":");
  const head = await api("/api/query", [["metric", metric], ["by", by], ["top", top], ...extra]);
  const groups = head.windows[0].rows.map((r) => r.group[0]);
  box.dataset.empty = String(!groups.length);
  if (!groups.length) {
    box.innerHTML = "";
    const note = document.createElement("p");
    note.className = "empty";
    note.textContent = `Nothing measured: the trace has no ${metricOf(metric).measure} updates (no such events).`;
    box.append(note);
    return null;
  }
  const every = bucketNs();
  const params = [["metric", metric], ["by", by], ["every", `${every}ns`], ["range", `${S.info.data_begin_ns}..${S.info.now_ns}`], ...extra];
  if (groups.length && groups.every((g) => !g.includes(","))) params.push(["where", `${by}=${groups.join(",")}`]);
  const series = await api("/api/query", params);
  const unit = unitOf(metric, aggOf(extra));
  const xs = series.windows.map((w) => w.begin_ns / 1e9);
  const ys = groups.map((g) => series.windows.map((w) => {
    const r = w.rows.find((r) => r.group[0] === g);
    return unit.chart(r ? r.value : 0, w.end_ns - w.begin_ns);
  }));
  const paths = await loadPaths(dim, level);
  const label = (g) => { const p = shownPath(dim, paths.get(g) || [g]); return p.length > 1 ? `${p[p.length - 2]} › ${g}` : g; };
  let fits = true;
  const opts = {
    width: Math.max(300, box.parentElement.clientWidth - 20), height,
    cursor: { drag: { x: true, y: false, setScale: false } },
    scales: { x: { time: false } },
    legend: { show: true },
    axes: [
      { label: "time of day", space: 110,
        values: (u, splits) => {
          const texts = splits.map((s) => timeOfDay(s * 1e9, 3));
          // Whether the widest label fits between two ticks.
          if (splits.length > 1) {
            u.ctx.font = "12px system-ui";
            const widest = Math.max(...texts.map((t) => u.ctx.measureText(t).width));
            const gap = Math.abs(u.valToPos(splits[1], "x") - u.valToPos(splits[0], "x"));
            fits = fits && widest < gap;
            box.dataset.ticksFit = String(fits);
          }
          return texts;
        } },
      { label: unit.axis, size: 90, values: (u, splits) => splits.map(unit.tick) },
    ],
    series: [{ label: "time", value: (u, v) => (v == null ? "" : timeOfDay(v * 1e9, 3)) },
      ...groups.map((g, i) => ({ label: label(g), stroke: PALETTE[i % PALETTE.length], width: 1.5, value: (u, v) => (v == null ? "" : unit.tick(v)) }))],
    hooks: { setSelect: [onSelect], ready: [showRange] },
  };
  box.innerHTML = "";
  const plot = new uPlot(opts, [xs, ...ys], box);
  box.dataset.points = String(xs.length * groups.length);
  box.dataset.series = String(groups.length);
  return plot;
}

// Keeps showing the chosen range on every chart.
function showRange(u) {
  if (!S.range) { u.setSelect({ left: 0, width: 0, top: 0, height: 0 }, false); return; }
  const [a, b] = S.range.map((t) => u.valToPos(t / 1e9, "x"));
  u.setSelect({ left: a, width: Math.max(1, b - a), top: 0, height: u.over.clientHeight }, false);
}

function onSelect(u) {
  if (u.select.width < 2) return;
  const a = u.posToVal(u.select.left, "x");
  const b = u.posToVal(u.select.left + u.select.width, "x");
  S.range = [Math.max(0, Math.round(a * 1e9)), Math.max(0, Math.round(b * 1e9))];
  run(drawTables);
}

// ---- Tables ----------------------------------------------------------------------

// Fills `table` with the top rows of `metric` by `by` over the chosen range; rows
// drill down with `onRow(label)` where the level allows. Returns the window answered.
async function fillTable(table, metric, by, extra, top, onRow) {
  const [dim, level] = by.split(":");
  const params = [["metric", metric], ["by", by], ["top", top], ...extra];
  if (S.range) params.push(["range", `${S.range[0]}..${S.range[1]}`]);
  const r = await api("/api/query", params);
  const w = r.windows[0];
  const unit = unitOf(metric, aggOf(extra));
  const paths = await loadPaths(dim, level);
  const canDrill = onRow && levelsOf(dim).indexOf(level) < levelsOf(dim).indexOf(leafOf(metric, dim));
  const body = table.tBodies[0];
  body.innerHTML = "";
  w.rows.forEach((row, i) => {
    const tr = body.insertRow();
    const g = row.group[0];
    tr.dataset.member = g;
    tr.dataset.value = String(row.value);
    tr.insertCell().textContent = String(i + 1);
    tr.insertCell().textContent = shownPath(dim, paths.get(g) || [g]).join(" › ");
    tr.insertCell().textContent = unit.table(row.value, w.end_ns - w.begin_ns);
    if (canDrill) {
      tr.className = "drill";
      tr.title = "drill down";
      tr.onclick = () => onRow(g);
    }
  });
  if (!w.rows.length) body.insertRow().insertCell().textContent = "(nothing in this range)";
  table.dataset.level = by;
  table.dataset.asked = S.range ? `${S.range[0]}..${S.range[1]}` : "";
  return w;
}

async function drawTables() {
  saveView();
  const by = `${S.dim}:${S.level}`;
  const w = await fillTable($("topk"), S.metric, by, explorerParams(), S.top, drill);
  const rangeEl = $("range");
  rangeEl.textContent = `${S.range ? "Chosen range" : "Whole trace"}: ${rangeText(w.begin_ns, w.end_ns)}` +
    (S.range ? "" : ` · first event ${timeOfDay(S.info.origin_ns, 9)}`);
  rangeEl.dataset.begin = String(w.begin_ns);
  rangeEl.dataset.end = String(w.end_ns);
  rangeEl.dataset.asked = S.range ? `${S.range[0]}..${S.range[1]}` : "";
  if (S.range) {
    const reset = document.createElement("button");
    reset.textContent = "whole trace";
    reset.onclick = () => { S.range = null; run(drawTables); };
    rangeEl.append(" ", reset);
  }
  $("table-title").textContent = `Top ${S.top} ${by} by ${S.metric}` + (S.agg === "sum" ? "" : ` (${S.agg})`);
  $("group-head").textContent = by;
  for (const p of S.plots) showRange(p);
  if (S.plot) showRange(S.plot);
  for (const panel of document.querySelectorAll("#overview .panel")) {
    const v = VIEWS[Number(panel.dataset.view)];
    await fillTable(panel.querySelector("table.topk"), v.metric, v.by, viewParams(v), 5, (g) => openInExplorer(v, g));
  }
}

// ---- Explorer: drill-down and roll-up --------------------------------------------

function drill(label) {
  const levels = levelsOf(S.dim);
  S.crumbs.push({ dim: S.dim, level: S.level, label });
  S.level = levels[levels.indexOf(S.level) + 1];
  run(drawAll);
}

// A row of an overview view opens in the explorer, drilled into.
function openInExplorer(view, label) {
  S.metric = view.metric;
  S.agg = view.agg || "sum";
  [S.dim, S.level] = view.by.split(":");
  S.crumbs = [];
  fillSelectors();
  drill(label);
  window.scrollTo(0, 0);
}

function drawCrumbs() {
  const nav = $("crumbs");
  nav.innerHTML = "";
  const add = (text, i) => {
    const a = document.createElement("a");
    a.href = "#";
    a.textContent = text;
    a.dataset.index = String(i);
    a.onclick = (e) => { e.preventDefault(); rollUp(i); };
    nav.append(a);
  };
  add(`all ${S.dim}`, 0);
  S.crumbs.forEach((c, i) => { nav.append(" › "); add(`${c.level} ${c.label}`, i + 1); });
}

// Back to crumb i (0: the starting level, unfiltered; k: just after drilling into
// crumb k): its level is the one the next crumb was taken at.
function rollUp(i) {
  if (i >= S.crumbs.length) return;
  S.level = S.crumbs[i].level;
  S.crumbs = S.crumbs.slice(0, i);
  run(drawAll);
}

// ---- The overview ----------------------------------------------------------------

function buildOverview() {
  const box = $("overview");
  box.innerHTML = "";
  VIEWS.forEach((v, i) => {
    const m = metricOf(v.metric);
    const dim = v.by.split(":")[0];
    if (!m || !m.dims.includes(dim) || !levelsOf(dim).includes(v.by.split(":")[1])) return;
    const panel = document.createElement("section");
    panel.className = "panel";
    panel.dataset.view = String(i);
    panel.dataset.metric = v.metric;
    panel.dataset.by = v.by;
    panel.dataset.agg = v.agg || "";
    panel.innerHTML = `<h3></h3><div class="chart"></div><table class="topk"><thead><tr><th>#</th><th></th><th>value</th></tr></thead><tbody></tbody></table>`;
    panel.querySelector("h3").textContent = v.title;
    panel.querySelector("table.topk th:nth-child(2)").textContent = v.by;
    box.append(panel);
  });
}

async function drawOverview() {
  for (const p of S.plots) p.destroy();
  S.plots = [];
  for (const panel of document.querySelectorAll("#overview .panel")) {
    const v = VIEWS[Number(panel.dataset.view)];
    const plot = await drawSeries(panel.querySelector(".chart"), v.metric, v.by, viewParams(v), 5, 180);
    if (plot) S.plots.push(plot);
  }
}

async function drawAll() {
  $("level").value = `${S.dim}:${S.level}`;
  drawCrumbs();
  const by = `${S.dim}:${S.level}`;
  if (S.plot) S.plot.destroy();
  S.plot = await drawSeries($("chart"), S.metric, by, explorerParams(), S.top, 320);
  await drawOverview();
  await drawTables();
}

// Runs one refresh, reporting errors on the page; `data-loads` counts the finished
// ones (the browser test waits on it).
async function run(f) {
  document.body.dataset.state = "loading";
  status("loading…");
  try {
    await f();
    status(S.info.live ? `live · ${S.info.updates} updates` : `${S.info.updates} updates`);
  } catch (e) {
    status(String(e.message || e), true);
  }
  S.loads++;
  document.body.dataset.loads = String(S.loads);
  document.body.dataset.state = "ready";
}

async function refreshLive() {
  try {
    const info = await api("/api/info");
    if (info.updates !== S.info.updates) {
      S.info = info;
      S.paths = {};
      await run(drawAll);
    }
  } catch (e) {
    status(String(e.message || e), true);
  }
}

// The SQL box (shown when the server was given traces): POST /api/sql, the answer
// as a table. `data-sql-runs` counts the finished queries (the browser test waits on it).
async function runSql() {
  const box = $("sql-status");
  box.className = "";
  box.textContent = "running…";
  const head = $("sql-result").tHead, body = $("sql-result").tBodies[0];
  head.innerHTML = ""; body.innerHTML = "";
  try {
    const r = await fetch("/api/sql", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ query: $("sql-query").value }) });
    const answer = await r.json();
    if (!r.ok) throw new Error(answer.error || r.statusText);
    const tr = head.insertRow();
    for (const c of answer.columns) { const th = document.createElement("th"); th.textContent = c; tr.appendChild(th); }
    for (const row of answer.rows) {
      const r2 = body.insertRow();
      for (const c of answer.columns) r2.insertCell().textContent = row[c] === undefined || row[c] === null ? "" : typeof row[c] === "object" ? JSON.stringify(row[c]) : String(row[c]);
    }
    box.textContent = `${answer.rows.length.toLocaleString("en-US")} rows` + (answer.truncated ? " (cut: the answer holds no more)" : "");
  } catch (e) {
    box.textContent = String(e.message || e);
    box.className = "error";
  }
  document.body.dataset.sqlRuns = String(Number(document.body.dataset.sqlRuns || 0) + 1);
}

function resize() {
  if (S.plot) S.plot.setSize({ width: Math.max(300, $("chart-box").clientWidth - 20), height: 320 });
  for (const p of S.plots) p.setSize({ width: Math.max(300, p.root.parentElement.parentElement.clientWidth - 20), height: 180 });
}

async function main() {
  await run(async () => {
    S.info = await api("/api/info");
    S.metrics = (await api("/api/metrics")).metrics;
    for (const d of (await api("/api/dimensions")).dimensions) S.dims[d.name] = d;
    const names = S.metrics.map((m) => m.name);
    S.metric = names.includes("cpu_time") ? "cpu_time" : names[0];
    loadView();
    fillSelectors();
    buildOverview();
    await drawAll();
  });
  $("metric").onchange = () => { S.metric = $("metric").value; S.dim = null; S.crumbs = []; fillAggs(); fillLevels(); run(drawAll); };
  $("agg").onchange = () => { S.agg = $("agg").value; run(drawAll); };
  $("level").onchange = () => { const [d, l] = $("level").value.split(":"); S.dim = d; S.level = l; S.crumbs = []; run(drawAll); };
  $("top").onchange = () => { S.top = Math.min(50, Math.max(1, Number($("top").value) || 5)); run(drawAll); };
  window.addEventListener("resize", resize);
  if (S.info && S.info.sql) {
    $("sql-box").hidden = false;
    $("sql-run").onclick = runSql;
    $("sql-query").onkeydown = (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); runSql(); } };
  }
  if (document.body.dataset.live === "true") setInterval(refreshLive, 2000);
}

main();
