#!/bin/bash
# Side-by-side timings of two tracecube binaries, Babeltrace 2 and (with PEERS=1)
# lttng-analyses on the analyses, as in BENCHMARKS.md "Parallel analyses". Usage:
#   OLD=/path/to/old/tracecube NEW=target/release/tracecube [PEERS=1] scripts/bench-analyses-vs.sh
# Needs /tmp/synbig (synth --cpus 4 --events 10000000 --seed 9), /tmp/syn2m (--events 2000000)
# /tmp/bg2m (--events 2000000 --background 70: 70 % irq/timer/kmem/wake-up events, as real
# kernel traces have) and /tmp/mt/kernel -> ../shared/traces/many-threads. TWO_CPU=1 also
# times cpu and io (and with PEERS=1 the peers) on /tmp/syn2c and /tmp/bg2c, the same
# generator on 2 CPUs (synth --cpus 2 --events 2000000 --seed 9 [--background 70]).
set -u
OLD=${OLD:?set OLD}; NEW=${NEW:-target/release/tracecube}
# The 2-CPU traces, with TWO_CPU=1.
two=""; [ "${TWO_CPU:-0}" = 1 ] && two="syn2c bg2c"
# Each hyperfine run also prints its medians (min and max in brackets), from its JSON.
J=$(mktemp -d)
medians() {
  python3 -c 'import json,sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("  median %9.2f ms  [%.2f, %.2f]  %s" % (r["median"]*1e3, r["min"]*1e3, r["max"]*1e3, r["command"]))' "$1"
}
# FRESH=1: first drops the traces from the page cache and has NEW read each once, so
# that every run below finds the page cache as tracecube's own first read leaves it (in
# 2 MiB folios where the kernel can: BENCHMARKS.md, session 33).
if [ "${FRESH:-0}" = 1 ]; then
  # (Word splitting of $two is wanted.)
  # shellcheck disable=SC2086
  for t in synbig syn2m bg2m $two; do
    t=/tmp/$t
    find "$t/" -type f -exec dd if={} iflag=nocache count=0 status=none \;
    "$NEW" analyze "$t" -a count -j 1 >/dev/null
  done
  grep FileHugePages /proc/meminfo
fi
uptime
if [ "${PEERS:-0}" = 1 ]; then
  /usr/bin/time -f "lttng-cputop-mi syn2m: %e s, %M KB" lttng-cputop-mi /tmp/syn2m/kernel >/dev/null
  /usr/bin/time -f "lttng-iousagetop-mi syn2m: %e s, %M KB" lttng-iousagetop-mi /tmp/syn2m/kernel >/dev/null
  /usr/bin/time -f "lttng-cputop-mi bg2m: %e s, %M KB" lttng-cputop-mi /tmp/bg2m/kernel >/dev/null
  /usr/bin/time -f "lttng-iousagetop-mi bg2m: %e s, %M KB" lttng-iousagetop-mi /tmp/bg2m/kernel >/dev/null
  hyperfine -N -r 3 "lttng-cputop-mi /tmp/mt/kernel" "lttng-iousagetop-mi /tmp/mt/kernel" 2>&1 | grep -E "Bench|Time"
fi
# (count's last line: the default, every core.)
hyperfine -N -w 1 -r 5 --export-json $J/1.json "babeltrace2 /tmp/synbig -o dummy" "$OLD analyze /tmp/synbig -a count -j 1" "$NEW analyze /tmp/synbig -a count -j 1" "$NEW analyze /tmp/synbig -a count" 2>&1 | grep -E "Bench|Time"
medians $J/1.json
hyperfine -N -w 1 -r 10 --export-json $J/2.json "$OLD count /tmp/synbig" "$NEW count /tmp/synbig" \
  "$OLD analyze /tmp/synbig -a cpu -j 1" "$NEW analyze /tmp/synbig -a cpu -j 1" "$OLD analyze /tmp/synbig -a io -j 1" "$NEW analyze /tmp/synbig -a io -j 1" 2>&1 | grep -E "Bench|Time"
medians $J/2.json
hyperfine -N -w 2 -r 20 --export-json $J/3.json "$OLD analyze /tmp/syn2m -a cpu -j 1" "$NEW analyze /tmp/syn2m -a cpu -j 1" "$OLD analyze /tmp/syn2m -a io -j 1" "$NEW analyze /tmp/syn2m -a io -j 1" \
  "$OLD analyze /tmp/bg2m -a cpu -j 1" "$NEW analyze /tmp/bg2m -a cpu -j 1" "$OLD analyze /tmp/bg2m -a io -j 1" "$NEW analyze /tmp/bg2m -a io -j 1" \
  "$OLD analyze /tmp/mt/kernel -a cpu -j 1" "$NEW analyze /tmp/mt/kernel -a cpu -j 1" "$OLD analyze /tmp/mt/kernel -a io -j 1" "$NEW analyze /tmp/mt/kernel -a io -j 1" 2>&1 | grep -E "Bench|Time"
medians $J/3.json
if [ -n "$two" ]; then
  if [ "${PEERS:-0}" = 1 ]; then
    for t in $two; do
      /usr/bin/time -f "lttng-cputop-mi $t: %e s, %M KB" lttng-cputop-mi /tmp/$t/kernel >/dev/null
      /usr/bin/time -f "lttng-iousagetop-mi $t: %e s, %M KB" lttng-iousagetop-mi /tmp/$t/kernel >/dev/null
    done
  fi
  hyperfine -N -w 3 -r 20 --export-json $J/4.json "$NEW analyze /tmp/syn2c -a cpu -j 1" "$NEW analyze /tmp/syn2c -a io -j 1" "$NEW analyze /tmp/bg2c -a cpu -j 1" "$NEW analyze /tmp/bg2c -a io -j 1" 2>&1 | grep -E "Bench|Time"
  medians $J/4.json
fi
uptime
rm -r "$J"
