#!/usr/bin/env bash
# Identity soak (issue 20): mixed consented /v1/ads load where half the requests come from
# browsers without the identity cookie and half from browsers that keep it (bench/wrk_mix.lua
# in its `identity` mode), for --duration seconds. Samples the server's RSS and the rows of its
# identity tables every --sample seconds and checks, after --warmup seconds, that RSS stays
# within ±5 % of its value at the end of the warm-up and that identity rows do not grow.
#
#   bench/identity_soak.sh [--smoke] [--build-dir DIR] [--binary PATH] [--wallets N]
#                          [--duration SECONDS] [--warmup SECONDS] [--sample SECONDS]
#                          [--connections N] [--out DIR]
#
# Defaults: 1 M wallets, 600 s, 60 s warm-up, 10 s samples, 64 connections. adserver runs
# pinned to CPU 0 with one event loop (bench/common.sh start_adserver), wrk on CPU 1. --binary
# soaks another build of adserver (e.g. an older commit, for comparison) on the same dataset.
# --smoke: 2000 wallets, 70 s, 40 s warm-up, 5 s samples (CTest label `bench`). The warm-up
# covers the first exposures of the mix's people to the CPA campaigns (issue 15): pages of
# exposures.lmdb and the exposure buffers reach their size within ~15 s on a quiet machine,
# within ~35 s on a loaded CI machine (2026-11-26), then stay.
# Results in --out (default a fresh /tmp/adserver-soak.XXXXXX): samples.tsv (seconds, RSS KiB,
# anonymous KiB, identity rows, database bytes), summary.md. Exit 1 when a check fails.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench/common.sh
source "$here/common.sh"
root="$(dirname "$here")"
data_format="format 4"  # first line of bench-format.txt (kFormat in bench/bench_data.cc)

build_dir="$root/build-bench"
binary=""
wallets=1000000
duration=600
warmup=60
sample=10
connections=64
out_dir=""
smoke=0
while (($#)); do
  case "$1" in
    --smoke) smoke=1 ;;
    --build-dir) build_dir="$2"; shift ;;
    --binary) binary="$2"; shift ;;
    --wallets) wallets="$2"; shift ;;
    --duration) duration="$2"; shift ;;
    --warmup) warmup="$2"; shift ;;
    --sample) sample="$2"; shift ;;
    --connections) connections="$2"; shift ;;
    --out) out_dir="$2"; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
((smoke)) && wallets=2000 duration=70 warmup=40 sample=5
for tool in taskset curl wrk sqlite3; do
  command -v "$tool" >/dev/null || { echo "missing $tool (scripts/install-deps.sh)" >&2; exit 1; }
done
if [[ ! -x "$build_dir/adserver" || ! -x "$build_dir/adserver-bench-data" ]]; then
  echo "== building Release in $build_dir" >&2
  cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DADSERVER_BUILD_BENCH=ON >/dev/null
  cmake --build "$build_dir" -j"$(nproc)" --target adserver adserver-bench-data >&2
fi
[[ -z "$binary" ]] && binary="$build_dir/adserver"
work=$(mktemp -d /tmp/adserver-soak.XXXXXX)
[[ -z "$out_dir" ]] && out_dir="$work"
mkdir -p "$out_dir"
server_pid=""
wrk_pid=""
cleanup() {
  [[ -n "$wrk_pid" ]] && kill "$wrk_pid" 2>/dev/null && wait "$wrk_pid" 2>/dev/null
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work/data"
  [[ "$out_dir" != "$work" ]] && rm -rf "$work"
  return 0
}
trap cleanup EXIT

# A fresh copy of the (cached) dataset: the soak must not leave identity rows in the cache.
cache="/tmp/adserver-bench-$wallets"
((smoke)) && cache="$work/cache"
if [[ ! -f "$cache/bench-key.txt" || "$(head -1 "$cache/bench-format.txt" 2>/dev/null)" != "$data_format" ]]; then
  echo "== generating $cache ($wallets wallets)" >&2
  rm -rf "$cache.tmp"
  "$build_dir/adserver-bench-data" --data "$cache.tmp" --wallets "$wallets" >/dev/null
  rm -rf "$cache" && mv "$cache.tmp" "$cache"
