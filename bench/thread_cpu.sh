#!/usr/bin/env bash
# Where one server's CPU goes, thread by thread, embedded or as a cluster node (issues 15, 17):
# starts `adserver serve` (one event loop) on CPU 0, runs bench/wrk_mix.lua from CPU 1 for a
# 3-second warm-up and a measured run, and prints the requests, each thread's CPU ticks over the
# measured run (utime + stime from /proc/PID/task/*/stat, summed by thread name) and the event
# loop's CPU µs per request. With --cluster, PostgreSQL and Redis (tests/support/postgres.sh,
# redis.sh) run on CPU 0 too, the dataset is written into PostgreSQL, and the script adds their
# CPU ticks and the rows each PostgreSQL table took (pg_stat_user_tables) over the run.
#
#   bench/thread_cpu.sh [--cluster] [--wallets N] [--campaigns N] [--seconds S] [--build-dir DIR]
#
# Defaults: embedded, 200,000 wallets, 2,000 campaigns, 10 seconds, build/ (Release, with
# -DADSERVER_BUILD_BENCH=ON for adserver-bench-data). Loopback only; everything it starts lives
# in a fresh /tmp/adserver-threads.* directory and is stopped at exit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
# shellcheck source=bench/common.sh
source "$here/common.sh"
cluster=0 wallets=200000 campaigns=2000 seconds=10 build_dir="$root/build"
while (($#)); do
  case "$1" in
    --cluster) cluster=1; shift ;;
    --wallets) wallets="$2"; shift 2 ;;
    --campaigns) campaigns="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
bin="$build_dir/adserver" gen="$build_dir/adserver-bench-data"
for f in "$bin" "$gen"; do
  [[ -x "$f" ]] || { echo "missing $f (build with -DADSERVER_BUILD_BENCH=ON)" >&2; exit 1; }
done
for tool in taskset wrk curl; do
  command -v "$tool" >/dev/null || { echo "missing $tool (scripts/install-deps.sh)" >&2; exit 1; }
done
work=$(mktemp -d /tmp/adserver-threads.XXXXXX)
pid=""
cleanup() {
  [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  if ((cluster)); then
    "$root/tests/support/postgres.sh" stop "$work/pg" >/dev/null 2>&1 || true
    "$root/tests/support/redis.sh" stop "$work/redis" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

export ADSERVER_IDENTITY_KEYS="1:$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export ADSERVER_EVENTS_KEYS="1:$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
if ((cluster)); then
  taskset -c 0 "$root/tests/support/postgres.sh" start "$work/pg" >/dev/null
  taskset -c 0 "$root/tests/support/redis.sh" start "$work/redis" >/dev/null
  export ADSERVER_DATABASE_URL="$(cat "$work/pg/url")/postgres"
  export ADSERVER_REDIS_URL="$(cat "$work/redis/url")"
  "$gen" --database-url "$ADSERVER_DATABASE_URL" --data "$work/lists" --wallets "$wallets" \
    --campaigns "$campaigns" >/dev/null 2>&1
else
  unset ADSERVER_DATABASE_URL ADSERVER_REDIS_URL
  "$gen" --data "$work/node" --wallets "$wallets" --campaigns "$campaigns" >/dev/null 2>&1
  mkdir -p "$work/lists"
  cp "$work/node/bench-key.txt" "$work"/node/wallets-*.txt "$work/lists/"
fi
bench_config "$bin" "$work/bench.toml"
ADSERVER_NODE_ID=n1 taskset -c 0 "$bin" serve --data "$work/node" --listen 127.0.0.1:0 \
  --io-threads 1 --log-level warn --config "$work/bench.toml" --ready-file "$work/ready" \
  >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 600); do [[ -s "$work/ready" ]] && break; sleep 0.1; done
[[ -s "$work/ready" ]] || { echo "server did not start; see its log:" >&2; cat "$work/server.log" >&2; exit 1; }
url="http://127.0.0.1:$(head -1 "$work/ready")"
taskset -c 1 wrk -t1 -c64 -d3s -s "$here/wrk_mix.lua" "$url" -- "$work/lists" >/dev/null

threads() {
  for t in /proc/"$pid"/task/*; do
    echo "$(cat "$t/comm") $(sed 's/.*) //' "$t/stat" | awk '{print $12 + $13}')"
  done | awk '{a[$1] += $2} END {for (k in a) print k, a[k]}' | sort
}
# PostgreSQL's postmaster (its backends are its children) and redis-server.
services() {
  cpu_ticks "$(head -1 "$(cat "$work/pg/data_dir")/db/postmaster.pid")" "$(cat "$work/redis/pid")"
}
tables() {
  psql "$ADSERVER_DATABASE_URL" -Atc "SELECT relname, n_tup_ins + n_tup_upd + n_tup_del FROM \
    pg_stat_user_tables" | sort  # join's order, not the database's collation
}
threads >"$work/before"
((cluster)) && { services >"$work/services-before"; tables >"$work/tables-before"; }
result=$(taskset -c 1 wrk -t1 -c64 -d"${seconds}s" -s "$here/wrk_mix.lua" "$url" -- "$work/lists" |
  grep RESULT)
threads >"$work/after"
echo "$result"
requests=$(sed 's/.*requests=\([0-9]*\).*/\1/' <<<"$result")
hz=$(getconf CLK_TCK)
echo "thread CPU ticks over the run (1 tick = $((1000 / hz)) ms):"
join "$work/before" "$work/after" | awk '{d = $3 - $2; if (d > 0) print "  " $1, d}' | sort -k2 -nr
loop=$(join "$work/before" "$work/after" | awk '$1 == "http-0" {print $3 - $2}')
awk -v t="$loop" -v r="$requests" -v hz="$hz" \
  'BEGIN {printf "event loop (http-0): %.1f CPU µs per request\n", t * 1e6 / hz / r}'
if ((cluster)); then
  sleep 1  # the statistics collector
  echo "PostgreSQL and Redis CPU ticks: $(($(services) - $(cat "$work/services-before")))"
  echo "PostgreSQL rows written per table:"
  join -t'|' "$work/tables-before" <(tables) | awk -F'|' '$3 - $2 > 0 {print "  " $1, $3 - $2}'
fi
