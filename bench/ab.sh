#!/usr/bin/env bash
# Interleaved A/B of two adserver binaries on the load mix (how docs/BENCHMARKS.md measured each
# change): for each pair, starts BINARY (pinned to CPU 0, one event loop) on a bench/load.sh
# dataset, waits until the wallet table is served from memory, runs bench/wrk_mix.lua (wrk
# pinned to CPU 1) for a 2-second warm-up and a measured run, and prints the server's CPU µs per
# request (utime+stime from /proc over the run / requests), req/s and p99. Binaries alternate
# A B A B so that drifts of the machine hit both.
#
#   bench/ab.sh [--wallets N] [--connections C] [--seconds S] [--pairs P] BINARY_A [BINARY_B]
#
# Defaults: 10 M wallets (the dataset bench/load.sh caches in /tmp/adserver-bench-N), 64
# connections, 8-second runs, 3 pairs. Loopback only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/common.sh
source "$here/common.sh"
wallets=10000000 connections=64 seconds=8 pairs=3
while (($#)); do
  case "$1" in
    --wallets) wallets="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --pairs) pairs="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
(($# >= 1 && $# <= 2)) || { echo "usage: bench/ab.sh [options] BINARY_A [BINARY_B]" >&2; exit 2; }
data="/tmp/adserver-bench-$wallets"
[[ -f "$data/bench-key.txt" ]] ||
  { echo "no dataset in $data: run bench/load.sh --startup-only --wallets $wallets" >&2; exit 1; }
for tool in taskset wrk curl; do
  command -v "$tool" >/dev/null || { echo "missing $tool (scripts/install-deps.sh)" >&2; exit 1; }
done
clk_tck=$(getconf CLK_TCK)
work=$(mktemp -d /tmp/adserver-ab.XXXXXX)
server_pid=""
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
  return 0
}
trap cleanup EXIT

run() {  # run BINARY: one measured run, prints one line
  local bin=$1 port t0 t1 out requests p99
  start_adserver "$bin" "$data" "$work" || exit 1
  port=$server_port
  taskset -c 1 wrk -t1 -c"$connections" -d2s -s "$here/wrk_mix.lua" "http://127.0.0.1:$port" \
    -- "$data" >/dev/null
  t0=$(sed 's/.*) //' "/proc/$server_pid/stat" | awk '{print $12 + $13}')
  out=$(taskset -c 1 wrk -t1 -c"$connections" -d"${seconds}s" --latency -s "$here/wrk_mix.lua" \
    "http://127.0.0.1:$port" -- "$data")
  t1=$(sed 's/.*) //' "/proc/$server_pid/stat" | awk '{print $12 + $13}')
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
  requests=$(echo "$out" | awk '/requests in/ {print $1}')
  p99=$(echo "$out" | awk '/ 99%/ {print $2}')
  awk -v b="$bin" -v t=$((t1 - t0)) -v r="$requests" -v s="$seconds" -v tck="$clk_tck" \
    -v p="$p99" 'BEGIN { printf "%s\tcpu_us_per_req=%.2f\treq_per_s=%.0f\tp99=%s\n",
                         b, t * 1e6 / tck / r, r / s, p }'
}

echo "dataset $data, $connections connections, ${seconds}s runs; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$pairs"); do
  for bin in "$@"; do run "$bin"; done
done
