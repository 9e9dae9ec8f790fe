#!/bin/bash
# Interleaved timing of several commands on a noisy machine: warms each up 3 times, then
# runs them in turn N times, so that the machine's drift falls on all alike, and prints
# the minimum, median and maximum wall time (ms) of each.
# Usage: scripts/ab.sh N "cmdA" "cmdB" ...   (each command is split on spaces)
N=$1; shift
declare -A T
for c in "$@"; do for ((w=0;w<3;w++)); do $c >/dev/null 2>&1; done; done
for ((i=0;i<N;i++)); do
  k=0
  for c in "$@"; do
    s=$(date +%s%N); $c >/dev/null 2>&1; e=$(date +%s%N)
    T[$k]+="$((e-s)) "; k=$((k+1))
  done
done
k=0
for c in "$@"; do
  echo "${T[$k]}" | tr ' ' '\n' | grep . | sort -n | awk -v c="$c" '{a[NR]=$1/1e6} END {printf "min %9.2f  med %9.2f  max %9.2f  %s\n", a[1], (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2), a[NR], c}'
  k=$((k+1))
done
