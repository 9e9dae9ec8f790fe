#!/usr/bin/env bash
# Compares `tracecube dump` with Babeltrace's canonical dumps for every trace that has
# one in ../shared/expected/dumps, and checks that every trace in
# ../shared/traces/invalid gets a clean error. Prints a summary; exits non-zero when
# a valid trace does not match or an invalid one is not rejected cleanly.
# Usage: scripts/conformance.sh [TRACECUBE_BIN] [SHARED_DIR]
set -u
BIN=${1:-target/release/tracecube}
SHARED=${2:-../shared}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
KNOWN=$(dirname "$0")/known-differences.txt
pass=0; fail=0; known=0; failed=()
while IFS= read -r exp; do
  rel=${exp#"$SHARED/expected/dumps/"}
  name=${rel%.jsonl.gz}; name=${name%.bt1}
  trace="$SHARED/traces/$name"
  case "$name" in tc-ctf2-*|small/tc-ctf2-*) ;; esac
  [ -d "$trace" ] || { echo "SKIP $name (no trace)"; continue; }
  if timeout 120 "$BIN" dump "$trace" > "$OUT/dump.jsonl" 2> "$OUT/err.txt" \
     && python3 "$SHARED/oracle/compare.py" "$exp" "$OUT/dump.jsonl" > "$OUT/cmp.txt" 2>&1; then
    pass=$((pass+1))
  elif grep -q "^$name	" "$KNOWN" 2>/dev/null; then
    known=$((known+1))
    echo "KNOWN $name: $(grep "^$name	" "$KNOWN" | cut -f2 | cut -c1-160)"
  else
    fail=$((fail+1)); failed+=("$name")
    echo "FAIL $name: $(head -c 300 "$OUT/err.txt") $(head -4 "$OUT/cmp.txt" | cut -c1-300)"
  fi
done < <(find "$SHARED/expected/dumps" -name '*.jsonl.gz' | sort)
# CTF 2 traces whose data streams are those of a CTF 1.8 twin: same expected dump.
for pair in tc-ctf2-7.0-succeed1:bt-succeed1 tc-ctf2-7.0-trace-with-index:bt-trace-with-index tc-ctf2-7.0-lttng-crash:bt-lttng-crash; do
  t=${pair%%:*}; twin=${pair##*:}
  [ -d "$SHARED/traces/small/$t" ] || continue
  if timeout 60 "$BIN" dump "$SHARED/traces/small/$t" > "$OUT/dump.jsonl" 2> "$OUT/err.txt" \
     && python3 "$SHARED/oracle/compare.py" "$SHARED/expected/dumps/small/$twin.jsonl.gz" "$OUT/dump.jsonl" > "$OUT/cmp.txt" 2>&1; then
    pass=$((pass+1))
  else
    fail=$((fail+1)); echo "FAIL small/$t (CTF 2 twin of $twin): $(head -c 300 "$OUT/err.txt") $(head -4 "$OUT/cmp.txt" | cut -c1-300)"
  fi
done
# A synthesized kernel trace against Babeltrace 2's own canonical dump of it.
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import bt2' 2>/dev/null; then
  "$BIN" synth --cpus 3 --events 20000 --seed 5 -o "$OUT/syn" > /dev/null
  /usr/bin/python3 "$SHARED/oracle/bt2_canonical.py" "$OUT/syn/kernel" > "$OUT/syn-exp.jsonl"
  "$BIN" dump "$OUT/syn" > "$OUT/syn-act.jsonl"
  if python3 "$SHARED/oracle/compare.py" "$OUT/syn-exp.jsonl" "$OUT/syn-act.jsonl" > "$OUT/cmp.txt"; then
    pass=$((pass+1))
  else
    fail=$((fail+1)); echo "FAIL synthesized trace: $(head -4 "$OUT/cmp.txt")"
  fi
fi
echo "dumps: $pass identical to Babeltrace, $fail differ, $known known differences (scripts/known-differences.txt)"
ipass=0; ifail=0
for d in "$SHARED"/traces/invalid/*/; do
  n=$(basename "$d")
  /usr/bin/time -f "%e %M" -o "$OUT/time.txt" timeout 10 bash -c "ulimit -v 1048576; '$BIN' dump '$d' > '$OUT/inv.jsonl' 2> '$OUT/inv.err'"
  rc=$?
  lines=$(grep -c 'error' "$OUT/inv.err")
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 101 ] && [ "$rc" -ne 124 ] && [ "$rc" -lt 128 ] && [ "$lines" -ge 1 ] && ! grep -q panicked "$OUT/inv.err"; then
    ipass=$((ipass+1))
  else
    ifail=$((ifail+1)); echo "INVALID-FAIL $n rc=$rc $(head -c 200 "$OUT/inv.err")"
  fi
done
echo "invalid traces: $ipass rejected cleanly, $ifail not"
[ "$fail" -eq 0 ] && [ "$ifail" -eq 0 ]
