#!/usr/bin/env bash
# SQL side by side (issue 51, BENCHMARKS.md "SQL"): on one trace, in one hyperfine run
# per question, `tracecube sql` against the command that answers the same question:
#   SELECT count(*) FROM events                  vs  babeltrace2 TRACE -o dummy (asked: >= 10x faster)
#   SELECT name, count(*) FROM events GROUP BY name  vs  tracecube count --by-name (asked: within 3x)
# then the peak RSS (/usr/bin/time -v) of both queries and of a full-width scan.
# Usage: [TRACECUBE=target/release/tracecube] [JOBS=0] scripts/bench-sql.sh TRACE
# (a release build: the ci profile builds DataFusion unoptimised)
# (a synthetic trace: tracecube synth --cpus 4 --events 10000000 --seed 9 -o /tmp/synbig)
set -euo pipefail
BIN=${TRACECUBE:-target/release/tracecube}
J=${JOBS:-0}
t=${1:?usage: scripts/bench-sql.sh TRACE}
name=$(basename "$t")
echo "== $t ($($BIN count "$t" | head -1)), $(du -sh "$t" | cut -f1), -j $J, $(nproc) cores; $(uptime)"
q1="SELECT count(*) FROM events"
q2="SELECT name, count(*) FROM events GROUP BY name"
cmds=(-n "sql count(*)" "$BIN sql -j $J $t -e '$q1'")
command -v babeltrace2 >/dev/null && cmds+=(-n "babeltrace2 -o dummy" "babeltrace2 $t -o dummy")
hyperfine --warmup 1 --min-runs 3 --max-runs 10 --export-markdown "/tmp/bench-sql-count-$name.md" "${cmds[@]}"
hyperfine --warmup 1 --min-runs 5 --max-runs 20 --export-markdown "/tmp/bench-sql-byname-$name.md" \
  -n "sql GROUP BY name" "$BIN sql -j $J $t -e '$q2'" \
  -n "count --by-name" "$BIN count --by-name $t"
for q in "$q1" "$q2" "SELECT max(length(fields)) FROM events" "SELECT * FROM events" ; do
  /usr/bin/time -f "peak RSS %M KB, %e s: $q" "$BIN" sql -j "$J" "$t" -e "$q" --format csv >/dev/null
done
