#!/usr/bin/env bash
# Compares `tracecube print` with `babeltrace2` (2.0.4), whole outputs, on every trace
# under a directory (default ../shared/traces): prints SAME, DIFF (with the count of
# differing lines and the first difference) or BT2-FAILS per trace. TZ is set to UTC so
# that both show the same time of day. Usage: scripts/compare-print-bt2.sh [DIR] [TRACECUBE]
set -u
dir=${1:-../shared/traces}
bin=${2:-${CARGO_TARGET_DIR:-target}/ci/tracecube}
export TZ=UTC
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
same=0; diff=0; skip=0
for t in $(find "$dir" -name metadata -not -path '*/invalid/*' -not -path '*/metadata-only/*' -printf '%h\n' | sort); do
  # The trace directory: above the stream classes' directory for LTTng layouts.
  root=$t
  if ! timeout 60 babeltrace2 "$root" > "$tmp/bt2" 2>/dev/null; then echo "BT2-FAILS $root"; skip=$((skip+1)); continue; fi
  timeout 60 "$bin" print "$root" > "$tmp/tc" 2>/dev/null
  if cmp -s "$tmp/bt2" "$tmp/tc"; then same=$((same+1)); else
    n=$(diff "$tmp/bt2" "$tmp/tc" | grep -c '^<')
    echo "DIFF $root ($n lines)"; diff "$tmp/bt2" "$tmp/tc" | head -4 | cut -c1-400
    diff=$((diff+1))
  fi
done
echo "same: $same, different: $diff, babeltrace2 fails: $skip"
