#!/usr/bin/env bash
# Overload benchmark (issue 18: at 2x the sustainable rate, accepted requests keep p99 <= 5 ms,
# shed ones are answered in < 1 ms, memory stays bounded). wrk is closed-loop and cannot offer
# more than the server sustains, so the steps run bench/openloop.cc (adserver-openloop), which
# sends on a fixed schedule whatever the server does.
#
#   bench/overload.sh [--smoke] [--wallets N] [--build-dir DIR] [--openloop PATH] [--seconds S]
#                     [--connections C] [--arrival kernel|tool] [--rate R] [--out DIR]
#                     [-- SERVER_ARGS...]
#
# On the bench/load.sh dataset (/tmp/adserver-bench-N, generated if missing; default 10 M
# wallets) it starts `adserver serve` with start_adserver of bench/common.sh (CPU 0, one event
# loop, SERVER_ARGS added, e.g. `-- --config shed.toml`), writes bench/wrk_mix.lua's requests to
# a file (wrk for 1 s on 1 connection with WRK_DUMP set), measures the sustainable rate R with
# wrk (closed loop, 64 connections, 5 s, CPU 1; answers less those shed, read from /metrics with
# an admin token the script sets), then offers 0.5R, 1.0R, 1.5R and 2.0R with
# adserver-openloop (CPU 1, C connections, default 64), each for S seconds (default 10) after a
# 2-second warm-up, sampling the server's VmRSS and open fds from /proc once a second. Prints
# one row per step: offered rate, accepted/s, shed/s (503 and 500), accepted p50/p99/p99.9,
# shed p99 (µs, from each request's scheduled send time), requests the client dropped (64 in
# flight on a connection), errors (connection closed with requests in flight, or unanswered),
# the server's maximum RSS (and anonymous RSS) and fds, and the p99 of how late the tool itself sent (if large, the
# client's CPU, not the server, limited the step) and of how long answers waited in the tool's
# socket before it read them (recv lag). --arrival (default kernel): a response's end is the
# kernel's receive timestamp of its bytes, so that the tool's own read delay (2R saturates its
# core on a 2-core machine) is not charged to the server; `tool` charges it (before 2026-11-26).
# --rate R: use R instead of measuring it, e.g. the R of a run without shedding (with shedding
# on, wrk's closed loop can make the server shed; the script prints how many). Results in --out
# (default a fresh /tmp/adserver-overload.*):
# summary.md, step-F.json (adserver-openloop --json), step-F.txt (its table), samples-F.tsv,
# requests.http (the requests sent).
# Builds adserver, adserver-bench-data and adserver-openloop in --build-dir (default build)
# if missing. Loopback only.
# --smoke: tiny dataset, 1-second steps and rate measurement; checks the harness works (CTest
# label `bench`): fails if the 0.5R step got no 2xx or had errors. Asserts nothing about timing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench/common.sh
source "$here/common.sh"
root="$(dirname "$here")"
# First line of DIR/bench-format.txt written by the generator (kFormat in bench/bench_data.cc).
data_format="format 4"

smoke=0
wallets=10000000
campaigns=10000
build_dir="$root/build"
openloop=""
seconds=10
warmup=2
rate_seconds=5
connections=64
arrival=kernel
given_rate=""
out_dir=""
server_args=()
while (($#)); do
  case "$1" in
    --smoke) smoke=1 ;;
    --wallets) wallets="$2"; shift ;;
    --build-dir) build_dir="$2"; shift ;;
    --openloop) openloop="$2"; shift ;;
    --seconds) seconds="$2"; shift ;;
    --connections) connections="$2"; shift ;;
    --arrival) arrival="$2"; shift ;;
    --rate)
      given_rate="$2"
      [[ "$given_rate" =~ ^[1-9][0-9]*$ ]] || { echo "--rate: requests/s, a whole number" >&2; exit 2; }
      shift ;;
    --out) out_dir="$2"; shift ;;
    --) shift; server_args=("$@"); break ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
if ((smoke)); then
  wallets=2000 campaigns=200 seconds=1 warmup=1 rate_seconds=1
fi
[[ -z "$openloop" ]] && openloop="$build_dir/adserver-openloop"
script_start=$SECONDS

for tool in taskset curl wrk python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool (scripts/install-deps.sh)" >&2; exit 1; }
done
ncpu=$(nproc)
client_cpu=$((ncpu > 1 ? 1 : 0))

