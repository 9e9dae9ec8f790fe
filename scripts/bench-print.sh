#!/usr/bin/env bash
# `tracecube print` and `tracecube dump` against `babeltrace2 TRACE > /dev/null`, side
# by side in one hyperfine run per trace, with the ratios (babeltrace2's mean time over
# each command's). Usage:
#   scripts/bench-print.sh [TRACECUBE] [JOBS] [TRACE...]
# Defaults: target/release/tracecube, all cores for the -j rows, /tmp/syn1m (make it
# with `tracecube synth -o /tmp/syn1m --cpus 4 --events 1000000 --seed 7`: kernel
# layout) and ../shared/traces/ust-memory (UST layout, 328 k events).
set -eu
bin=${1:-${CARGO_TARGET_DIR:-target}/release/tracecube}
jobs=${2:-$(nproc)}
shift $(( $# > 2 ? 2 : $# ))
traces=("$@")
[ ${#traces[@]} -gt 0 ] || traces=(/tmp/syn1m ../shared/traces/ust-memory)
export TZ=UTC
for t in "${traces[@]}"; do
  json=$(mktemp)
  hyperfine -N --warmup 1 --runs ${RUNS:-5} --export-json "$json" \
    -n babeltrace2 "babeltrace2 $t" \
    -n "print -j 1" "$bin print $t" \
    -n "print -j $jobs" "$bin print -j $jobs $t" \
    -n "dump -j 1" "$bin dump $t" \
    -n "dump -j $jobs" "$bin dump -j $jobs $t" \
    --output null > /dev/null
  python3 - "$json" "$t" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
bt = r["babeltrace2"]["mean"]
print(f"{sys.argv[2]}:")
for name, x in r.items():
    print(f"  {name:<14} {x['mean']:8.3f} s ± {x['stddev']:.3f}   {bt / x['mean']:6.1f}x babeltrace2")
PY
  rm -f "$json"
done
