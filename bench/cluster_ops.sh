#!/usr/bin/env bash
# Redis and PostgreSQL operations per served ad in cluster mode (issue 17, "Numbers"): starts a
# throwaway PostgreSQL and Redis (tests/support/*.sh), N `adserver serve` nodes on them (node 1
# seeds the demo dataset), sends the same consented ad requests to every node with wrk for
# SECONDS, and prints per node and in total: requests, served impressions, Redis commands and
# PostgreSQL transactions and row writes per served impression, and the node's CPU µs per
# request. Counts, not timings: they do not depend on how busy the machine is.
#
#   bench/cluster_ops.sh [--nodes N] [--seconds S] [--connections C] [--build-dir DIR]
#
# Defaults: 3 nodes, 10 s, 16 connections per node, build/. Needs wrk, postgresql-15,
# redis-server (scripts/install-deps.sh). Loopback only.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
nodes=3 seconds=10 connections=16 build_dir="$root/build"
while (($#)); do
  case "$1" in
    --nodes) nodes="$2"; shift ;;
    --seconds) seconds="$2"; shift ;;
    --connections) connections="$2"; shift ;;
    --build-dir) build_dir="$2"; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
bin="$build_dir/adserver"
[[ -x "$bin" ]] || { echo "no $bin (build first)" >&2; exit 1; }
work=$(mktemp -d /tmp/adserver-cluster-ops.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  "$root/tests/support/postgres.sh" stop "$work/pg" >/dev/null 2>&1 || true
  "$root/tests/support/redis.sh" stop "$work/redis" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"$root/tests/support/postgres.sh" start "$work/pg" >&2
"$root/tests/support/redis.sh" start "$work/redis" >&2
export ADSERVER_DATABASE_URL="$(cat "$work/pg/url")/postgres"
export ADSERVER_REDIS_URL="$(cat "$work/redis/url")"
export ADSERVER_IDENTITY_KEYS="1:$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export ADSERVER_EVENTS_KEYS="1:$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export ADSERVER_ADMIN_TOKEN="cluster-ops-admin-token-$$"
# The wrk request repeats one wallet: no per-wallet rate limit on impressions here.
printf '[traffic]\nwallet_serves_per_minute = 0\n' >"$work/bench.toml"

wait_file() { for _ in $(seq 3000); do [[ -s "$1" ]] && return 0; sleep 0.1; done; return 1; }
ports=()
for ((n = 1; n <= nodes; ++n)); do
  demo=()
  # The demo writes ~4,800 projects one transaction each: about a minute on PostgreSQL.
  ((n == 1)) && demo=(--demo --demo-wallets 3000)
  ADSERVER_NODE_ID="node-$n" "$bin" serve --data "$work/data-$n" --listen 127.0.0.1:0 \
    --io-threads 1 --log-level warn --config "$work/bench.toml" --ready-file "$work/ready-$n" \
    "${demo[@]}" >"$work/node-$n.log" 2>&1 &
  pids+=($!)
  wait_file "$work/ready-$n" || { cat "$work/node-$n.log" >&2; exit 1; }
  ports+=("$(head -1 "$work/ready-$n")")
  if ((n == 1)); then
    wait_file "$work/node-1.log"
    for _ in $(seq 100); do grep -q "live key:" "$work/node-1.log" && break; sleep 0.1; done
  fi
done
key=$(grep -m1 "live key:" "$work/node-1.log" | awk '{print $3}')
[[ -n "$key" ]] || { echo "demo key not found" >&2; exit 1; }
sleep 2  # every node's snapshot and replica have the demo

# The demo's wallets (a random one per request: a realistic fill rate under the demo's caps).
psql "$ADSERVER_DATABASE_URL" -Atc "SELECT '0x' || encode(wallet, 'hex') FROM wallet_activity
  GROUP BY wallet ORDER BY wallet LIMIT 3000" >"$work/wallets.txt"
{
  echo 'local wallets = {}'
  echo "for line in io.lines(\"$work/wallets.txt\") do wallets[#wallets + 1] = line end"
  echo 'math.randomseed(42)'
  echo 'request = function()'
  echo '  local body = string.format([[{"walletAddresses":["%s"],"imageFormat":"LANDSCAPE","adUnitId":"ops"}]], wallets[math.random(#wallets)])'
  echo "  return wrk.format(\"POST\", \"/v1/ads\", {[\"Content-Type\"] = \"application/json\", [\"x-api-key\"] = \"$key\"}, body)"
  echo 'end'
} >"$work/req.lua"

metric() {  # metric PORT NAME_REGEX: the sum of the matching samples of /metrics
  curl -s -H "Authorization: Bearer $ADSERVER_ADMIN_TOKEN" "http://127.0.0.1:$1/metrics" |
    awk -v re="$2" '$1 ~ re { s += $2 } END { printf "%d", s }'
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
redis_commands() {
  redis-cli -u "$ADSERVER_REDIS_URL" INFO stats | awk -F: '/^total_commands_processed/ {print $2+0}'
}
pg_counts() {  # transactions committed and rows written in the database
  psql "$ADSERVER_DATABASE_URL" -Atc "SELECT xact_commit, tup_inserted + tup_updated + tup_deleted
    FROM pg_stat_database WHERE datname = current_database()"
}

declare -a served0 requests0 ticks0
for ((i = 0; i < nodes; ++i)); do
  served0[i]=$(metric "${ports[i]}" '^adserver_impressions_total')
  requests0[i]=$(metric "${ports[i]}" '^adserver_ad_requests_total')
  ticks0[i]=$(cpu_ticks "${pids[i]}")
done
redis0=$(redis_commands)
IFS='|' read -r xact0 rows0 <<<"$(pg_counts)"
for ((i = 0; i < nodes; ++i)); do
  wrk -t1 -c"$connections" -d"${seconds}s" -s "$work/req.lua" "http://127.0.0.1:${ports[i]}/v1/ads" \
    >"$work/wrk-$i.txt" 2>&1 &
done
wait_wrk() { while pgrep -f "wrk -t1 -c$connections" >/dev/null; do sleep 0.2; done; }
wait_wrk
sleep 1.5  # one counter flush and one rollup flush after the load
redis1=$(redis_commands)
IFS='|' read -r xact1 rows1 <<<"$(pg_counts)"
hz=$(getconf CLK_TCK)
total_served=0 total_requests=0
echo "| node | requests | served | CPU µs / request |"
echo "|---|---|---|---|"
for ((i = 0; i < nodes; ++i)); do
  served=$(($(metric "${ports[i]}" '^adserver_impressions_total') - served0[i]))
  requests=$(($(metric "${ports[i]}" '^adserver_ad_requests_total') - requests0[i]))
  ticks=$(($(cpu_ticks "${pids[i]}") - ticks0[i]))
  total_served=$((total_served + served)) total_requests=$((total_requests + requests))
  awk -v n=$((i + 1)) -v r="$requests" -v s="$served" -v t="$ticks" -v hz="$hz" \
    'BEGIN { printf "| %d | %d | %d | %.1f |\n", n, r, s, r ? t * 1e6 / hz / r : 0 }'
done
echo
awk -v s="$total_served" -v r="$total_requests" -v rc=$((redis1 - redis0)) \
  -v x=$((xact1 - xact0)) -v w=$((rows1 - rows0)) -v secs="$seconds" -v n="$nodes" 'BEGIN {
  printf "%d nodes, %d s: %d requests, %d served impressions\n", n, secs, r, s
  printf "Redis commands: %d (%.4f per served ad, %.0f/s)\n", rc, s ? rc / s : 0, rc / secs
  printf "PostgreSQL transactions: %d (%.5f per served ad, %.0f/s); rows written: %d (%.5f per served ad)\n",
    x, s ? x / s : 0, x / secs, w, s ? w / s : 0 }'
