#!/usr/bin/env bash
# A fleet on a Ballista cluster as executors are added (BENCHMARKS.md "A fleet on a
# cluster"): eight synthetic hosts, a scheduler and 1, 2, 4, 8 executors of two task
# slots each on 127.0.0.1; each query best of 3 (after one warm-up) on the cluster
# and locally, then the fleet cube built locally and on the largest cluster.
# Usage: scripts/bench-cluster.sh BIN [OUT_DIR] ["EXECUTOR COUNTS"]
set -euo pipefail
BIN=$(realpath "$1"); OUT=${2:-/tmp/cluster}; COUNTS=${3:-1 2 4 8}
mkdir -p "$OUT"; T=$(mktemp -d)
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done; wait 2> /dev/null || true; pids=(); }
trap 'stop; rm -rf "$T"' EXIT
best() {
  local n=$1; shift; local b=999
  "$@" > /dev/null
  for _ in $(seq "$n"); do
    local s e; s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N)
    b=$(awk -v b="$b" -v e="$e" -v s="$s" 'BEGIN { d = e - s; print (d < b) ? d : b }')
  done
  echo "$b"
}
for h in 1 2 3 4 5 6 7 8; do
  "$BIN" synth --events 250000 --cpus 4 --background 30 --seed $h --hostname host$h -o "$T/fleet/host$h" > /dev/null
done
echo "fleet: $(du -sh "$T/fleet" | cut -f1)"
Q1="SELECT comm, sum(cpu_ns) AS cpu_ns FROM cpu_usage GROUP BY comm ORDER BY cpu_ns DESC, comm LIMIT 10"
Q2="SELECT trace, name, count(*) AS n FROM ev_sched_switch GROUP BY trace, name ORDER BY trace, name"
Q3="SELECT trace, name, count(*) AS n FROM events GROUP BY trace, name ORDER BY trace, name"
t=(); for h in 1 2 3 4 5 6 7 8; do t+=("$T/fleet/host$h"); done
echo "local: cpu_usage top 10 $(best 3 "$BIN" sql "${t[@]}" -e "$Q1") s, ev_sched_switch $(best 3 "$BIN" sql "${t[@]}" -e "$Q2") s, events by name $(best 3 "$BIN" sql "${t[@]}" -e "$Q3") s" | tee -a "$OUT/cluster.txt"
last=
for n in $COUNTS; do
  "$BIN" cluster scheduler --bind 127.0.0.1:50050 2> "$T/sched.log" & pids+=($!)
  sleep 1
  for k in $(seq "$n"); do
    port=$((50100 + 2 * k)); mkdir -p "$T/work$n-$k"
    "$BIN" cluster executor --scheduler 127.0.0.1:50050 --bind 127.0.0.1:$port --concurrent-tasks 2 \
      --heartbeat 1 --work-dir "$T/work$n-$k" 2> "$T/exec$k.log" & pids+=($!)
  done
  sleep 3
  u=df://127.0.0.1:50050
  echo "$n executors: cpu_usage top 10 $(best 3 "$BIN" sql --cluster $u "${t[@]}" -e "$Q1") s, ev_sched_switch $(best 3 "$BIN" sql --cluster $u "${t[@]}" -e "$Q2") s, events by name $(best 3 "$BIN" sql --cluster $u "${t[@]}" -e "$Q3") s" | tee -a "$OUT/cluster.txt"
  last=$n
  if [ "$n" = "${COUNTS##* }" ]; then
    s=$(date +%s.%N); "$BIN" cube build --cluster $u "$T/fleet" -o "$T/cube-cluster" > /dev/null 2>&1
    echo "fleet cube on $n executors: $(awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { print e - s }') s" | tee -a "$OUT/cluster.txt"
  fi
  stop; sleep 1
done
s=$(date +%s.%N); "$BIN" cube build "$T/fleet" -o "$T/cube-local" > /dev/null 2>&1
echo "fleet cube local: $(awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { print e - s }') s" | tee -a "$OUT/cluster.txt"
# (the catalog's count of updates depends on where slices are cut: compare answers)
if [ -n "$last" ] && ! cmp -s <("$BIN" query "$T/cube-local" --metric events --by machine) \
  <("$BIN" query "$T/cube-cluster" --metric events --by machine); then
  echo "the two cubes answer differently" | tee -a "$OUT/cluster.txt"
fi
