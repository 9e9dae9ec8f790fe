#!/usr/bin/env bash
# Parallel scaling on a many-core machine: synthesizes a kernel trace, then times the
# analyses (`bench analyze`, 1..N threads interleaved within each repetition) and
# print/dump at -j 1, 4, 8, 16. Usage: scripts/bench-scaling.sh BIN [OUT_DIR] [EVENTS]
set -euo pipefail
BIN=$(realpath "$1"); OUT=${2:-/tmp/scaling}; EVENTS=${3:-40000000}
mkdir -p "$OUT"; T=$(mktemp -d)
nproc; uname -r
/usr/bin/time -f "synth: %e s, %M KB" "$BIN" synth --cpus 16 --events "$EVENTS" --seed 9 -o "$T/syn" > /dev/null
du -sh "$T/syn"
"$BIN" bench analyze "$T/syn" --max-threads 16 --reps 3 | tee "$OUT/analyze.txt"
"$BIN" synth --cpus 16 --events 2000000 --seed 7 -o "$T/syn2m" > /dev/null
for j in 1 2 4 8 16; do
  for c in print dump; do
    best=999
    for r in 1 2 3; do
      s=$(date +%s.%N); "$BIN" $c "$T/syn2m" -j $j > /dev/null; e=$(date +%s.%N)
      best=$(awk -v b="$best" -v e="$e" -v s="$s" 'BEGIN { d = e - s; print (d < b) ? d : b }')
    done
    echo "$c -j $j: best of 3 $best s" | tee -a "$OUT/print.txt"
  done
done
rm -rf "$T"
