#!/usr/bin/env bash
# Where the server CPU of a request goes, adserver against nginx (issue 6): user and system µs
# per request and syscalls per request of each server on the load mix. Starts `adserver serve`
# (one event loop) and nginx (nginx-light, one worker, answering a real ad body taken from
# adserver) both pinned to CPU 0, then for each server, twice, A B A B: a 2-second wrk warm-up,
# then a measured run (wrk pinned to CPU 1, bench/wrk_mix.lua) while `perf stat` counts the
# server's recvfrom/sendto/writev/epoll_wait calls. utime and stime come from /proc/PID/stat.
# perf's tracepoints add a little system time to both servers alike.
#
#   bench/cpu_split.sh [--wallets N] [--connections C] [--seconds S] [--build-dir DIR]
#
# Defaults: the 10 M-wallet dataset bench/load.sh caches in /tmp/adserver-bench-N, 64
# connections, 6-second runs, build/. Loopback only. Needs perf (linux-perf) with tracepoints.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/common.sh
source "$here/common.sh"
wallets=10000000 connections=64 seconds=6 build_dir="$here/../build"
while (($#)); do
  case "$1" in
    --wallets) wallets="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
data="/tmp/adserver-bench-$wallets"
[[ -f "$data/bench-key.txt" ]] ||
  { echo "no dataset in $data: run bench/load.sh --startup-only --wallets $wallets" >&2; exit 1; }
for tool in taskset wrk curl nginx; do
  command -v "$tool" >/dev/null || { echo "missing $tool (scripts/install-deps.sh)" >&2; exit 1; }
done
command -v perf >/dev/null || { echo "missing perf (apt-get install linux-perf)" >&2; exit 1; }
clk_tck=$(getconf CLK_TCK)
work=$(mktemp -d /tmp/adserver-split.XXXXXX)
server_pid="" nginx_pid=""
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  [[ -n "$nginx_pid" ]] && kill -QUIT "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  rm -rf "$work"
  return 0
}
trap cleanup EXIT

start_adserver "$build_dir/adserver" "$data" "$work" || exit 1

key=$(head -1 "$data/bench-key.txt")
body=$(sample_ad_body "$server_port" "$key" "$data" "$work/body.json")
nginx_port=$(free_port)
write_nginx_conf "$work/nginx" "$nginx_port" "$body"
taskset -c 0 nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" >"$work/nginx/stdout.log" 2>&1 &
nginx_pid=$!
for _ in $(seq 1000); do pgrep -P "$nginx_pid" >/dev/null && break; sleep 0.01; done
sleep 0.5
nginx_worker=$(pgrep -P "$nginx_pid" | head -1)
[[ -n "$nginx_worker" ]] || { cat "$work/nginx/logs/error.log" >&2; exit 1; }

events=syscalls:sys_enter_recvfrom,syscalls:sys_enter_sendto,syscalls:sys_enter_writev
events+=,syscalls:sys_enter_epoll_wait
measure() {  # measure NAME PID PORT: one line of µs per request, then syscalls per request
  local name=$1 pid=$2 port=$3 before after requests
  taskset -c 1 wrk -t1 -c"$connections" -d2s -s "$here/wrk_mix.lua" "http://127.0.0.1:$port" \
    -- "$data" >/dev/null
  before=$(sed 's/.*) //' "/proc/$pid/stat" | awk '{print $12, $13}')
  perf stat -x, -e "$events" -p "$pid" -o "$work/perf.$name" -- sleep "$seconds" &
  local perf_pid=$!
  requests=$(taskset -c 1 wrk -t1 -c"$connections" -d"${seconds}s" -s "$here/wrk_mix.lua" \
    "http://127.0.0.1:$port" -- "$data" | awk '/requests in/ {print $1}')
  wait "$perf_pid" || true
  after=$(sed 's/.*) //' "/proc/$pid/stat" | awk '{print $12, $13}')
  echo "$before $after $requests" | awk -v n="$name" -v t="$clk_tck" '{
    printf "%s\tuser_us_per_req=%.2f\tsys_us_per_req=%.2f\treq_per_s=%.0f", n,
           ($3 - $1) * 1e6 / t / $5, ($4 - $2) * 1e6 / t / $5, $5 / '"$seconds"' }'
  awk -F, -v r="$requests" '$3 ~ /syscalls/ { sub(/syscalls:sys_enter_/, "", $3);
    printf "\t%s=%.2f", $3, $1 / r }' "$work/perf.$name"
  echo
}
echo "dataset $data, $connections connections, ${seconds}s runs; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in 1 2; do
  measure adserver "$server_pid" "$server_port"
  measure nginx "$nginx_worker" "$nginx_port"
done
