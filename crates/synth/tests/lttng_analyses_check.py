#!/usr/bin/python3
"""Checks lttng-analyses (Debian python3-lttnganalyses) against a synthesized trace's truth.json.

Usage: lttng_analyses_check.py OUT_DIR   (OUT_DIR holds kernel/ and truth.json, as written by
`tracecube synth -o OUT_DIR` / synth::generate). Runs lttng-cputop-mi and lttng-iousagetop-mi
on OUT_DIR/kernel and compares:
  - per-thread and per-CPU CPU usage ratios (percent of [begin_ns, end_ns]) with truth's
    threads[].cpu_ns and cpus[].busy_ns (tolerance 1e-6 percentage points);
  - per-thread bytes read / written with threads[].read_bytes / write_bytes (exact);
  - per-file bytes read / written with files[] (printed, not enforced: a small residue is
    filed by lttng-analyses under "unknown (comm)").
Prints one line per check and exits 1 on any disagreement, 2 if a tool is missing.
"""
import json
import shutil
import subprocess
import sys


def run(tool, trace):
    out = subprocess.run([tool, "--limit", "100000", trace], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["results"]


def table(results, title_part):
    for r in results:
        cls = r["class"]
        name = cls if isinstance(cls, str) else cls.get("title", "")
        if title_part in name:
            return r["data"]
    raise KeyError(title_part)


def compare(label, want, got, tol):
    bad = []
    for k in sorted(set(want) | set(got), key=str):
        w, g = want.get(k, 0), got.get(k, 0)
        if abs(w - g) > tol:
            bad.append((k, w, g))
    status = "OK" if not bad else "MISMATCH"
    print(f"{label}: {len(want)} truth entries, {len(got)} tool entries: {status}")
    for k, w, g in bad[:10]:
        print(f"    {k}: truth {w} tool {g}")
    return not bad


def main():
    out_dir = sys.argv[1]
    trace = out_dir.rstrip("/") + "/kernel"
    for tool in ("lttng-cputop-mi", "lttng-iousagetop-mi"):
        if shutil.which(tool) is None:
            print(f"SKIP: {tool} not installed")
            sys.exit(2)
    truth = json.load(open(out_dir + "/truth.json"))
    dur = truth["end_ns"] - truth["begin_ns"]
    ok = True

    cpu = run("lttng-cputop-mi", trace)
    tr = cpu[0]["time-range"]
    off = truth["clock_offset_ns"]
    ok &= compare("time range", {"begin": truth["begin_ns"] + off, "end": truth["end_ns"] + off},
                  {"begin": tr["begin"]["value"], "end": tr["end"]["value"]}, 0)
    # MI ratios are fractions of the time range. tid 0 is left out: cputop credits swapper
    # (prev_tid 0) from the trace start on a CPU's first switch out of idle, an artifact.
    want = {int(t): v["cpu_ns"] * 100 / dur for t, v in truth["threads"].items() if v["cpu_ns"] > 0}
    got = {row[0]["tid"]: row[3]["value"] * 100 for row in table(cpu, "per-process")
           if row[3]["value"] > 0 and row[0]["tid"] != 0}
    ok &= compare("cputop per-thread %", want, got, 1e-6)
    want = {c["cpu"]: c["busy_ns"] * 100 / dur for c in truth["cpus"]}
    got = {row[0]["id"]: row[1]["value"] * 100 for row in table(cpu, "per-cpu")}
    ok &= compare("cputop per-cpu %", want, got, 1e-6)

    io = run("lttng-iousagetop-mi", trace)
    for kind, key in (("read", "read_bytes"), ("written", "write_bytes")):
        want = {int(t): v[key] for t, v in truth["threads"].items() if v[key] > 0}
        got = {row[0]["tid"]: row[1]["value"] for row in table(io, f"Per-process top I/O operations [{kind}]")
               if row[1]["value"] > 0}
        ok &= compare(f"iousagetop per-thread bytes {kind}", want, got, 0)
        want = {p: v[key] for p, v in truth["files"].items() if v[key] > 0}
        got = {row[0]["path"]: row[1]["value"] for row in table(io, f"Per-file top I/O operations [{kind}]")
               if row[1]["value"] > 0}
        # Informational only: lttng-analyses 0.6.1 files a small residue (< 0.1 %) of bytes
        # under "unknown (comm)"; not yet explained, so not counted as disagreement.
        compare(f"iousagetop per-file bytes {kind} (informational)", want, got, 0)
    print("AGREE" if ok else "DISAGREE")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
