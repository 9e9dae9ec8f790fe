#!/usr/bin/env bash
# scripts/bench-print.sh for a machine without babeltrace2 installed (the lent 16-core
# machine): a bundle directory holds bin/{babeltrace2,hyperfine,tracecube}, lib/ (the
# libraries `ldd` lists for babeltrace2 and its plugins: libbabeltrace2, glib, gmodule,
# pcre2, elf, dw, z, lzma, bz2, zstd), plugins/ (babeltrace2's plugin .so files) and
# ust-memory/ (a copy of ../shared/traces/ust-memory). Make it with:
#   B=target/devbundle; mkdir -p $B/bin $B/lib $B/plugins
#   cp /usr/bin/babeltrace2 /usr/bin/hyperfine target/release/tracecube $B/bin/
#   cp -L /lib/x86_64-linux-gnu/lib{babeltrace2.so.0,gmodule-2.0.so.0,glib-2.0.so.0,pcre2-8.so.0,elf.so.1,dw.so.1,z.so.1,lzma.so.5,bz2.so.1.0,zstd.so.1} $B/lib/
#   cp /usr/lib/x86_64-linux-gnu/babeltrace2/plugins/*.so $B/plugins/
#   cp -r ../shared/traces/ust-memory $B/; cp scripts/bench-print-bundle.sh $B/bench.sh
# then run `bash target/devbundle/bench.sh` there (carrying target/devbundle).
set -u
B=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$B/lib BABELTRACE_PLUGIN_PATH=$B/plugins LIBBABELTRACE2_PLUGIN_PROVIDER_DIR=/nonexistent TZ=UTC
nproc; lscpu | grep -m1 "Model name"; cat /etc/os-release | head -2
$B/bin/babeltrace2 --version | head -1
$B/bin/tracecube synth -o /tmp/syn1m --cpus 4 --events 1000000 --seed 7 > /dev/null
for t in /tmp/syn1m $B/ust-memory; do
  $B/bin/babeltrace2 --plugin-path=$B/plugins $t 2>/dev/null | head -c 300; echo
  $B/bin/hyperfine -N --warmup 1 --runs ${RUNS:-10} --export-json /tmp/h.json \
    -n babeltrace2 "$B/bin/babeltrace2 --plugin-path=$B/plugins $t" \
    -n "print -j 1" "$B/bin/tracecube print $t" \
    -n "dump -j 1" "$B/bin/tracecube dump $t" \
    -n "print -j 4" "$B/bin/tracecube print -j 4 $t" \
    --output null > /dev/null 2>&1
  python3 - "$t" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open("/tmp/h.json"))["results"]}
bt = r["babeltrace2"]["mean"]
print(sys.argv[1])
for name, x in r.items():
    print(f"  {name:<12} {x['mean']:8.3f} s ± {x['stddev']:.3f}   {bt / x['mean']:6.1f}x babeltrace2")
PY
done
