#!/bin/bash
# Side-by-side timings of two tracecube binaries (and Babeltrace 2) on the analyses,
# as in BENCHMARKS.md "Session 3". Usage:
#   OLD=/path/to/old/tracecube NEW=target/release/tracecube scripts/bench-analyses-vs-session2.sh
# Needs /tmp/synbig (synth --cpus 4 --events 10000000 --seed 9), /tmp/syn2m (--events 2000000)
# and /tmp/mt/kernel -> ../shared/traces/many-threads.
set -u
OLD=${OLD:?set OLD}; NEW=${NEW:-target/release/tracecube}
uptime
hyperfine -N --runs 3 "babeltrace2 /tmp/synbig -o dummy" 2>&1 | grep -E "Bench|Time"
hyperfine -N -w 1 -r 10 "$OLD analyze /tmp/synbig -a count -j 1" "$NEW analyze /tmp/synbig -a count -j 1" "$OLD count /tmp/synbig" "$NEW count /tmp/synbig" \
  "$OLD analyze /tmp/synbig -a cpu -j 1" "$NEW analyze /tmp/synbig -a cpu -j 1" "$OLD analyze /tmp/synbig -a io -j 1" "$NEW analyze /tmp/synbig -a io -j 1" 2>&1 | grep -E "Bench|Time"
hyperfine -N -w 2 -r 20 "$OLD analyze /tmp/syn2m -a cpu -j 1" "$NEW analyze /tmp/syn2m -a cpu -j 1" "$OLD analyze /tmp/syn2m -a io -j 1" "$NEW analyze /tmp/syn2m -a io -j 1" \
  "$OLD analyze /tmp/mt/kernel -a cpu -j 1" "$NEW analyze /tmp/mt/kernel -a cpu -j 1" "$OLD analyze /tmp/mt/kernel -a io -j 1" "$NEW analyze /tmp/mt/kernel -a io -j 1" 2>&1 | grep -E "Bench|Time"
uptime
