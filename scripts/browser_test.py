#!/usr/bin/env python3
"""Drives the tracecube page in headless Chromium through the DevTools protocol.

Usage: browser_test.py URL SCREENSHOT.png [CHROMIUM]
       browser_test.py --live URL [CHROMIUM]

Loads the page served by `tracecube serve`, checks that the chart has data, that
every overview view (CPU per CPU and per process, I/O per process and per folder,
event rate, the four latency views) has a chart and the API's top 5 (or says that
the trace has nothing of it), that time-axis labels do not overlap,
that the page uses the whole width, that tables show the chart's unit, and that the
range reads as times of day and offsets; drags across the chart and checks that the
explorer's and every view's tables become the API's answer for the chosen range,
clicks a process and checks that its threads (the API's answer) appear, reloads the
address and finds the same view, rolls back up by the breadcrumb, and saves a
screenshot. Prints one line per
check and exits non-zero on the first failure. Needs `websocket-client` (pip).

With --live (a server started with live: true): loads the page, prints
"ok: live page loaded", then waits for the page to refresh on its own after the
caller has added data to the cube, and checks the table is the API's new answer.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import base64
import urllib.request

import websocket  # websocket-client

TIMEOUT_S = 60


class Browser:
    """Headless Chromium with one page, spoken to over the DevTools WebSocket."""

    def __init__(self, chromium):
        self.profile = tempfile.mkdtemp(prefix="tracecube-chromium-")
        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--no-default-browser-check", "--remote-debugging-port=0",
             "--remote-debugging-address=127.0.0.1", f"--user-data-dir={self.profile}",
             "--window-size=1400,1000", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = None
        deadline = time.time() + TIMEOUT_S
        while port is None and time.time() < deadline:
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode}")
            m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if m:
                port = int(m.group(1))
        if port is None:
            raise RuntimeError("chromium did not open its DevTools port")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            pages = [t for t in json.load(r) if t["type"] == "page"]
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=TIMEOUT_S, suppress_origin=True)
        self.next_id = 0

    def send(self, method, **params):
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def eval(self, expr):
        r = self.send("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expr}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait_for(self, expr, what):
        deadline = time.time() + TIMEOUT_S
        while time.time() < deadline:
            try:
                if self.eval(expr):
                    return
            except RuntimeError:
                pass  # the page is not there yet (e.g. no body during navigation)
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}: {expr}")

    def mouse(self, kind, x, y, buttons=1):
        self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", buttons=buttons, clickCount=1)

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            shutil.rmtree(self.profile, ignore_errors=True)


LOADS = "Number(document.body.dataset.loads || 0)"
TABLE = "[...document.querySelectorAll('#topk tbody tr[data-member]')].map(r => [r.dataset.member, Number(r.dataset.value)])"
PANELS = """[...document.querySelectorAll('#overview .panel')].map(p => ({
  metric: p.dataset.metric, by: p.dataset.by, agg: p.dataset.agg, points: Number(p.querySelector('.chart').dataset.points || 0),
  empty: p.querySelector('.chart').dataset.empty === 'true', note: (p.querySelector('.chart .empty') || {}).textContent || '',
  cells: [...p.querySelectorAll('table.topk tbody tr[data-member] td:last-child')].map(c => c.textContent),
  asked: p.querySelector('table.topk').dataset.asked,
  rows: [...p.querySelectorAll('table.topk tbody tr[data-member]')].map(r => [r.dataset.member, Number(r.dataset.value)])}))"""


def check_overview(b, asked):
    """Every overview view has a chart with data and the API's top 5 for the range."""
    panels = b.eval(PANELS)
    check(len(panels) >= 9, f"overview of {len(panels)} views: {[(p['metric'], p['by']) for p in panels]}")
    for p in panels:
        agg = f"&agg={p['agg']}" if p["agg"] else ""
        want = api(b, f"/api/query?metric={p['metric']}&by={p['by']}&top=5{agg}" + (f"&range={asked}" if asked else ""))
        whole = api(b, f"/api/query?metric={p['metric']}&by={p['by']}&top=5{agg}")
        if p["empty"]:
            check(rows_of(whole) == [] and p["rows"] == [] and "Nothing measured" in p["note"],
                  f"view {p['metric']}: the trace has none of it, and the view says so ({p['note']})")
            continue
        check(p["points"] > 0 and p["asked"] == (asked or "") and p["rows"] == rows_of(want),
              f"view {p['metric']} {p['agg'] or 'sum'} by {p['by']}: chart has data, table is the API's answer for {asked or 'the whole trace'}")
        if p["agg"] in ("avg", "max"):
            check(all(re.fullmatch(r"[\d.]+ (s|ms|µs|ns)", c) for c in p["cells"]), f"view {p['metric']} {p['agg']}: durations in the table: {p['cells'][:2]}")
    latency = [p for p in panels if p["metric"] in ("syscall_latency", "sched_latency", "irq_time", "block_latency")]
    check(len(latency) == 4 and any(not p["empty"] for p in latency),
          f"the latency views are there, with data: {[(p['metric'], not p['empty']) for p in latency]}")


