// tracecube page: a time chart of a metric per top-N members, a top-k table of the
// chosen time range (drag across the chart), drill-down by clicking a row, roll-up
// by the breadcrumbs. Everything comes from the JSON API (/api/openapi.json).
"use strict";

const $ = (id) => document.getElementById(id);
const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
// A process is a pid, a folder its first directory: where drilling usually starts.
const START_LEVEL = { process: "pid", file: "d1", operation: "kind", cpu: "cpu", machine: "host" };
const NICE_NS = [1e3, 1e4, 1e5, 1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8, 2e8, 5e8, 1e9, 2e9, 5e9, 1e10, 3e10, 6e10, 3e11, 6e11, 1.8e12, 3.6e12, 2.16e13, 8.64e13];

const S = {
  info: null, metrics: [], dims: {}, metric: null, dim: null, level: null,
  crumbs: [],      // [{dim, level, label}] from the roll-up root down
  range: null,     // [begin_ns, end_ns] chosen by brushing, or null: everything
  top: 5, plot: null, paths: {}, loads: 0, updates: -1,
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

function metricInfo() { return S.metrics.find((m) => m.name === S.metric); }

function fmt(v) {
  const m = metricInfo();
  const measure = m ? m.measure : "";
  if (measure === "cpu_ns") return v >= 1e9 ? (v / 1e9).toFixed(3) + " s" : (v / 1e6).toFixed(3) + " ms";
  if (measure.startsWith("bytes")) {
    const u = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (i ? v.toFixed(2) : v.toFixed(0)) + " " + u[i];
  }
  return Number.isInteger(v) ? String(v) : v.toFixed(3);
}

// The `where` parameters of the breadcrumbs.
function filters() { return S.crumbs.map((c) => ["where", `${c.dim}:${c.level}=${c.label}`]); }

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

function fillSelectors() {
  const sel = $("metric");
  sel.innerHTML = "";
  for (const m of S.metrics.filter((m) => !m.name.includes("."))) sel.add(new Option(`${m.name} (${m.measure})`, m.name));
  sel.value = S.metric;
  fillLevels();
}

function fillLevels() {
  const sel = $("level");
  sel.innerHTML = "";
  const m = metricInfo();
  m.by.forEach((leaf, i) => {
    const dim = m.dims[i];
    const levels = levelsOf(dim);
    const last = levels.indexOf(leaf.split(":")[1]);
    for (let l = 1; l <= last; l++) sel.add(new Option(`${dim}:${levels[l]}`, `${dim}:${levels[l]}`));
  });
  if (!S.dim || !m.dims.includes(S.dim)) {
    S.dim = m.dims[0];
    const want = START_LEVEL[S.dim];
    const leaf = m.by[0].split(":")[1];
    const levels = levelsOf(S.dim);
    S.level = want && levels.indexOf(want) <= levels.indexOf(leaf) ? want : leaf;
  }
  sel.value = `${S.dim}:${S.level}`;
}

// The finest level the metric keeps for a dimension.
function leafOf(dim) {
  const m = metricInfo();
  return m.by[m.dims.indexOf(dim)].split(":")[1];
}

function bucketNs() {
  const span = Math.max(1, S.info.now_ns - S.info.data_begin_ns);
  const g0 = S.info.levels.length ? S.info.levels[0].granularity_ns : 1;
  return NICE_NS.find((n) => n >= span / 120 && n >= g0) || NICE_NS[NICE_NS.length - 1];
}

function durationParam(ns) { return `${Math.round(ns)}ns`; }

function durationText(ns) {
  for (const [u, m] of [["d", 864e11], ["h", 36e11], ["min", 6e10], ["s", 1e9], ["ms", 1e6], ["us", 1e3]]) {
    if (ns >= m && ns % m === 0) return `${ns / m}${u}`;
  }
  return `${ns}ns`;
}

async function drawChart() {
  const by = `${S.dim}:${S.level}`;
  const top = await api("/api/query", [["metric", S.metric], ["by", by], ["top", S.top], ...filters()]);
  const groups = top.windows[0].rows.map((r) => r.group[0]);
  const every = bucketNs();
  const params = [["metric", S.metric], ["by", by], ["every", durationParam(every)], ["range", `${S.info.data_begin_ns}..${S.info.now_ns}`], ...filters()];
  if (groups.length && groups.every((g) => !g.includes(","))) params.push(["where", `${by}=${groups.join(",")}`]);
  const series = groups.length ? await api("/api/query", params) : { windows: [] };
  const origin = S.info.origin_ns;
  const xs = series.windows.map((w) => (w.begin_ns - origin) / 1e9);
  const cpu = metricInfo().measure === "cpu_ns";
  const ys = groups.map((g) => series.windows.map((w) => {
    const r = w.rows.find((r) => r.group[0] === g);
    const v = r ? r.value : 0;
    return cpu ? (100 * v) / Math.max(1, w.end_ns - w.begin_ns) : v;
  }));
  const paths = await loadPaths(S.dim, S.level);
  const label = (g) => { const p = paths.get(g); return p && p.length > 1 ? `${p[p.length - 2]} › ${g}` : g; };
  const opts = {
    width: Math.max(400, $("chart-box").clientWidth - 10), height: 320,
    title: `${S.metric} per ${by} (top ${groups.length}, ${durationText(every)} windows)`,
    cursor: { drag: { x: true, y: false, setScale: false } },
    scales: { x: { time: false } },
    axes: [{ label: "seconds from the first event" }, { label: cpu ? "% of one CPU" : metricInfo().measure, size: 70 }],
    series: [{ label: "t (s)" }, ...groups.map((g, i) => ({ label: label(g), stroke: PALETTE[i % PALETTE.length], width: 1.5 }))],
    hooks: { setSelect: [onSelect], ready: [showRange] },
  };
  if (S.plot) S.plot.destroy();
  $("chart").innerHTML = "";
  S.plot = new uPlot(opts, [xs, ...ys], $("chart"));
  $("chart").dataset.points = String(xs.length * groups.length);
  $("chart").dataset.series = String(groups.length);
}

// Keeps showing the brushed range across redraws (drill-down, roll-up, live).
function showRange(u) {
  if (!S.range) return;
  const origin = S.info.origin_ns;
  const [a, b] = S.range.map((t) => u.valToPos((t - origin) / 1e9, "x"));
  u.setSelect({ left: a, width: Math.max(1, b - a), top: 0, height: u.over.clientHeight }, false);
}

function onSelect(u) {
  if (u.select.width < 2) return;
  const a = u.posToVal(u.select.left, "x");
  const b = u.posToVal(u.select.left + u.select.width, "x");
  const origin = S.info.origin_ns;
  S.range = [Math.max(0, Math.round(origin + a * 1e9)), Math.max(0, Math.round(origin + b * 1e9))];
  run(drawTable);
}

async function drawTable() {
  const by = `${S.dim}:${S.level}`;
  const params = [["metric", S.metric], ["by", by], ["top", S.top], ...filters()];
  if (S.range) params.push(["range", `${S.range[0]}..${S.range[1]}`]);
  const r = await api("/api/query", params);
  const w = r.windows[0];
  const origin = S.info.origin_ns;
  const t = (ns) => `+${((ns - origin) / 1e9).toFixed(3)}s`;
  const rangeEl = $("range");
  rangeEl.textContent = `${S.range ? "chosen range" : "whole trace"}: [${t(w.begin_ns)}, ${t(w.end_ns)}) answered as [${w.begin_ns}, ${w.end_ns}) ns`;
  rangeEl.dataset.begin = String(w.begin_ns);
  rangeEl.dataset.end = String(w.end_ns);
  rangeEl.dataset.asked = S.range ? `${S.range[0]}..${S.range[1]}` : "";
  if (S.range) {
    const reset = document.createElement("button");
    reset.textContent = "whole trace";
    reset.onclick = () => { S.range = null; run(drawTable); };
    rangeEl.append(" ", reset);
  }
  $("table-title").textContent = `Top ${S.top} ${by} by ${S.metric}`;
  $("group-head").textContent = by;
  const paths = await loadPaths(S.dim, S.level);
  const canDrill = levelsOf(S.dim).indexOf(S.level) < levelsOf(S.dim).indexOf(leafOf(S.dim));
  const body = $("topk").tBodies[0];
  body.innerHTML = "";
  w.rows.forEach((row, i) => {
    const tr = body.insertRow();
    const g = row.group[0];
    tr.dataset.member = g;
    tr.dataset.value = String(row.value);
    tr.insertCell().textContent = String(i + 1);
    const p = paths.get(g);
    const cell = tr.insertCell();
    cell.textContent = p ? p.join(" › ") : g;
    tr.insertCell().textContent = fmt(row.value);
    if (canDrill) {
      tr.className = "drill";
      tr.title = "drill down";
      tr.onclick = () => drill(g);
    }
  });
  if (!w.rows.length) body.insertRow().insertCell().textContent = "(nothing in this range)";
  $("topk").dataset.level = by;
}

function drill(label) {
  const levels = levelsOf(S.dim);
  S.crumbs.push({ dim: S.dim, level: S.level, label });
  S.level = levels[levels.indexOf(S.level) + 1];
  run(drawAll);
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

async function drawAll() {
  $("level").value = `${S.dim}:${S.level}`;
  drawCrumbs();
  await drawChart();
  await drawTable();
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

async function main() {
  await run(async () => {
    S.info = await api("/api/info");
    S.metrics = (await api("/api/metrics")).metrics;
    for (const d of (await api("/api/dimensions")).dimensions) S.dims[d.name] = d;
    const names = S.metrics.map((m) => m.name);
    S.metric = names.includes("cpu_time") ? "cpu_time" : names[0];
    fillSelectors();
    await drawAll();
  });
  $("metric").onchange = () => { S.metric = $("metric").value; S.dim = null; S.crumbs = []; fillLevels(); run(drawAll); };
  $("level").onchange = () => { const [d, l] = $("level").value.split(":"); S.dim = d; S.level = l; S.crumbs = []; run(drawAll); };
  $("top").onchange = () => { S.top = Math.min(50, Math.max(1, Number($("top").value) || 5)); run(drawAll); };
  window.addEventListener("resize", () => S.plot && S.plot.setSize({ width: Math.max(400, $("chart-box").clientWidth - 10), height: 320 }));
  if (document.body.dataset.live === "true") setInterval(refreshLive, 2000);
}

main();
