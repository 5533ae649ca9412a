#!/usr/bin/env bash
# Click redirect throughput (issue 15): GET /v1/click/{token} against `adserver serve` pinned to
# one core (CPU 0, one event loop), wrk on CPU 1. Every click is written durably (SQLite WAL,
# group commit) before its 302 leaves.
#
#   bench/click_load.sh [--smoke] [--build-dir DIR] [--tokens N] [--duration SECONDS]
#                       [--connections "16 64 256"] [--worker-threads N] [--out DIR]
#
# Generates a small synthetic dataset (20 k wallets, 1 k campaigns), serves N ads (default 2000)
# with its live key to collect N real click paths, then runs wrk (bench/wrk_click.lua)
# per connection count: the first click of each token is billed, the rest are duplicates, all of
# them rows. Prints clicks/s, p50/p99, server CPU µs per click, and checks the number of click
# rows in the database equals the 302s wrk counted. --smoke: 200 tokens, 1-second runs at 16
# connections (CTest label `bench`; asserts the harness and the row count, not the speed).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
build_dir="$root/build-bench"
tokens=2000
duration=10
connections="16 64 256"
worker_threads=""
out_dir=""
smoke=0
while (($#)); do
  case "$1" in
    --smoke) smoke=1 ;;
    --build-dir) build_dir="$2"; shift ;;
    --tokens) tokens="$2"; shift ;;
    --duration) duration="$2"; shift ;;
    --connections) connections="$2"; shift ;;
    --worker-threads) worker_threads="$2"; shift ;;
    --out) out_dir="$2"; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
if ((smoke)); then tokens=200; duration=1; connections="16"; fi
bin="$build_dir/adserver"
[[ -x "$bin" ]] || { echo "no $bin (build Release first)" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk missing (scripts/install-deps.sh)" >&2; exit 1; }
out_dir=${out_dir:-$(mktemp -d /tmp/adserver-clicks.XXXXXX)}
mkdir -p "$out_dir"
work=$(mktemp -d /tmp/adserver-clicks-work.XXXXXX)
server_pid=""
cleanup() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

config="$work/adserver.toml"
{
  echo "[http]"
  [[ -n "$worker_threads" ]] && echo "worker_threads = $worker_threads"
  echo "[events]"
  echo "click_ttl_seconds = 86400"
  # One client address clicking thousands of times a second, right after the serves: the rate
  # limits and the too-fast window are off so that clicks stay valid; the other invalid-traffic
  # checks (user agent, crawler list, blocklist, same user agent) still run on every click.
  echo "[traffic]"
  echo "min_click_delay_ms = 0"
  echo "click_limits = []"
} >"$config"
export ADSERVER_PUBLIC_URL="http://clicks.bench.test"
# A small synthetic dataset (bench/bench_data.cc): its live key and wallets that get ads.
"$build_dir/adserver-bench-data" --data "$work/data" --wallets 20000 --campaigns 1000 >/dev/null
taskset -c 0 "$bin" serve --data "$work/data" --listen 127.0.0.1:0 --io-threads 1 \
  --log-level warn --config "$config" --ready-file "$work/ready" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 3000); do [[ -s "$work/ready" ]] && break; sleep 0.01; done
[[ -s "$work/ready" ]] || { cat "$work/server.log" >&2; exit 1; }
port=$(head -1 "$work/ready")

# N real click paths: ad requests over the known wallets (keep-alive), each 200's ctaUrl path.
python3 - "$port" "$work/data" "$tokens" >"$work/paths.txt" <<'PY'
import http.client, json, sys
port, data, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
key = open(data + "/bench-key.txt").readline().strip()
wallets = [w.strip() for w in open(data + "/wallets-known.txt")]
conn = http.client.HTTPConnection("127.0.0.1", port)
got = tried = 0
while got < n:
    if tried > 20 * n: raise SystemExit(f"only {got} ads in {tried} requests")
    body = json.dumps({"walletAddresses": [wallets[tried % len(wallets)]], "imageFormat": "NO_IMAGE"})
    tried += 1
    conn.request("POST", "/v1/ads", body, {"Content-Type": "application/json", "x-api-key": key,
                                           "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) adserver-bench"})
    r = conn.getresponse(); data_ = r.read()
    if r.status != 200: continue
    print(json.loads(data_)["ctaUrl"][len("http://clicks.bench.test"):]); got += 1
PY
echo "== $(wc -l <"$work/paths.txt") click paths, server pid $server_pid port $port" >&2

clk_tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
raw="$out_dir/raw.tsv"
: >"$raw"
total=0
for conns in $connections; do
  before=$(cpu_ticks "$server_pid")
  line=$(taskset -c 1 wrk -t1 -c"$conns" -d"${duration}s" --timeout 5s -s "$here/wrk_click.lua" \
    "http://127.0.0.1:$port" -- "$work/paths.txt" | grep '^RESULT')
  after=$(cpu_ticks "$server_pid")
  eval "$(echo "${line#RESULT }" | tr ' ' '\n' | sed 's/^/r_/')"
  # 302 is not 2xx: wrk counts every redirect as non2xx; errors are socket errors.
  total=$((total + r_requests))
  awk -v c="$conns" -v q="$r_requests" -v d="$r_duration_us" -v p50="$r_p50_us" -v p99="$r_p99_us" \
    -v p999="$r_p999_us" -v e="$r_errors" -v t=$((after - before)) -v tck="$clk_tck" 'BEGIN {
      printf "%d\t%.0f\t%d\t%d\t%d\t%.1f\t%d\t%d\n", c, q / (d / 1e6), p50, p99, p999,
        (q > 0 ? t * 1e6 / tck / q : 0), e, q }' >>"$raw"
  tail -1 "$raw" >&2
done

# Every answered click is a row (wrk may have a few requests in flight at its end).
rows=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from clicks').fetchone()[0])" "$work/data/adserver.db")
summary="$out_dir/summary.md"
{
  echo "click redirect: adserver on CPU 0 (1 event loop${worker_threads:+, $worker_threads workers}), wrk on CPU 1, $(wc -l <"$work/paths.txt") tokens, ${duration}s runs"
  echo
  echo "| connections | clicks/s | p50 µs | p99 µs | p99.9 µs | CPU µs/click | errors |"
  echo "|---:|---:|---:|---:|---:|---:|---:|"
  awk -F'\t' '{ printf "| %d | %d | %d | %d | %d | %.1f | %d |\n", $1, $2, $3, $4, $5, $6, $7 }' "$raw"
  echo
  echo "click rows in the database: $rows (wrk counted $total responses)"
} >"$summary"
cat "$summary"
# wrk stops mid-flight: at most one request per connection can be written without being counted.
max_conns=$(echo "$connections" | tr ' ' '\n' | sort -n | tail -1)
if ((rows < total || rows > total + max_conns * $(echo "$connections" | wc -w))); then
  echo "FAIL: $rows click rows for $total answered clicks" >&2
  exit 1
fi