fi
data="$work/data"
cp -r "$cache" "$data"
rm -f "$data"/activity.lmdb/wallets.table  # derived; rebuilt by the server
key=$(head -1 "$data/bench-key.txt")

# Load shedding off: wrk runs closed-loop at the server's full rate, where shedding answers part
# of the load with 503s; that slows the exposure warm-up below (fewer ads served per second)
# and is not what this soak measures (bench/overload.sh does). An older binary without the
# setting runs as it is.
server_args=()
if grep -q shed_after_us "$binary"; then
  bench_config "$binary" "$work/adserver.toml" '[http]' 'shed_after_us = 0'
  server_args=(--config "$work/adserver.toml")
fi
start_adserver "$binary" "$data" "$work" "${server_args[@]}"
identity_cookies "$server_port" "$key" "$data" "$work/cookies.tsv" 1024
echo "== soak: $duration s, $connections connections, $(wc -l <"$work/cookies.tsv") cookies" >&2

# Rows of every identity table (identities and links of the identity-graph design; erasures
# and the digest key of the token design).
identity_rows() {
  local total=0 table
  for table in $(sqlite3 -readonly "$data/adserver.db" \
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'identit%'" 2>/dev/null); do
    total=$((total + $(sqlite3 -readonly "$data/adserver.db" "SELECT count(*) FROM $table" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
db_bytes() { du -cb "$data"/adserver.db* | tail -1 | cut -f1; }

samples="$out_dir/samples.tsv"
printf 'seconds\trss_kib\tanon_kib\tidentity_rows\tdb_bytes\n' >"$samples"
taskset -c "$(($(nproc) > 1 ? 1 : 0))" wrk -t1 -c"$connections" -d"${duration}s" --timeout 5s \
  -s "$here/wrk_mix.lua" "http://127.0.0.1:$server_port" -- "$data" "$work/cookies.tsv" identity \
  >"$work/wrk.out" 2>&1 &
wrk_pid=$!
start=$SECONDS
while kill -0 "$wrk_pid" 2>/dev/null; do
  printf '%d\t%d\t%d\t%d\t%d\n' $((SECONDS - start)) \
    "$(awk '/^VmRSS/ {print $2}' "/proc/$server_pid/status")" \
    "$(awk '/^RssAnon/ {print $2}' "/proc/$server_pid/status")" "$(identity_rows)" "$(db_bytes)" \
    | tee -a "$samples" >&2
  sleep "$sample"
done
wait "$wrk_pid" || true
wrk_pid=""
result=$(grep '^RESULT' "$work/wrk.out" || true)
[[ -n "$result" ]] || { cat "$work/wrk.out" >&2; exit 1; }

# SIGTERM after the soak: how long until the process is gone.
stop_start=$(date +%s%N)
kill "$server_pid"
wait "$server_pid" 2>/dev/null || true
server_pid=""
stop_ms=$((($(date +%s%N) - stop_start) / 1000000))

summary="$out_dir/summary.md"
verdict=$(awk -F'\t' -v warm="$warmup" '
  NR == 1 { next }
  $1 >= warm && !base { base = $2; rows0 = $4 }
  base { if ($2 < lo || !lo) lo = $2; if ($2 > hi) hi = $2; rows1 = $4; n++ }
  END {
    if (!base) { print "FAIL no sample after the warm-up"; exit }
    dev_lo = (lo - base) * 100 / base; dev_hi = (hi - base) * 100 / base
    ok = dev_lo >= -5 && dev_hi <= 5 && rows1 <= rows0
    printf "%s RSS after warm-up %.1f MiB, then %.1f to %.1f MiB (%+.1f %% / %+.1f %%) over %d samples; identity rows %d -> %d\n",
      ok ? "PASS" : "FAIL", base / 1024, lo / 1024, hi / 1024, dev_lo, dev_hi, n, rows0, rows1
  }' "$samples")
{
  echo "identity soak: $binary, $wallets wallets, ${duration} s at $connections connections," \
    "half consented cookieless, half with cookies; warm-up ${warmup} s, samples every ${sample} s"
  echo
  echo "wrk: ${result#RESULT }"
  echo
  echo "$verdict"
  echo
  echo "SIGTERM after the soak: exited in $stop_ms ms"
} >"$summary"
cat "$summary"
[[ "$verdict" == PASS* ]]