def api(b, path):
    """The API's answer, fetched by the page itself (same origin)."""
    return b.eval(f"fetch({json.dumps(path)}).then(r => r.json())")


def rows_of(answer):
    return [[r["group"][0], r["value"]] for r in answer["windows"][0]["rows"]]


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print(f"ok: {what}")


def run(url, shot, chromium):
    b = Browser(chromium)
    try:
        b.send("Page.enable")
        b.send("Page.navigate", url=url)
        b.wait_for(f"{LOADS} >= 1 && document.body.dataset.state === 'ready'", "the first load")
        err = b.eval("document.getElementById('status').className")
        text = b.eval("document.getElementById('status').textContent")
        check(err != "error", f"page loaded without error ({text})")
        points = int(b.eval("document.getElementById('chart').dataset.points || 0"))
        series = int(b.eval("document.getElementById('chart').dataset.series || 0"))
        check(points > 0 and series > 0, f"chart has data: {series} series, {points} points")
        check(b.eval("!!document.querySelector('#chart canvas')"), "chart drawn on a canvas")
        level = b.eval("document.getElementById('topk').dataset.level")
        check(level == "process:pid", f"table starts by process ({level})")
        before = b.eval(TABLE)
        whole = api(b, "/api/query?metric=cpu_time&by=process:pid&top=5")
        check(before == rows_of(whole), f"whole-trace table is the API's answer ({len(before)} rows)")
        check_overview(b, None)
        fit = b.eval("[...document.querySelectorAll('#chart, #overview .chart:not([data-empty=true])')].map(c => c.dataset.ticksFit)")
        check(all(f == "true" for f in fit), f"time-axis labels never overlap on {len(fit)} charts")
        width = b.eval("[document.getElementById('overview').getBoundingClientRect().width, window.innerWidth]")
        check(width[0] >= 0.95 * width[1], f"the views use the whole width ({width[0]:.0f} of {width[1]} px)")
        cells = b.eval("[...document.querySelectorAll('#topk tbody tr[data-member] td:last-child')].map(c => c.textContent)")
        check(all(c.endswith(" s") or c.endswith(" ms") or c.endswith(" µs") or c.endswith(" ns") for c in cells) and all("%" in c for c in cells),
              f"CPU table in the chart's unit (% of one CPU) and time: {cells[:2]}")
        dims = api(b, "/api/dimensions")["dimensions"]
        process = next(d for d in dims if d["name"] == "process")
        names = b.eval("[...document.querySelectorAll('tbody tr[data-member] td:nth-child(2)')].map(c => c.textContent)")
        if process["members"][1] == 1:
            check(not any(n.startswith("other") for n in names), f"no 'other' level without groups: {names[:3]}")
        text = b.eval("document.getElementById('range').textContent")
        check(re.search(r"\d\d:\d\d:\d\d\.\d{3}", text) and re.search(r"[+−]\d+\.\d{3}s", text) and "+-" not in text and "+−" not in text,
              f"range as times of day and offsets: {text}")

        # Brush: drag across the middle third of the plot area.
        rect = b.eval("(() => { const r = document.querySelector('#chart .u-over').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()")
        x0, y0 = rect[0] + rect[2] * 0.35, rect[1] + rect[3] * 0.5
        x1 = rect[0] + rect[2] * 0.55
        loads = b.eval(LOADS)
        b.mouse("mouseMoved", x0, y0, 0)
        b.mouse("mousePressed", x0, y0)
        for k in range(1, 11):
            b.mouse("mouseMoved", x0 + (x1 - x0) * k / 10, y0)
        b.mouse("mouseReleased", x1, y0, 0)
        b.wait_for(f"{LOADS} > {loads} && document.body.dataset.state === 'ready'", "the table after brushing")
        asked = b.eval("document.getElementById('range').dataset.asked")
        check(bool(re.fullmatch(r"\d+\.\.\d+", asked or "")), f"brushed range {asked}")
        after = b.eval(TABLE)
        ranged = api(b, f"/api/query?metric=cpu_time&by=process:pid&top=5&range={asked}")
        check(after == rows_of(ranged), f"brushed table is the API's answer for {asked}: {after}")
        check(after != before, "brushing changed the table")
        check_overview(b, asked)

        # Drill down: click the first process; its threads appear.
        pid = after[0][0]
        loads = b.eval(LOADS)
        pos = b.eval("(() => { const r = document.querySelector('#topk tbody tr[data-member]').getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        b.mouse("mousePressed", pos[0], pos[1])
        b.mouse("mouseReleased", pos[0], pos[1], 0)
        b.wait_for(f"{LOADS} > {loads} && document.body.dataset.state === 'ready'", "the drill-down")
        level = b.eval("document.getElementById('topk').dataset.level")
        check(level == "process:tid", f"drilled down to threads ({level})")
        threads = b.eval(TABLE)
        members = api(b, f"/api/members?dim=process&level=tid&within=pid={pid}")
        tids = {m["label"] for m in members["members"]}
        want = api(b, f"/api/query?metric=cpu_time&by=process:tid&where=process:pid={pid}&top=5&range={asked}")
        check(len(threads) > 0 and all(t in tids for t, _ in threads), f"threads of process {pid} appear: {[t for t, _ in threads]}")
        check(threads == rows_of(want), "thread table is the API's answer")
        crumbs = b.eval("[...document.querySelectorAll('#crumbs a')].map(a => a.textContent)")
        check(len(crumbs) == 2 and crumbs[1].endswith(pid), f"breadcrumbs {crumbs}")
        b.send("Page.captureScreenshot", format="png")  # warm-up: fonts and canvas settled
        data = b.send("Page.captureScreenshot", format="png")["data"]
        os.makedirs(os.path.dirname(os.path.abspath(shot)), exist_ok=True)
        with open(shot, "wb") as f:
            f.write(base64.b64decode(data))
        check(os.path.getsize(shot) > 10_000, f"screenshot saved to {shot}")

        # The view is in the address: reloading it shows the same drill-down and range.
        href = b.eval("location.href")
        check("crumb=" in href and f"range={asked}" in href, f"view kept in the address: {href}")
        b.send("Page.navigate", url="about:blank")
        b.wait_for("location.href === 'about:blank'", "leaving the page")
        b.send("Page.navigate", url=href)
        b.wait_for(f"{LOADS} >= 1 && document.body.dataset.state === 'ready' && document.querySelectorAll('#topk tbody tr[data-member]').length > 0", "the reloaded view")
        check(b.eval(TABLE) == threads and b.eval("document.getElementById('topk').dataset.level") == "process:tid"
              and b.eval("document.getElementById('range').dataset.asked") == asked, "the reloaded address shows the same view")

        # Roll up by the first breadcrumb.
        loads = b.eval(LOADS)
        b.eval("document.querySelector('#crumbs a').click()")
        b.wait_for(f"{LOADS} > {loads} && document.body.dataset.state === 'ready'", "the roll-up")
        check(b.eval("document.getElementById('topk').dataset.level") == "process:pid", "rolled back up to processes")

        # The SQL box (the server was given a trace): its table is POST /api/sql's answer.
        check(b.eval("!document.getElementById('sql-box').hidden"), "the SQL box is shown")
        q = "SELECT name, count(*) AS n FROM events GROUP BY name ORDER BY n DESC, name LIMIT 5"
        b.eval(f"document.getElementById('sql-query').value = {json.dumps(q)}")
        b.eval("document.getElementById('sql-run').click()")
        b.wait_for("Number(document.body.dataset.sqlRuns || 0) >= 1", "the SQL answer")
        got = b.eval("[...document.querySelectorAll('#sql-result tbody tr')].map(r => [...r.cells].map(c => c.textContent))")
        heads = b.eval("[...document.querySelectorAll('#sql-result thead th')].map(c => c.textContent)")
        body = json.dumps(json.dumps({"query": q}))
        want = b.eval(f"fetch('/api/sql', {{method: 'POST', headers: {{'Content-Type': 'application/json'}}, body: {body}}}).then(r => r.json())")
        check(heads == want["columns"] == ["name", "n"], f"SQL columns {heads}")
        check(len(got) == 5 and got == [[r["name"], str(r["n"])] for r in want["rows"]], f"SQL table is the API's answer ({got[:2]}...)")
        b.eval("document.getElementById('sql-query').value = 'SELEC 1'")
        b.eval("document.getElementById('sql-run').click()")
        b.wait_for("Number(document.body.dataset.sqlRuns || 0) >= 2", "the SQL error")
        err = b.eval("document.getElementById('sql-status').textContent")
        check(b.eval("document.getElementById('sql-status').className") == "error" and "SELEC" in err, f"a bad query shows its error ({err})")
    finally:
        b.close()


def run_live(url, chromium):
    b = Browser(chromium)
    try:
        b.send("Page.enable")
        b.send("Page.navigate", url=url)
        b.wait_for(f"{LOADS} >= 1 && document.body.dataset.state === 'ready'", "the first load")
        check(b.eval("document.body.dataset.live") == "true", "page in live mode")
        status = b.eval("document.getElementById('status').textContent")
        before = b.eval(TABLE)
        check(len(before) > 0, f"live page loaded: {status}, table {before}")
        print("ok: live page loaded", flush=True)
        # The caller adds data now; the page polls /api/info and redraws.
        b.wait_for(f"document.getElementById('status').textContent !== {json.dumps(status)} && document.body.dataset.state === 'ready'", "the page to refresh on its own")
        after = b.eval(TABLE)
        want = api(b, "/api/query?metric=cpu_time&by=process:pid&top=5")
        status = b.eval("document.getElementById('status').textContent")
        check(after == rows_of(want) and after != before, f"live page refreshed: {status}, table {after}")
    finally:
        b.close()


def main():
    live = sys.argv[1:2] == ["--live"]
    args = sys.argv[2:] if live else sys.argv[1:]
    if len(args) < (1 if live else 2):
        sys.exit(__doc__)
    chromium = args[-1] if len(args) > (1 if live else 2) else (shutil.which("chromium") or "/usr/bin/chromium")
    try:
        if live:
            run_live(args[0], chromium)
        else:
            run(args[0], args[1], chromium)
    except (AssertionError, RuntimeError) as e:
        print(f"FAILED: {e}")
        sys.exit(1)
    print("browser test passed")


if __name__ == "__main__":
    main()
