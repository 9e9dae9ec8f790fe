#!/usr/bin/env bash
# Throughput and lag of `tracecube live` against a real lttng-relayd (BENCHMARKS.md).
# Usage: scripts/bench-live.sh [TRACECUBE_BIN] [EVENTS_PER_THREAD_MILLIONS]
# Needs root (or a user session daemon), lttng-tools, liblttng-ust-dev, cc, babeltrace2.
# Starts its own lttng-relayd (and lttng-sessiond when none runs) and stops them by pid.
set -euo pipefail
BIN=$(realpath "${1:-target/release/tracecube}")
M=${2:-3}
HERE=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d /tmp/tc-bench-live.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$W"; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
C=$(port); D=$(port); L=$(port)
if ! lttng list >/dev/null 2>&1; then
  lttng-sessiond --no-kernel >/dev/null 2>&1 & PIDS+=($!)
  for _ in $(seq 50); do lttng list >/dev/null 2>&1 && break; sleep 0.2; done
fi
lttng-relayd -o "$W/relay" -C tcp://127.0.0.1:$C -D tcp://127.0.0.1:$D -L tcp://127.0.0.1:$L >/dev/null 2>&1 & PIDS+=($!)
sleep 1
cc -O2 -DPROVIDER=tclive_a -I"$HERE/crates/tracecube/tests/ustapp" -o "$W/app" "$HERE/crates/tracecube/tests/ustapp/app.c" -llttng-ust -ldl -lpthread
HOST=$(cat /proc/sys/kernel/hostname)
mk() { # SESSION LIVE_TIMER_US SUBBUF
  lttng create "$1" --live="$2" --set-url=net://127.0.0.1:$C:$D >/dev/null
  lttng enable-channel -u -s "$1" --subbuf-size="$3" --num-subbuf=8 --blocking-timeout=inf chan0 >/dev/null
  lttng enable-event -u -s "$1" -c chan0 'tclive*' >/dev/null
  lttng start "$1" >/dev/null
}
ITERS=$((M * 1000000))
EV=$((2 * ITERS * 6 / 5))

run_client() { # TOOL URL
  if [ "$1" = tracecube ]; then
    ( /usr/bin/time -f "%e %M" -o "$W/time" "$BIN" live "$2" --summary-every 0 --report "$W/rep.json" 2>"$W/err" ) &
  else
    ( /usr/bin/time -f "%e %M" -o "$W/time" babeltrace2 -i lttng-live "$2" -c sink.utils.counter >"$W/bt.out" 2>"$W/err" ) &
  fi
  TP=$!
}
show() { # TOOL EVENTS SECONDS KB
  printf '%-12s %10d events in %6.2f s = %5.2f M events/s, max RSS %d MB\n' "$1" "$2" "$3" "$(echo "$2 / $3 / 1000000" | bc -l)" $(($4 / 1024))
  if [ "$1" = tracecube ]; then
    python3 -c "import json; s=json.load(open('$W/rep.json'))['stats']; print('             fed', s['events'], 'dropped', s['dropped_events'], 'max backlog', s['max_backlog'], 'packets')"
  else
    echo "             babeltrace2 counted: $(grep ' Event messages' "$W/bt.out" | tail -1 | xargs)"
  fi
}

echo "## 1a. tracecube reading a recorded live session from the relay daemon ($EV events, 2 threads)"
S=bench-rec-$$
mk "$S" 1000000 1M
LTTNG_UST_ALLOW_BLOCKING=1 "$W/app" 2 "$ITERS" 0
lttng stop "$S" >/dev/null
run_client tracecube net://127.0.0.1:$L/host/$HOST/$S
sleep 0.5
lttng destroy "$S" >/dev/null
wait $TP
read -r secs kb < "$W/time"
show tracecube "$EV" "$secs" "$kb"

echo "## 1b. Attached, then the program traced at full speed ($EV events): time from the program's start to the client's end"
for tool in tracecube babeltrace2; do
  S=bench-$tool-$$
  mk "$S" 1000000 1M
  run_client $tool net://127.0.0.1:$L/host/$HOST/$S
  sleep 1
  T0=$(date +%s.%N)
  LTTNG_UST_ALLOW_BLOCKING=1 "$W/app" 2 "$ITERS" 0
  lttng stop "$S" >/dev/null
  lttng destroy "$S" >/dev/null
  wait $TP
  T1=$(date +%s.%N)
  read -r _ kb < "$W/time"
  show $tool "$EV" "$(echo "$T1 - $T0" | bc -l)" "$kb"
done

TIMER=${LIVE_TIMER_US:-1000000}
echo "## 2. Following a session while it is traced (live timer $TIMER µs): lag"
S=bench-lag-$$
mk "$S" "$TIMER" 1M
URL=net://127.0.0.1:$L/host/$HOST/$S
"$BIN" live "$URL" --summary-every 0 --report "$W/lag.json" 2>"$W/lagerr" & TP=$!
sleep 0.5
T0=$(date +%s.%N)
# 2 threads, a pause of 50 µs (~110 µs slept) every 100 events per thread: a steady
# stream of about 2 M events/s for ~10 s.
LTTNG_UST_ALLOW_BLOCKING=1 "$W/app" 2 $((M * 3000000)) 50
T1=$(date +%s.%N)
sleep 2
lttng stop "$S" >/dev/null; lttng destroy "$S" >/dev/null
wait $TP
python3 - "$W/lag.json" "$T0" "$T1" "$TIMER" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1])); s = r["stats"]
dur = float(sys.argv[3]) - float(sys.argv[2])
print(f"traced for {dur:.1f} s: {s['events']} events ({s['events']/dur/1e6:.2f} M/s), dropped {s['dropped_events']}, "
      f"lag mean {r['lag_mean_s']:.3f} s, max {s['lag_max_s']:.3f} s (live timer {float(sys.argv[4])/1e6:.3f} s)")
EOF
