#!/usr/bin/env bash
# The cluster mode of bench/load.sh (issue 17, "Numbers"): `bench/load.sh --cluster [...]` runs
# this. adserver nodes in cluster mode against nginx answering a fixed ad body, on the same core.
#
#   bench/load.sh --cluster [--nodes "1 2 3"] [--wallets N] [--campaigns M] [--duration S]
#                 [--connections C] [--repeats R] [--build-dir DIR] [--out DIR] [--smoke]
#
# Starts a throwaway PostgreSQL 15 and Redis (tests/support/*.sh), writes the bench dataset into PostgreSQL (adserver-bench-data --database-url; default 1 M
# wallets and 10 k campaigns: the inventory alone takes ~2.5 min, one transaction per record),
# then for each node count K of --nodes (ascending) starts nodes up to K, all pinned to CPU 0
# with one event loop each (their replicas bootstrapped from PostgreSQL), nginx (1 worker) on
# CPU 0 too. Each repeat sends bench/wrk_mix.lua's mix with C connections in total, split
# evenly over the K nodes (one wrk per node, run together), then the same mix with C
# connections to nginx. Reports per K the medians over the repeats of: total req/s, the worst
# node's p99, and CPU µs per request (the nodes' utime+stime over the run / their requests),
# and the ratios to nginx's run right after. On this 2-core machine the K nodes share CPU 0, so
# totals cannot grow with K: what the table shows is what a node costs per request in a
# cluster of K (no round trip on the ad path: its Redis and PostgreSQL work runs on its
# background threads, counted in its CPU; PostgreSQL's and Redis's own CPU is not, see
# bench/cluster_ops.sh for their operations per served ad).
# PostgreSQL and Redis run on CPU 0 too (--services-cpu C to move them): on CPU 1 they took
# wrk's time (the exposures of the first seconds, autovacuum after the load), so wrk could not
# keep either server busy and both servers' CPU per request rose with their idle wake-ups.
# After the load the database is vacuumed and analysed, and each node count gets a 5-second
# warm-up before its runs.
# --smoke: 2,000 wallets, 200 campaigns, 1-second runs, nodes "1 2": the harness works.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench/common.sh
source "$here/common.sh"
root="$(dirname "$here")"

nodes_list="1 2 3" wallets=1000000 campaigns=10000 duration=10 connections=64 repeats=3
build_dir="$root/build-bench" out_dir="" smoke=0 services_cpu=0
while (($#)); do
  case "$1" in
    --cluster) ;;
    --nodes) nodes_list="$2"; shift ;;
    --wallets) wallets="$2"; shift ;;
    --campaigns) campaigns="$2"; shift ;;
    --duration) duration="$2"; shift ;;
    --connections) connections="$2"; shift ;;
    --repeats) repeats="$2"; shift ;;
    --build-dir) build_dir="$2"; shift ;;
    --out) out_dir="$2"; shift ;;
    --smoke) smoke=1 ;;
    --services-cpu) services_cpu="$2"; shift ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    *) echo "unknown argument for --cluster: $1" >&2; exit 2 ;;
  esac
  shift
done
if ((smoke)); then wallets=2000 campaigns=200 duration=1 repeats=1 nodes_list="1 2"; fi
script_start=$SECONDS
for tool in taskset curl wrk nginx psql redis-cli; do
  command -v "$tool" >/dev/null || { echo "missing $tool (scripts/install-deps.sh)" >&2; exit 1; }
done
ncpu=$(nproc)
server_cpu=0
client_cpu=$((ncpu > 1 ? 1 : 0))
ensure_bench_build "$build_dir" adserver adserver-bench-data
bin="$build_dir/adserver"

work=$(mktemp -d /tmp/adserver-load-cluster.XXXXXX)
[[ -z "$out_dir" ]] && out_dir="$work"
mkdir -p "$out_dir"
raw="$out_dir/raw-cluster.tsv"
: >"$raw"
pids=() nginx_pid=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [[ -n "$nginx_pid" ]] && kill -QUIT "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  "$root/tests/support/postgres.sh" stop "$work/pg" >/dev/null 2>&1 || true
  "$root/tests/support/redis.sh" stop "$work/redis" >/dev/null 2>&1 || true
  if [[ "$out_dir" != "$work" ]]; then rm -rf "$work"; else rm -rf "$work"/pg "$work"/redis "$work"/node-*; fi
  return 0
}
trap cleanup EXIT

