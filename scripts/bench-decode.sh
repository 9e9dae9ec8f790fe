#!/usr/bin/env bash
# Side-by-side decoding benchmark (issue 2, acceptance 5): counts every event of each
# TRACE with tracecube (one thread), and decodes it with `babeltrace2 TRACE -o dummy`
# and `babeltrace -o dummy TRACE`, in one hyperfine run per trace; also times
# `tracecube count --scan-only` (reading the bytes from memory: the physical limit).
# Usage: scripts/bench-decode.sh TRACE... (results: /tmp/bench-decode-*.md and stdout)
set -euo pipefail
BIN=${TRACECUBE:-target/release/tracecube}
for t in "$@"; do
  name=$(basename "$t")
  cmds=(-n "tracecube scan-only" "$BIN count --scan-only $t"
        -n "tracecube count" "$BIN count $t"
        -n "tracecube count --merged" "$BIN count --merged $t")
  command -v babeltrace2 >/dev/null && cmds+=(-n "babeltrace2 -o dummy" "babeltrace2 $t -o dummy")
  command -v babeltrace >/dev/null && cmds+=(-n "babeltrace -o dummy" "babeltrace -o dummy $t")
  echo "== $t ($($BIN count $t | head -1))"
  hyperfine -N --warmup 1 --min-runs 3 --max-runs 5 --export-markdown "/tmp/bench-decode-$name.md" "${cmds[@]}"
done
