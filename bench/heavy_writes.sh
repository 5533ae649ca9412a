#!/usr/bin/env bash
# Serving under heavy writes (issue 18 item 9): p99 of ad requests at half capacity while
# `adserver activity import` loads a large CSV into the live data directory, and after it while
# the server brings its wallet table up to date. Goal: p99 at most 3x the quiet baseline, no
# errors.
#
#   bench/heavy_writes.sh [--build-dir DIR] [--wallets N] [--campaigns M] [--rows R]
#                         [--window SECONDS] [--rate REQ_PER_S] [--out DIR] [--smoke]
#                         [-- IMPORT_ARGS...]
#
# Defaults: build/, 1 M wallets, 1 k campaigns, 3 M rows (the issue's case), 5-second windows.
# Copies the bench dataset (generated once into /tmp/adserver-bench-N-cM, as bench/overload.sh
# does) to a scratch directory, writes the CSV once (/tmp/adserver-heavy-R.csv, from
# adserver-bench-import-data), starts `adserver serve` with start_adserver of bench/common.sh
# (CPU 0, one event loop), measures the sustainable rate with wrk (64 connections, 5 s), then
# sends bench/wrk_mix.lua's requests with adserver-openloop (CPU 1) at half that rate:
#  1. baseline: two quiet windows;
#  2. import: `adserver activity import --data DIR CSV [IMPORT_ARGS]`, not pinned (the
#     scheduler puts it where it likes, as on a production box), with windows back to back until
#     it has finished and three more (the server's wallet table catches up after the commit).
# Prints one row per window (p50, p99, p99.9, errors, what ran) and the worst window's p99 over
# the baseline's. Results in --out (default a fresh /tmp/adserver-heavy.XXXXXX).
# --smoke: 20 k wallets, 200 k rows, 1-second windows (CTest label `bench`; checks the harness,
# asserts nothing about latency).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench/common.sh
source "$here/common.sh"
root="$(dirname "$here")"
data_format="format 4"  # bench/load.sh's data_format

build_dir="$root/build"
wallets=1000000
campaigns=1000
rows=3000000
window=5
rate=""
out_dir=""
smoke=0
import_args=()
while (($#)); do
  case "$1" in
    --build-dir) build_dir="$2"; shift ;;
    --wallets) wallets="$2"; shift ;;
    --campaigns) campaigns="$2"; shift ;;
    --rows) rows="$2"; shift ;;
    --window) window="$2"; shift ;;
    --rate) rate="$2"; shift ;;
    --out) out_dir="$2"; shift ;;
    --smoke) smoke=1 ;;
    --) shift; import_args=("$@"); break ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
if ((smoke)); then wallets=20000 campaigns=200 rows=200000 window=1; fi
for tool in taskset wrk curl python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool (scripts/install-deps.sh)" >&2; exit 1; }
done
for bin in adserver adserver-openloop adserver-bench-data adserver-bench-import-data; do
  [[ -x "$build_dir/$bin" ]] ||
    { echo "no $build_dir/$bin (configure with -DADSERVER_BUILD_BENCH=ON)" >&2; exit 1; }
done
[[ -n "$out_dir" ]] || out_dir=$(mktemp -d /tmp/adserver-heavy.XXXXXX)
mkdir -p "$out_dir"
work=$(mktemp -d /tmp/adserver-heavy-work.XXXXXX)
server_pid="" import_pid=""
cleanup() {
  [[ -n "$import_pid" ]] && kill "$import_pid" 2>/dev/null
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
  return 0
}
trap cleanup EXIT

# --- data ---------------------------------------------------------------------------------------
cache="/tmp/adserver-bench-$wallets-c$campaigns"
if [[ ! -f "$cache/bench-key.txt" || "$(head -1 "$cache/bench-format.txt" 2>/dev/null)" != "$data_format" ]]; then
  echo "== generating $cache ($wallets wallets, $campaigns campaigns)" >&2
  rm -rf "$cache.tmp"
  "$build_dir/adserver-bench-data" --data "$cache.tmp" --wallets "$wallets" \
    --campaigns "$campaigns" >/dev/null 2>&1
  rm -rf "$cache"
  mv "$cache.tmp" "$cache"
