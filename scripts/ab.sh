#!/bin/bash
# Interleaved timing of several commands on a noisy machine: runs each in turn N times
# and prints the minimum and median wall time (ms) of each. Usage: scripts/ab.sh N "cmdA" "cmdB" ...
N=$1; shift
declare -A T
for ((i=0;i<N;i++)); do
  k=0
  for c in "$@"; do
    s=$(date +%s%N); $c >/dev/null 2>&1; e=$(date +%s%N)
    T[$k]+="$(( (e-s)/1000000 )) "; k=$((k+1))
  done
done
k=0
for c in "$@"; do
  echo "${T[$k]}" | tr ' ' '\n' | grep . | sort -n | awk -v c="$c" '{a[NR]=$1} END {printf "min %5d  med %5d  %s\n", a[1], a[int((NR+1)/2)], c}'
  k=$((k+1))
done
