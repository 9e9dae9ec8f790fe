#!/bin/bash
# Two tracecube binaries must give the same results: every analysis, output format and
# thread count on every shared trace (the invalid ones too: the same errors), then
# ranges, tids, partitions and chunk sizes on a few. Usage:
#   scripts/compare-binaries.sh OLD NEW [TRACE...]
# (extra TRACEs, such as /tmp/syn2m /tmp/bg2m /tmp/syn200k, join the first pass).
# Prints each difference and "N runs, D diffs" per pass; exits 1 on any difference.
set -u
OLD=${1:?OLD binary}; NEW=${2:?NEW binary}; shift 2
SHARED=$(cd "$(dirname "$0")/../../shared/traces" 2>/dev/null && pwd) || { echo "../shared absent"; exit 2; }
same() { cmp -s <("$OLD" "$@" 2>&1) <("$NEW" "$@" 2>&1); }
bad=0
n=0; d=0
for t in "$@" "$SHARED"/*/ "$SHARED"/invalid/*/; do
  for a in count cpu io; do for f in text json lami; do for j in 1 2 3; do
    n=$((n+1)); same analyze "$t" -a $a --format $f -j $j || { d=$((d+1)); echo "DIFF $t $a $f -j $j"; }
  done; done; done
done
echo "formats: $n runs, $d diffs"; [ $d = 0 ] || bad=1
n=0; d=0
for t in many-threads lttng-modules-2.0.0-ref bug446190-arm scimark2-all-events-cpu3; do
  for a in count cpu io; do
    for r in "" "--begin +1ms" "--end +5ms" "--begin +2ms --end +40ms" "--tid 1" "--tid 1000"; do
      for p in "-j 1" "-j 2 --partition stream" "-j 3 --partition time" "-j 2 --chunk-size 4096" "-j 3 --chunk-size 64K"; do
        # (Word splitting of $r and $p is wanted.)
        # shellcheck disable=SC2086
        n=$((n+1)); same analyze "$SHARED/$t" -a $a $r $p --format json || { d=$((d+1)); echo "DIFF $t $a $r $p"; }
      done
    done
  done
done
echo "ranges: $n runs, $d diffs"; [ $d = 0 ] || bad=1
exit $bad