fi
csv="/tmp/adserver-heavy-$rows.csv"
if [[ ! -s "$csv" ]]; then
  echo "== writing $csv ($rows transfers)" >&2
  "$build_dir/adserver-bench-import-data" --data "$cache" --rows "$rows" --out "$csv.tmp" >/dev/null
  mv "$csv.tmp" "$csv"
fi
data="$work/data"
cp -a "$cache" "$data"  # the import writes into it

# --- server, requests, rate ---------------------------------------------------------------------
start_adserver "$build_dir/adserver" "$data" "$work" || exit 1
url="http://127.0.0.1:$server_port"
requests="$work/requests.http"
WRK_DUMP="$requests" taskset -c 1 wrk -t1 -c1 -d1s -s "$here/wrk_mix.lua" "$url" -- "$data" \
  >/dev/null
if [[ -z "$rate" ]]; then
  line=$(taskset -c 1 wrk -t1 -c64 -d5s --timeout 5s -s "$here/wrk_mix.lua" "$url" -- "$data" |
    grep '^RESULT')
  rate=$(echo "$line" | tr ' ' '\n' | awk -F= '$1 == "requests" { q = $2 }
    $1 == "duration_us" { d = $2 } END { printf "%.0f", (d > 0 ? q / (d / 1e6) / 2 : 0) }')
fi
((rate > 0)) || { echo "no rate" >&2; exit 1; }
echo "== $wallets wallets, $rows rows, half capacity = $rate req/s, ${window}s windows" >&2

# window NAME: one adserver-openloop run of $window seconds; appends a row to windows.tsv.
n=0
window_run() {
  n=$((n + 1))
  taskset -c 1 "$build_dir/adserver-openloop" --port "$server_port" --rate "$rate" \
    --duration "$window" --connections 64 --requests "$requests" --drain 2 --json \
    >"$work/w$n.json" 2>/dev/null || { echo "adserver-openloop failed" >&2; exit 1; }
  python3 - "$work/w$n.json" "$n" "$1" >>"$out_dir/windows.tsv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a = r["accepted"]
print(f"{sys.argv[2]}\t{sys.argv[3]}\t{a['rate']:.0f}\t{a['p50_us']}\t{a['p99_us']}\t"
      f"{a['p999_us']}\t{r['errors'] + r['dropped'] + r['shed']['count']}")
PY
  tail -1 "$out_dir/windows.tsv" >&2
}

: >"$out_dir/windows.tsv"
taskset -c 1 "$build_dir/adserver-openloop" --port "$server_port" --rate "$rate" --duration 2 \
  --connections 64 --requests "$requests" --drain 2 >/dev/null 2>&1 || true  # warm-up
window_run baseline
window_run baseline

import_log="$out_dir/import.log"
import_start=$(date +%s%N)
"$build_dir/adserver" activity import --data "$data" "$csv" "${import_args[@]}" \
  >"$import_log" 2>&1 &
import_pid=$!
import_ms=""
after=0
for _ in $(seq 60); do
  if [[ -z "$import_ms" ]] && ! kill -0 "$import_pid" 2>/dev/null; then
    wait "$import_pid" || { echo "the import failed:" >&2; cat "$import_log" >&2; exit 1; }
    import_pid=""
    import_ms=$((($(date +%s%N) - import_start) / 1000000))
  fi
  if [[ -n "$import_ms" ]]; then
    after=$((after + 1))
    ((after > 3)) && break
    window_run after-import
  else
    window_run import
  fi
done
[[ -n "$import_ms" ]] || { echo "the import did not finish" >&2; exit 1; }

# --- report -------------------------------------------------------------------------------------
{
  echo "heavy writes: $wallets wallets, $rows-row CSV import (${import_ms} ms), $rate req/s" \
    "(half capacity), ${window}s windows; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| window | phase | req/s | p50 µs | p99 µs | p99.9 µs | errors |"
  echo "|---:|---|---:|---:|---:|---:|---:|"
  awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }' \
    "$out_dir/windows.tsv"
  echo
  awk -F'\t' '$2 == "baseline" { if ($5 > b) b = $5 } $2 != "baseline" { if ($5 > w) w = $5; e += $7 }
    END { printf "RESULT baseline_p99_us=%d worst_p99_us=%d ratio=%.2f errors=%d\n", b, w,
          (b > 0 ? w / b : 0), e }' "$out_dir/windows.tsv"
} | tee "$out_dir/summary.md"