taskset -c "$services_cpu" "$root/tests/support/postgres.sh" start "$work/pg" >&2
taskset -c "$services_cpu" "$root/tests/support/redis.sh" start "$work/redis" >&2
ADSERVER_DATABASE_URL="$(cat "$work/pg/url")/postgres"
ADSERVER_REDIS_URL="$(cat "$work/redis/url")"
export ADSERVER_DATABASE_URL ADSERVER_REDIS_URL
# One key ring for every node: a cookie or click token from one is valid on all.
ADSERVER_IDENTITY_KEYS="1:$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
ADSERVER_EVENTS_KEYS="1:$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export ADSERVER_IDENTITY_KEYS ADSERVER_EVENTS_KEYS

echo "== dataset into PostgreSQL: $wallets wallets, $campaigns campaigns" >&2
t0=$SECONDS
lists="$work/lists"
taskset -c "$client_cpu" "$build_dir/adserver-bench-data" --database-url "$ADSERVER_DATABASE_URL" \
  --data "$lists" --wallets "$wallets" --campaigns "$campaigns" >/dev/null
psql -q "$ADSERVER_DATABASE_URL" -c "VACUUM (ANALYZE)"
generated_s=$((SECONDS - t0))
key=$(head -1 "$lists/bench-key.txt")
bench_config "$bin" "$work/bench.toml"

wait_ready() {  # wait_ready PORT: the replica is bootstrapped and the wallet table in memory
  local out
  for _ in $(seq 6000); do
    out=$(curl -s "http://127.0.0.1:$1/readyz" || true)
    [[ "$out" == *'"walletTableInMemory":true'* || "$out" == *'"walletTable":"off"'* ]] && return 0
    sleep 0.05
  done
  echo "node on port $1 not ready: $out" >&2
  return 1
}
ports=() ready_s=()
start_node() {  # start_node N
  local n=$1 t0=$SECONDS
  ADSERVER_NODE_ID="node-$n" taskset -c "$server_cpu" "$bin" serve --data "$work/node-$n" \
    --listen 127.0.0.1:0 --io-threads 1 --log-level warn --config "$work/bench.toml" \
    --ready-file "$work/ready-$n" >"$work/node-$n.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 6000); do [[ -s "$work/ready-$n" ]] && break; sleep 0.05; done
  [[ -s "$work/ready-$n" ]] || { cat "$work/node-$n.log" >&2; exit 1; }
  ports+=("$(head -1 "$work/ready-$n")")
  wait_ready "${ports[-1]}" || { cat "$work/node-$n.log" >&2; exit 1; }
  ready_s+=($((SECONDS - t0)))
  echo "   node $n on port ${ports[-1]}, ready in ${ready_s[-1]} s" >&2
}

clk_tck=$(getconf CLK_TCK)
# wrk_result PORT CONNECTIONS OUT: one wrk run of the mix, its RESULT line into OUT.
wrk_result() {
  taskset -c "$client_cpu" wrk -t1 -c"$2" -d"${duration}s" --timeout 5s -s "$here/wrk_mix.lua" \
    "http://127.0.0.1:$1" -- "$lists" | grep '^RESULT' >"$3"
}
field() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"; }

# run_nodes K REP: the mix to nodes 1..K at once; one line in raw-cluster.tsv.
run_nodes() {
  local k=$1 rep=$2 i before after requests=0 p99=0 dur=0 non2xx=0 errors=0 per
  per=$(((connections + k - 1) / k))
  before=$(cpu_ticks "${pids[@]:0:k}")
  local wrks=()
  for ((i = 0; i < k; ++i)); do
    wrk_result "${ports[i]}" "$per" "$work/wrk-$i.txt" &
    wrks+=($!)
  done
  wait "${wrks[@]}"
  after=$(cpu_ticks "${pids[@]:0:k}")
  for ((i = 0; i < k; ++i)); do
    requests=$((requests + $(field "$work/wrk-$i.txt" requests)))
    non2xx=$((non2xx + $(field "$work/wrk-$i.txt" non2xx)))
    errors=$((errors + $(field "$work/wrk-$i.txt" errors)))
    local p d
    p=$(field "$work/wrk-$i.txt" p99_us); d=$(field "$work/wrk-$i.txt" duration_us)
    ((p > p99)) && p99=$p
    ((d > dur)) && dur=$d
  done
  awk -v k="$k" -v r="$rep" -v q="$requests" -v d="$dur" -v p99="$p99" -v t=$((after - before)) \
    -v tck="$clk_tck" -v n2="$non2xx" -v e="$errors" 'BEGIN {
      printf "adserver\t%d\t%d\t%.0f\t%d\t%.2f\t%d\t%d\t%d\n", k, r, q / (d / 1e6), p99,
        (q > 0 ? t * 1e6 / tck / q : 0), n2, e, q }' >>"$raw"
  tail -1 "$raw" >&2
}
run_nginx() {  # run_nginx K REP
  local before after
  before=$(cpu_ticks "$nginx_pid")
  wrk_result "$nginx_port" "$connections" "$work/wrk-nginx.txt"
  after=$(cpu_ticks "$nginx_pid")
  awk -v k="$1" -v r="$2" -v q="$(field "$work/wrk-nginx.txt" requests)" \
    -v d="$(field "$work/wrk-nginx.txt" duration_us)" -v p99="$(field "$work/wrk-nginx.txt" p99_us)" \
    -v t=$((after - before)) -v tck="$clk_tck" -v n2="$(field "$work/wrk-nginx.txt" non2xx)" \
    -v e="$(field "$work/wrk-nginx.txt" errors)" 'BEGIN {
      printf "nginx\t%d\t%d\t%.0f\t%d\t%.2f\t%d\t%d\t%d\n", k, r, q / (d / 1e6), p99,
        (q > 0 ? t * 1e6 / tck / q : 0), n2, e, q }' >>"$raw"
  tail -1 "$raw" >&2
}

