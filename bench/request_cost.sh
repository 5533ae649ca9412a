#!/usr/bin/env bash
# Where a request's CPU goes (docs/BENCHMARKS.md, "Where the CPU of a request goes"): starts
# `adserver serve` on a bench/load.sh dataset pinned to CPU 0 with one event loop, sends the
# same request over and over with wrk (bench/wrk_one.lua, pinned to CPU 1) for each kind below,
# and prints the server's CPU µs per request (utime+stime from /proc, as bench/load.sh) and req/s.
# Repeating one request keeps its wallets' index pages in cache: the difference to the mix of
# bench/load.sh (random wallets) is the cost of cache misses.
#
# The first rows are the HTTP floor: `GET /healthz` (keep-alive, no ad work) on adserver, and
# nginx (bench/load.sh's configuration, also on CPU 0) answering the same GET and the "known 1"
# POST with a real ad body: what is left above them is the ad work.
#
#   bench/request_cost.sh [--build-dir DIR] [--wallets N] [--duration SECONDS] [--connections C]
#
# Defaults: build, 10 M wallets (the dataset bench/load.sh generates and caches in
# /tmp/adserver-bench-N; run bench/load.sh --startup-only --wallets N first to create it),
# 5-second runs at 64 connections. About 50 seconds. Needs nginx (nginx-light) for its rows.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/common.sh
source "$here/common.sh"
root=$(cd "$here/.." && pwd)
build_dir="$root/build"
wallets=10000000
duration=5
connections=64
while (($#)); do
  case "$1" in
    --build-dir) build_dir="$2"; shift ;;
    --wallets) wallets="$2"; shift ;;
    --duration) duration="$2"; shift ;;
    --connections) connections="$2"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
data="/tmp/adserver-bench-$wallets"
[[ -f "$data/bench-key.txt" ]] ||
  { echo "no dataset in $data: run bench/load.sh --startup-only --wallets $wallets" >&2; exit 1; }
for tool in taskset wrk; do
  command -v "$tool" >/dev/null || { echo "missing $tool (scripts/install-deps.sh)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/adserver-cost.XXXXXX)
server_pid=""
nginx_pid=""
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  [[ -n "$nginx_pid" ]] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  rm -rf "$work"
  return 0
}
trap cleanup EXIT
start_adserver "$build_dir/adserver" "$data" "$work" || exit 1
port=$server_port
clk_tck=$(getconf CLK_TCK)
# CPU ticks (user + system) of processes $@ and, for nginx's master, its worker.
ticks() {
  local total=0 pid
  for pid in "$@" $(pgrep -P "$1" 2>/dev/null || true); do
    total=$((total + $(sed 's/.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')))
  done
  echo "$total"
}
# measure LABEL PID URL [SCRIPT ARGS...]: one table row; SCRIPT (a wrk script) gets ARGS.
measure() {
  local label=$1 pid=$2 url=$3 before after out requests non2xx errors
  local -a script=()
  shift 3
  if (($#)); then script=(-s "$1"); shift; fi
  # Warm-up, then the measured run.
  taskset -c 1 wrk -t1 -c"$connections" -d1s "${script[@]}" "$url" -- "$@" >/dev/null
  before=$(ticks "$pid")
  out=$(taskset -c 1 wrk -t1 -c"$connections" -d"${duration}s" "${script[@]}" "$url" -- "$@")
  after=$(ticks "$pid")
  requests=$(echo "$out" | awk '/requests in/ {print $1}')
  non2xx=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
  errors=$(echo "$out" | awk '/Socket errors/ {print}')
  [[ -z "$errors" ]] || { echo "wrk: $errors" >&2; exit 1; }
  awk -v k="$label" -v s="${non2xx:-0}" -v q="$requests" -v d="$duration" \
    -v t=$((after - before)) -v tck="$clk_tck" \
    'BEGIN { printf "| %s | %s | %.0f | %.2f |\n", k, s, q / d, t * 1e6 / tck / q }'
}

echo "dataset: $data; ${duration}s runs at $connections connections; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| request (wallets) | non-2xx answers | req/s | CPU µs/req |"
echo "|---|---|---|---|"
measure "adserver GET /healthz" "$server_pid" "http://127.0.0.1:$port/healthz"
for kind in "unknown 1" "known 1" "known 3" "unknown 50" "known 50" "known 3 earlier"; do
  # shellcheck disable=SC2086
  set -- $kind
  measure "$kind" "$server_pid" "http://127.0.0.1:$port" "$here/wrk_one.lua" "$data" "$@"
done

if command -v nginx >/dev/null; then
  key=$(cat "$data/bench-key.txt")
  body=$(sample_ad_body "$port" "$key" "$data" "$work/sample.json")
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
  nport=$(free_port)
  write_nginx_conf "$work/nginx" "$nport" "$body"
  taskset -c 0 nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" 2>"$work/nginx/stderr" &
  nginx_pid=$!
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$nport/" && break; sleep 0.05; done
  measure "nginx GET (ad body)" "$nginx_pid" "http://127.0.0.1:$nport/healthz"
  measure "nginx known 1 (ad body)" "$nginx_pid" "http://127.0.0.1:$nport" \
    "$here/wrk_one.lua" "$data" known 1
else
  echo "(no nginx: its rows are left out)"
fi
