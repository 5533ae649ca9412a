#!/usr/bin/env bash
# Bulk import benchmark (docs/BENCHMARKS.md, "Bulk import"): times `adserver activity import` end
# to end on a fresh data directory with the real registry, on a generated BigQuery
# token_transfers CSV (plain and gzip), and prints rows/s.
#
#   bench/import_bench.sh [--build-dir DIR] [--rows N] [--work DIR] [--binary PATH] [--repeats N]
#
# The CSV and its gzip copy are generated once per row count and kept in --work (default
# /tmp/adserver-import-bench). Needs adserver and adserver-bench-import-data in --build-dir
# (-DADSERVER_BUILD_BENCH=ON). --binary times another adserver binary on the same files
# (e.g. a copy built before a change).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="$root/build"
rows=5000000
work=/tmp/adserver-import-bench
binary=""
repeats=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --rows) rows="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --binary) binary="$2"; shift 2 ;;
    --repeats) repeats="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
adserver="${binary:-$build/adserver}"
mkdir -p "$work"

fresh_data_dir() {
  local dir="$1"
  rm -rf "$dir"
  "$build/adserver" projects import --data "$dir" "$root"/tools/registry/out/*.json > /dev/null
}

csv="$work/token_transfers-$rows.csv"
if [[ ! -s "$csv" ]]; then
  fresh_data_dir "$work/registry"
  echo "generating $csv" >&2
  "$build/adserver-bench-import-data" --data "$work/registry" --rows "$rows" --out "$csv.tmp"
  mv "$csv.tmp" "$csv"
fi
if [[ ! -s "$csv.gz" ]]; then
  echo "compressing $csv.gz (gzip -6)" >&2
  gzip -6 -c "$csv" > "$csv.gz.tmp"
  mv "$csv.gz.tmp" "$csv.gz"
fi

# One import on a fresh data directory; prints: input, wall s, user+sys s, rows/s (wall).
run() {
  local label="$1" file="$2" data="$work/data"
  fresh_data_dir "$data"
  sync
  local timing summary
  timing="$( { /usr/bin/time -f '%e %U %S' "$adserver" activity import --data "$data" "$file" \
               > "$work/summary.json"; } 2>&1 | tail -1)"
  summary="$(cat "$work/summary.json")"
  read -r wall user sys <<< "$timing"
  local read_rows
  read_rows="$(sed -E 's/.*"rows":([0-9]+).*/\1/' <<< "$summary")"
  awk -v l="$label" -v r="$read_rows" -v w="$wall" -v u="$user" -v s="$sys" 'BEGIN {
    printf "%-14s rows %d  wall %.2f s  cpu %.2f s  %.0f rows/s wall  %.0f rows/cpu-s\n",
           l, r, w, u + s, r / w, r / (u + s) }'
  echo "  $summary" | cut -c1-400
  # Re-import of the same file: the ledger makes it a no-op (nothing written).
  if [[ "$label" == csv ]]; then
    timing="$( { /usr/bin/time -f '%e %U %S' "$adserver" activity import --data "$data" "$file" \
                 > "$work/summary.json"; } 2>&1 | tail -1)"
    read -r wall user sys <<< "$timing"
    awk -v r="$read_rows" -v w="$wall" -v u="$user" -v s="$sys" 'BEGIN {
      printf "%-14s rows %d  wall %.2f s  cpu %.2f s  %.0f rows/s wall\n", "csv re-import", r, w,
             u + s, r / w }'
    grep -o '"alreadyImported":[a-z]*' "$work/summary.json" | sed 's/^/  /'
  fi
}

echo "adserver: $adserver  rows: $rows  cores: $(nproc)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < repeats; ++i)); do
  run csv "$csv"
  run csv.gz "$csv.gz"
done