echo "== runs: server nodes rep req/s p99_us cpu_us/req non2xx errors requests" >&2
started=0
for k in $nodes_list; do
  while ((started < k)); do start_node $((++started)); done
  if [[ -z "$nginx_pid" ]]; then
    body=$(sample_ad_body "${ports[0]}" "$key" "$lists" "$work/body.json")
    nginx_port=$(free_port)
    write_nginx_conf "$work/nginx" "$nginx_port" "$body"
    taskset -c "$server_cpu" nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" \
      >"$work/nginx/stdout.log" 2>&1 &
    nginx_pid=$!
    for _ in $(seq 500); do
      curl -sf -X POST "http://127.0.0.1:$nginx_port/v1/ads" -d '{}' >/dev/null && break
      sleep 0.02
    done
  fi
  sleep 2  # every node's snapshot, leases and caps synced once
  warm=$duration
  duration=$((smoke ? 1 : 5))
  run_nodes "$k" 0  # the warm-up: repeat 0 in raw-cluster.tsv, left out of the medians
  duration=$warm
  for ((rep = 1; rep <= repeats; ++rep)); do
    run_nodes "$k" "$rep"
    run_nginx "$k" "$rep"
  done
done

summary="$out_dir/summary-cluster.md"
{
  echo "cluster mode: $wallets wallets, $campaigns campaigns in PostgreSQL (written in ${generated_s} s);" \
    "nodes ready in ${ready_s[*]} s (replica bootstrap and wallet table); ${duration}s runs," \
    "$connections connections in total, $repeats repeats (medians); nodes and nginx on CPU" \
    "$server_cpu, PostgreSQL and Redis on CPU $services_cpu, wrk on CPU $client_cpu"
  echo
  echo "| nodes | total req/s | worst node p99 µs | CPU µs/req (nodes) | nginx req/s | nginx p99 µs | nginx CPU µs/req | **CPU ratio** | p99 ratio |"
  echo "|---|---|---|---|---|---|---|---|---|"
  awk -F'\t' -v reps="$repeats" '
    function median(name, k, col,   n, i, j, t, v) {
      n = 0
      for (i = 1; i <= reps; ++i) if ((name, k, i) in row) v[++n] = val[name, k, i, col]
      for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    function ratio(k, col,   n, i, j, t, v) {
      n = 0
      for (i = 1; i <= reps; ++i)
        if (("adserver", k, i) in row && ("nginx", k, i) in row && val["nginx", k, i, col] > 0)
          v[++n] = val["adserver", k, i, col] / val["nginx", k, i, col]
      for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    { row[$1, $2, $3] = 1; for (c = 4; c <= 6; ++c) val[$1, $2, $3, c] = $c
      if (!($2 in seen)) { seen[$2] = 1; order[++nk] = $2 } }
    END {
      for (i = 1; i <= nk; ++i) {
        k = order[i]
        printf "| %d | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f | **%.2f** | %.2f |\n", k,
          median("adserver", k, 4), median("adserver", k, 5), median("adserver", k, 6),
          median("nginx", k, 4), median("nginx", k, 5), median("nginx", k, 6), ratio(k, 6), ratio(k, 5)
      }
    }' "$raw"
  echo
  echo "Ratios: each repeat's nodes over the nginx run right after it, median over the repeats."
  echo "total: $((SECONDS - script_start)) s; load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$summary"
cat "$summary"
echo "(raw runs: $raw)" >&2
if awk -F'\t' '$9 <= 0 || $8 * 10 > $9 { bad = 1 } END { exit !bad }' "$raw"; then
  echo "FAIL: a run had no requests or many socket errors (see $raw)" >&2
  exit 1
fi