if [[ ! -x "$build_dir/adserver" || ! -x "$build_dir/adserver-bench-data" || ! -x "$openloop" ]]; then
  echo "== building Release in $build_dir" >&2
  cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DADSERVER_BUILD_BENCH=ON >/dev/null
  cmake --build "$build_dir" -j"$ncpu" --target adserver adserver-bench-data adserver-openloop >&2
fi

work=$(mktemp -d /tmp/adserver-overload.XXXXXX)
[[ -z "$out_dir" ]] && out_dir="$work"
mkdir -p "$out_dir"
server_pid=""
sampler_pid=""
cleanup() {
  [[ -n "$sampler_pid" ]] && kill "$sampler_pid" 2>/dev/null && wait "$sampler_pid" 2>/dev/null
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  # Keep only the results when they were written into $work.
  if [[ "$out_dir" != "$work" ]]; then rm -rf "$work"; else rm -rf "$work/data"; fi
  return 0
}
trap cleanup EXIT

# --- data (the cache of bench/load.sh; the smoke run generates afresh) ------------------------
if ((smoke)); then
  data="$work/data"
else
  data="/tmp/adserver-bench-$wallets"
fi
if [[ ! -f "$data/bench-key.txt" || "$(head -1 "$data/bench-format.txt" 2>/dev/null)" != "$data_format" ]]; then
  echo "== generating $data ($wallets wallets, $campaigns campaigns)" >&2
  rm -rf "$data.tmp"
  "$build_dir/adserver-bench-data" --data "$data.tmp" --wallets "$wallets" \
    --campaigns "$campaigns" >/dev/null 2>&1
  rm -rf "$data"
  mv "$data.tmp" "$data"
fi

# --- server, requests, sustainable rate -------------------------------------------------------
echo "== starting adserver on CPU 0 ($data${server_args[*]:+; ${server_args[*]}})" >&2
# The admin token lets the script read /metrics (the shed count while wrk measures R).
admin_token="overload-$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')"
export ADSERVER_ADMIN_TOKEN="$admin_token"
start_adserver "$build_dir/adserver" "$data" "$work" "${server_args[@]}" || exit 1
url="http://127.0.0.1:$server_port"
requests="$out_dir/requests.http"
WRK_DUMP="$requests" taskset -c "$client_cpu" wrk -t1 -c1 -d1s -s "$here/wrk_mix.lua" "$url" \
  -- "$data" >/dev/null
[[ -s "$requests" ]] || { echo "wrk_mix.lua wrote no requests" >&2; exit 1; }

# Requests the server has shed so far (adserver_http_requests_shed_total).
shed_total() {
  curl -sf -H "Authorization: Bearer $admin_token" "$url/metrics" |
    awk '$1 == "adserver_http_requests_shed_total" { v = $2 } END { print v + 0 }'
}
if [[ -n "$given_rate" ]]; then
  sustainable=$given_rate
  echo "   sustainable rate given (--rate): $sustainable req/s" >&2
else
shed_before=$(shed_total)
line=$(taskset -c "$client_cpu" wrk -t1 -c64 -d"${rate_seconds}s" --timeout 5s \
  -s "$here/wrk_mix.lua" "$url" -- "$data" | grep '^RESULT')
