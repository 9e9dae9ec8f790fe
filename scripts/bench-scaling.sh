#!/usr/bin/env bash
# Parallel scaling on a many-core machine (BENCHMARKS.md "Parallel scaling"): synthesizes
# a 16-CPU kernel trace, then times
#   - every analysis (`bench analyze`, 1..16 threads interleaved within each repetition),
#   - SQL (`count(*)`, `GROUP BY name`) at -j 1, 4, 8, 16, and `count --by-name`,
#   - `cube build` at -j 1, 4, 16 with its peak resident memory,
#   - print and dump of a 2 M-event trace at -j 1, 2, 4, 8, 16 (best of 3).
# Usage: scripts/bench-scaling.sh BIN [OUT_DIR] [EVENTS]
set -euo pipefail
BIN=$(realpath "$1"); OUT=${2:-/tmp/scaling}; EVENTS=${3:-40000000}
mkdir -p "$OUT"; T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
nproc; uname -r

# best N CMD...: the shortest wall time of N runs, in seconds (output discarded).
best() {
  local n=$1; shift; local b=999
  for _ in $(seq "$n"); do
    local s e; s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N)
    b=$(awk -v b="$b" -v e="$e" -v s="$s" 'BEGIN { d = e - s; print (d < b) ? d : b }')
  done
  echo "$b"
}
# peak CMD...: wall seconds and the peak resident memory (MB) of one run.
peak() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
s = time.time()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{time.time() - s:.2f} s, peak RSS {rss:.0f} MB")
PY
}

s=$(date +%s.%N); "$BIN" synth --cpus 16 --events "$EVENTS" --seed 9 -o "$T/syn" > /dev/null
echo "synth: $(awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { print e - s }') s, $(du -sh "$T/syn" | cut -f1)"
"$BIN" bench analyze "$T/syn" --max-threads 16 --reps 3 \
  -a count -a cpu -a io -a syscall -a irq -a sched -a block | tee "$OUT/analyze.txt"

for j in 1 4 8 16; do
  echo "-j $j: sql count(*) $(best 2 "$BIN" sql -j $j "$T/syn" -e 'SELECT count(*) FROM events') s," \
    "sql GROUP BY name $(best 2 "$BIN" sql -j $j "$T/syn" -e 'SELECT name, count(*) FROM events GROUP BY name') s" \
    | tee -a "$OUT/sql.txt"
done
echo "count --by-name (all cores): $(best 2 "$BIN" count --by-name "$T/syn") s" | tee -a "$OUT/sql.txt"
for j in 1 4 16; do
  echo "cube build -j $j: $(peak "$BIN" cube build "$T/syn" -o "$T/cube$j" -j $j)" | tee -a "$OUT/cube.txt"
done

"$BIN" synth --cpus 16 --events 2000000 --seed 7 -o "$T/syn2m" > /dev/null
for j in 1 2 4 8 16; do
  for c in print dump; do
    echo "$c -j $j: best of 3 $(best 3 "$BIN" $c "$T/syn2m" -j $j) s" | tee -a "$OUT/print.txt"
  done
done