shed_during=$(($(shed_total) - shed_before))
# With shedding on, wrk's closed loop (64 requests always in flight) may itself make the loop
# shed: its answers then count cheap shed ones, and R is too high; counting only served ones
# would make it too low (the sheds took CPU). Said, not corrected: measure R without shedding
# when that count is not small (`--rate`).
sustainable=$(echo "$line" | tr ' ' '\n' | awk -F= '$1 == "requests" { q = $2 }
  $1 == "duration_us" { d = $2 } END { printf "%.0f", (d > 0 ? q / (d / 1e6) : 0) }')
echo "   sustainable (wrk, 64 connections, ${rate_seconds}s): $sustainable req/s," \
  "of which $shed_during answers shed over the run; $line" >&2
fi
((sustainable > 0)) || { echo "wrk got no answers" >&2; exit 1; }

# --- steps ------------------------------------------------------------------------------------
# sample PID FILE: appends "rss_kib fds anon_kib" for PID once a second until killed (RSS
# includes the pages of mapped files, e.g. LMDB; RssAnon is the heap and the wallet table copy).
sample() {
  local mem fds
  while [[ -r /proc/$1/status ]]; do
    mem=$(awk '/^VmRSS/ { r = $2 } /^RssAnon/ { a = $2 } END { print r + 0, a + 0 }' \
      "/proc/$1/status" 2>/dev/null || echo "0 0")
    fds=$(find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
    echo "${mem% *} $fds ${mem#* }" >>"$2"
    sleep 1
  done
}

# step FACTOR: one adserver-openloop run at FACTOR x the sustainable rate; writes
# step-FACTOR.json/.txt and samples-FACTOR.tsv to the output directory.
step() {
  local factor=$1 rate
  rate=$(awk -v r="$sustainable" -v f="$factor" 'BEGIN { printf "%.0f", r * f }')
  : >"$out_dir/samples-$factor.tsv"
  sample "$server_pid" "$out_dir/samples-$factor.tsv" &
  sampler_pid=$!
  taskset -c "$client_cpu" "$openloop" --port "$server_port" --rate "$rate" \
    --duration "$seconds" --warmup "$warmup" --connections "$connections" \
    --requests "$requests" --arrival "$arrival" --json >"$out_dir/step-$factor.json" 2>"$out_dir/step-$factor.txt" ||
    { cat "$out_dir/step-$factor.txt" >&2; exit 1; }
  kill "$sampler_pid" 2>/dev/null || true
  wait "$sampler_pid" 2>/dev/null || true
  sampler_pid=""
  echo "-- ${factor}R" >&2
  cat "$out_dir/step-$factor.txt" >&2
}

factors="0.5 1.0 1.5 2.0"
for factor in $factors; do step "$factor"; done

# --- report -----------------------------------------------------------------------------------
# row FACTOR: one markdown row from step-FACTOR.json and samples-FACTOR.tsv.
row() {
  local max_rss max_fds max_anon
  read -r max_rss max_fds max_anon < <(awk '{ if ($1 > r) r = $1; if ($2 > f) f = $2
    if ($3 > a) a = $3 } END { printf "%.0f %d %.0f\n", r / 1024, f, a / 1024 }' \
    "$out_dir/samples-$1.tsv")
  python3 - "$out_dir/step-$1.json" "$1" "$max_rss ($max_anon)" "$max_fds" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a, s = r["accepted"], r["shed"]
print(f"| {sys.argv[2]}R | {r['rate']:.0f} | {a['rate']:.0f} | {s['rate']:.0f} | {a['p50_us']} | "
      f"{a['p99_us']} | {a['p999_us']} | {s['p99_us'] if s['count'] else '-'} | {r['dropped']} | "
      f"{r['errors']} | {sys.argv[3]} | {sys.argv[4]} | {r['send_lag']['p99_us']} | "
      f"{r['recv_lag']['p99_us']} |")
PY
}

summary="$out_dir/summary.md"
{
  echo "overload: $wallets wallets ($data), adserver on CPU 0 (one event loop${server_args[*]:+;" \
    "${server_args[*]}}), adserver-openloop on CPU $client_cpu with" \
    "$connections connections; sustainable rate R = $sustainable req/s (${given_rate:+given;}" \
    "${given_rate:-wrk, 64 connections, ${rate_seconds}s}); ${seconds}s steps after ${warmup}s warm-up; latencies in µs from the" \
    "scheduled send time to the answer's arrival ($arrival); load average before:" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| step | offered/s | accepted/s | shed/s | acc p50 | acc p99 | acc p99.9 | shed p99 | client drops | errors | RSS (anon) max MB | fds max | tool lag p99 | recv lag p99 |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for factor in $factors; do row "$factor"; done
  echo
  echo "total: $((SECONDS - script_start)) s; load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$summary"
cat "$summary"
echo "(step results: $out_dir)" >&2

# The harness worked: at half the sustainable rate there were 2xx answers and no errors.
# Nothing about speed is asserted.
if ! python3 - "$out_dir/step-0.5.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = sum(n for s, n in r["statuses"].items() if s.startswith("2"))
sys.exit(0 if ok > 0 and r["errors"] == 0 else 1)
PY
then
  echo "FAIL: at 0.5R no 2xx answers or errors (see $out_dir/step-0.5.json)" >&2
  exit 1
fi
