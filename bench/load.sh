#!/usr/bin/env bash
# Load benchmark (issue 6): adserver vs nginx answering the same requests on the same core, and
# adserver's memory and start-up at 1 M and 10 M wallets. One command reproduces the whole table:
#
#   bench/load.sh [--smoke] [--startup-only] [--build-dir DIR] [--wallets N] [--campaigns M]
#                 [--duration SECONDS] [--connections "8 64 256"] [--repeats R] [--out DIR]
#                 [--startup-wallets "1000000 N"] [--cookies] [--io-threads N]
#
# Defaults: 10 M wallets, 10 k campaigns, 10 s runs at 8/64/256 connections, 5 repeats: about
# 6.5 minutes on 2 cores with a cold cache (generating 10 M and 1 M wallets: about 45 s), under
# the issue's 10. Single runs on a shared VM move by 10 %; five interleaved repeats keep one
# noisy stretch from deciding a median.
# Builds Release with -DADSERVER_BUILD_BENCH=ON if the binaries are missing, generates each data
# directory it needs (cached in /tmp/adserver-bench-N[-cM]; regenerated when its
# bench-format.txt stamp is missing or differs from data_format below, e.g. a cache made before
# the LMDB activity index), then:
#  1. Memory and start-up: for each --startup-wallets dataset (default 1 M and --wallets),
#     starts `adserver serve` R times and reports the median time from exec to ready (the
#     --ready-file appears; page cache warm) and the RSS at ready, all and anonymous.
#  2. Load: starts `adserver serve` on the --wallets dataset pinned to CPU 0 with one event loop
#     and nginx (nginx-light, 1 worker, own temporary prefix) pinned to CPU 0 too, returning one
#     fixed ad body of the same size. wrk (pinned to CPU 1) sends bench/wrk_mix.lua's mix to
#     each, interleaved A B A B per connection count. Prints medians: req/s, p50/p99/p99.9,
#     server CPU µs per request (utime+stime from /proc/PID/stat over the run / requests), RSS,
#     and the ratios adserver/nginx; then the ratios of each adserver run to the nginx run right
#     after it (median and range over the pairs).
# Loopback only. Results in --out (default a fresh /tmp/adserver-load.XXXXXX): summary.md,
# raw.tsv (one line per run), startup.tsv (one line per start).
# --startup-only: step 1 only (no nginx, no wrk).
# --cookies: every current-variant request (70 % of the mix) is a consented browser carrying its
# identity cookie (issue 20): 256 cookies taken from the server before the runs, half the
# requests presenting the cookie's wallet again, half none. nginx gets the same requests.
# --io-threads N: adserver's event loops (default 1; 0 = the default configuration, one loop per
# CPU the process may use, which pinned to CPU 0 is one too).
# --smoke: tiny dataset, one start, 1-second runs at 8 connections; checks the harness works
# (CTest label `bench`), asserts nothing about timing.
# --cluster: nodes in cluster mode on PostgreSQL and Redis against nginx, for 1, 2 and 3 nodes
# (bench/load_cluster.sh, which takes the other arguments; --help there).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for arg in "$@"; do
  [[ "$arg" == --cluster ]] && exec "$here/load_cluster.sh" "$@"
done
# shellcheck source=bench/common.sh
source "$here/common.sh"
root="$(dirname "$here")"
# First line of DIR/bench-format.txt written by the generator (kFormat in bench/bench_data.cc).
data_format="format 4"

smoke=0
startup_only=0
build_dir="$root/build-bench"
wallets=10000000
campaigns=10000
duration=10
connections="8 64 256"
repeats=5
out_dir=""
startup_wallets=""
cookies=0
io_threads=1
while (($#)); do
  case "$1" in
    --smoke) smoke=1 ;;
    --startup-only) startup_only=1 ;;
    --build-dir) build_dir="$2"; shift ;;
    --wallets) wallets="$2"; shift ;;
    --campaigns) campaigns="$2"; shift ;;
    --duration) duration="$2"; shift ;;
    --connections) connections="$2"; shift ;;
    --repeats) repeats="$2"; shift ;;
    --out) out_dir="$2"; shift ;;
    --startup-wallets) startup_wallets="$2"; shift ;;
    --cookies) cookies=1 ;;
    --io-threads) io_threads="$2"; shift ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
if ((smoke)); then
  wallets=2000 campaigns=200 duration=1 connections="8" repeats=1 startup_wallets=2000
fi
# 1 M (the issue's reference point) and the load dataset, each once.
[[ -z "$startup_wallets" ]] && startup_wallets=$(printf '%s\n' 1000000 "$wallets" | awk '!seen[$0]++')
script_start=$SECONDS

tools="taskset curl"
((startup_only)) || tools+=" wrk nginx"
for tool in $tools; do
  command -v "$tool" >/dev/null || { echo "missing $tool (scripts/install-deps.sh)" >&2; exit 1; }
done
ncpu=$(nproc)
server_cpu=0
client_cpu=$((ncpu > 1 ? 1 : 0))

# --- build -----------------------------------------------------------------------------------
ensure_bench_build "$build_dir" adserver adserver-bench-data

work=$(mktemp -d /tmp/adserver-load.XXXXXX)
[[ -z "$out_dir" ]] && out_dir="$work"
mkdir -p "$out_dir"
raw="$out_dir/raw.tsv"
startup_tsv="$out_dir/startup.tsv"
: >"$raw"
: >"$startup_tsv"
server_pid=""
nginx_pid=""
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  [[ -n "$nginx_pid" ]] && kill -QUIT "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  # Keep only the results (raw.tsv, summary.md, logs) when they were written into $work.
  if [[ "$out_dir" != "$work" ]]; then rm -rf "$work"; else rm -rf "$work/data" "$work/nginx"; fi
  return 0
}
trap cleanup EXIT

# --- data (cached) ---------------------------------------------------------------------------
data_dir_for() {  # data_dir_for WALLETS
  # The smoke run always generates afresh (0.3 s), so it never trusts a stale or shared cache.
  if ((smoke)); then echo "$work/data"; return; fi
  local dir="/tmp/adserver-bench-$1"
  [[ "$campaigns" != 10000 ]] && dir+="-c$campaigns"
  echo "$dir"
}
generated=""  # "N wallets: S s, SIZE; " per dataset generated by this run
ensure_data() {  # ensure_data WALLETS: generates the dataset unless cached in this format
  local n=$1 dir t0
  dir=$(data_dir_for "$n")
  if [[ -f "$dir/bench-key.txt" && "$(head -1 "$dir/bench-format.txt" 2>/dev/null)" == "$data_format" ]]; then
    return
  fi
  echo "== generating $dir ($n wallets, $campaigns campaigns)" >&2
  t0=$(date +%s%N)
  rm -rf "$dir.tmp"
  "$build_dir/adserver-bench-data" --data "$dir.tmp" --wallets "$n" --campaigns "$campaigns" \
    >/dev/null
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
  local secs size
  secs=$(awk -v ns=$(($(date +%s%N) - t0)) 'BEGIN { printf "%.0f", ns / 1e9 }')
  size=$(du -sh "$dir" | cut -f1)
  echo "   generated in ${secs} s, $size" >&2
  generated+="$n wallets: ${secs} s, $size; "
}
((startup_only)) || ensure_data "$wallets"
for n in $startup_wallets; do ensure_data "$n"; done
data=$(data_dir_for "$wallets")

# --- helpers ---------------------------------------------------------------------------------
clk_tck=$(getconf CLK_TCK)
rss_kib() {
  local total=0 pid
  for pid in "$1" $(pgrep -P "$1" || true); do
    total=$((total + $(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
# Anonymous memory (heap, not mapped files) of one process.
rss_anon_kib() {
  awk '/^RssAnon/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0
}
wait_for() {  # wait_for SECONDS COMMAND...
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.01
  done
}

# --- adserver --------------------------------------------------------------------------------
# start_adserver_timed DATA: `adserver serve` on CPU 0, timed (start_adserver of common.sh also
# waits for the wallet table); sets server_pid, server_port, ready_ms (exec
# to ready file), ready_rss and ready_anon (KiB at ready).
start_adserver_timed() {
  local start_ns
  rm -f "$work/ready"
  bench_config "$build_dir/adserver" "$work/bench.toml"  # bench/common.sh
  start_ns=$(date +%s%N)
  taskset -c "$server_cpu" "$build_dir/adserver" serve --data "$1" --listen 127.0.0.1:0 \
    --io-threads "$io_threads" --log-level warn --config "$work/bench.toml" \
    --ready-file "$work/ready" >"$work/adserver.log" 2>&1 &
  server_pid=$!
  wait_for 600 test -s "$work/ready" || { cat "$work/adserver.log" >&2; exit 1; }
  ready_ms=$((($(date +%s%N) - start_ns) / 1000000))
  server_port=$(head -1 "$work/ready")
  ready_rss=$(rss_kib "$server_pid")
  ready_anon=$(rss_anon_kib "$server_pid")
}
stop_adserver() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

# Memory and start-up: one line per start in startup.tsv (wallets, rep, ready ms, RSS, anon).
echo "== start-up: wallets rep ready_ms rss_kib anon_kib" >&2
for n in $startup_wallets; do
  for ((rep = 1; rep <= repeats; ++rep)); do
    start_adserver_timed "$(data_dir_for "$n")"
    stop_adserver
    printf '%s\t%d\t%d\t%d\t%d\n' "$n" "$rep" "$ready_ms" "$ready_rss" "$ready_anon" \
      | tee -a "$startup_tsv" >&2
  done
done

startup_table() {
  echo "| wallets | data dir | ready ms (median) | ready ms (min–max) | RSS at ready MiB | anon MiB |"
  echo "|---|---|---|---|---|---|"
  local n dir
  for n in $startup_wallets; do
    dir=$(data_dir_for "$n")
    awk -F'\t' -v n="$n" -v size="$(du -sh "$dir" | cut -f1)" '
      $1 == n { ms[++k] = $3; rss[k] = $4; anon[k] = $5 }
      function med(a,   i, j, t, c) { c = k
        for (i = 1; i <= c; ++i) for (j = i + 1; j <= c; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2 }
      END { if (!k) exit
        lo = ms[1]; hi = ms[1]; for (i = 2; i <= k; ++i) { if (ms[i] < lo) lo = ms[i]; if (ms[i] > hi) hi = ms[i] }
        printf "| %d | %s | %.0f | %d–%d | %.0f | %.0f |\n", n, size, med(ms), lo, hi,
          med(rss) / 1024, med(anon) / 1024 }' "$startup_tsv"
  done
}

if ((startup_only)); then
  summary="$out_dir/summary.md"
  {
    echo "adserver memory and start-up ($campaigns campaigns, $repeats starts each, page cache warm)"
    echo
    startup_table
    [[ -n "$generated" ]] && echo && echo "generated: ${generated%; }"
    echo "total: $((SECONDS - script_start)) s"
  } >"$summary"
  cat "$summary"
  exit 0
fi

key=$(head -1 "$data/bench-key.txt")
echo "== starting adserver on CPU $server_cpu ($data)" >&2
start_adserver_timed "$data"
echo "   ready in ${ready_ms} ms, RSS $((ready_rss / 1024)) MiB, port $server_port" >&2
# Serving is ready at once; lookups move from LMDB to the wallet table once it is built (the
# first start on a dataset builds it, ~15 s at 10 M wallets; later starts map it), then to its
# in-memory copy (~1 s more at 10 M).
table_wait_start=$SECONDS
wait_for 600 sh -c "curl -sf http://127.0.0.1:$server_port/readyz | grep -q '\"walletTableInMemory\":true'" ||
  { echo "wallet table not in memory after 600 s (see the server log)" >&2; exit 1; }
echo "   wallet table in memory after $((SECONDS - table_wait_start)) s more" >&2

# A real 200 body for nginx to answer with (same size as a typical ad response).
body=$(sample_ad_body "$server_port" "$key" "$data" "$work/body.json")
wrk_args=("$data")
if ((cookies)); then
  identity_cookies "$server_port" "$key" "$data" "$work/cookies.tsv" 256
  wrk_args+=("$work/cookies.tsv")
  echo "   $(wc -l <"$work/cookies.tsv") identity cookies for the consented requests" >&2
fi

# --- nginx -----------------------------------------------------------------------------------
nginx_port=$(free_port)
write_nginx_conf "$work/nginx" "$nginx_port" "$body"
echo "== starting nginx on CPU $server_cpu (port $nginx_port, body ${#body} bytes)" >&2
taskset -c "$server_cpu" nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" \
  >"$work/nginx/stdout.log" 2>&1 &
nginx_pid=$!
wait_for 10 curl -sf -X POST "http://127.0.0.1:$nginx_port/v1/ads" -d '{}' ||
  { cat "$work/nginx/logs/error.log" "$work/nginx/stdout.log" >&2; exit 1; }

# --- runs ------------------------------------------------------------------------------------
# run NAME PID PORT CONNECTIONS SECONDS REPEAT: one wrk run, appends a line to raw.tsv.
run() {
  local name=$1 pid=$2 port=$3 conns=$4 secs=$5 rep=$6
  local before after line
  before=$(cpu_ticks "$pid")
  line=$(taskset -c "$client_cpu" wrk -t1 -c"$conns" -d"${secs}s" --timeout 5s \
    -s "$here/wrk_mix.lua" "http://127.0.0.1:$port" -- "${wrk_args[@]}" | grep '^RESULT')
  after=$(cpu_ticks "$pid")
  local requests duration p50 p99 p999 non2xx errors
  eval "$(echo "${line#RESULT }" | tr ' ' '\n' | sed 's/^/local_/')"
  requests=$local_requests duration=$local_duration_us
  awk -v n="$name" -v c="$conns" -v r="$rep" -v q="$requests" -v d="$duration" \
    -v p50="$local_p50_us" -v p99="$local_p99_us" -v p999="$local_p999_us" \
    -v non2xx="$local_non2xx" -v err="$local_errors" -v ticks=$((after - before)) \
    -v tck="$clk_tck" -v rss="$(rss_kib "$pid")" 'BEGIN {
      printf "%s\t%d\t%d\t%.0f\t%d\t%d\t%d\t%.2f\t%d\t%d\t%d\t%d\n", n, c, r, q / (d / 1e6), p50,
        p99, p999, (q > 0 ? ticks * 1e6 / tck / q : 0), rss, non2xx, err, q }' >>"$raw"
  tail -1 "$raw" >&2
}

load_before=" $(cut -d' ' -f1-3 /proc/loadavg)"
warm=$((smoke ? 1 : 2))
echo "== warm-up (${warm}s each)" >&2
run adserver "$server_pid" "$server_port" 64 "$warm" 0 >/dev/null 2>&1
run nginx "$nginx_pid" "$nginx_port" 64 "$warm" 0 >/dev/null 2>&1
: >"$raw"
echo "== runs: name conns rep req/s p50 p99 p99.9 cpu_us/req rss_kib non2xx errors requests" >&2
for conns in $connections; do
  for ((rep = 1; rep <= repeats; ++rep)); do
    run adserver "$server_pid" "$server_port" "$conns" "$duration" "$rep"
    run nginx "$nginx_pid" "$nginx_port" "$conns" "$duration" "$rep"
  done
done
after_rss=$(rss_kib "$server_pid")
after_anon=$(rss_anon_kib "$server_pid")

# --- report ----------------------------------------------------------------------------------
summary="$out_dir/summary.md"
{
  echo "dataset: $wallets wallets, $campaigns campaigns ($data, $(du -sh "$data" | cut -f1));" \
    "adserver ready in ${ready_ms} ms, RSS at ready $((ready_rss / 1024)) MiB;" \
    "${duration}s runs, $repeats repeats (medians); load average before:$load_before"
  ((cookies)) && echo && echo "--cookies: current-variant requests are consented with identity cookies"
  echo
  echo "| conns | server | req/s | p50 µs | p99 µs | p99.9 µs | CPU µs/req | RSS MiB |"
  echo "|---|---|---|---|---|---|---|---|"
  awk -F'\t' -v reps="$repeats" '
    function median(key, col,   n, i, j, t, v) {
      n = 0
      for (i = 1; i <= reps; ++i) if ((key, i) in row) v[++n] = val[key, i, col]
      for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    { key = $1 SUBSEP $2; row[key, $3] = 1; for (k = 4; k <= 9; ++k) val[key, $3, k] = $k
      if (!($2 in seen)) { seen[$2] = 1; order[++nc] = $2 } }
    END {
      for (i = 1; i <= nc; ++i) {
        c = order[i]
        for (s = 1; s <= 2; ++s) {
          name = s == 1 ? "adserver" : "nginx"; key = name SUBSEP c
          for (k = 4; k <= 9; ++k) m[name, k] = median(key, k)
          printf "| %d | %s | %.0f | %.0f | %.0f | %.0f | %.2f | %.0f |\n", c, name, m[name, 4],
            m[name, 5], m[name, 6], m[name, 7], m[name, 8], m[name, 9] / 1024
        }
        printf "| %d | **ratio** | %.2f | %.2f | %.2f | %.2f | **%.2f** | %.1f |\n", c,
          m["adserver", 4] / m["nginx", 4], m["adserver", 5] / m["nginx", 5],
          m["adserver", 6] / m["nginx", 6], m["adserver", 7] / m["nginx", 7],
          m["adserver", 8] / m["nginx", 8], m["adserver", 9] / m["nginx", 9]
      }
    }' "$raw"
  echo
  echo "Paired ratios: each adserver run over the nginx run right after it (same connections," \
    "same repeat), so a drift of the machine between repeats cancels; median and range over" \
    "the $repeats pairs:"
  echo
  echo "| conns | CPU µs/req ratio (median) | CPU ratio (min–max) | p99 ratio (median) | p99 ratio (min–max) |"
  echo "|---|---|---|---|---|"
  awk -F'\t' '
    function median(arr, n,   i, j, t) {
      for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (arr[j] < arr[i]) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
      return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
    }
    { cpu[$1, $2, $3] = $8; p99[$1, $2, $3] = $6; reps[$2, $3] = 1
      if (!($2 in seen)) { seen[$2] = 1; order[++nc] = $2 } }
    END {
      for (i = 1; i <= nc; ++i) {
        c = order[i]; n = 0; split("", rc); split("", rp)
        for (key in reps) {
          split(key, k, SUBSEP)
          if (k[1] != c || !(("adserver", c, k[2]) in cpu) || !(("nginx", c, k[2]) in cpu)) continue
          if (cpu["nginx", c, k[2]] <= 0 || p99["nginx", c, k[2]] <= 0) continue
          ++n; rc[n] = cpu["adserver", c, k[2]] / cpu["nginx", c, k[2]]
          rp[n] = p99["adserver", c, k[2]] / p99["nginx", c, k[2]]
        }
        if (n == 0) continue
        mc = median(rc, n); mp = median(rp, n)
        printf "| %d | **%.2f** | %.2f–%.2f | %.2f | %.2f–%.2f |\n", c, mc, rc[1], rc[n], mp, rp[1], rp[n]
      }
    }' "$raw"
  echo
  echo "Memory and start-up (median of $repeats starts, page cache warm; RSS includes mapped file pages; the wallet table is still mapped at ready, copied into memory after):"
  echo
  startup_table
  echo
  echo "adserver on $wallets wallets after the load runs: RSS $((after_rss / 1024)) MiB, of which" \
    "anonymous $((after_anon / 1024)) MiB (the wallet table's in-memory copy and the heap; the rest" \
    "is file pages mapped from the page cache)."
  echo
  [[ -n "$generated" ]] && echo "generated: ${generated%; }"
  echo "total: $((SECONDS - script_start)) s; load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$summary"
cat "$summary"
echo "(raw runs: $raw)" >&2

# The harness worked: every run got answers, and socket errors (timeouts on a starved machine
# included) stayed rare. Nothing about speed is asserted.
if awk -F'\t' '$12 <= 0 || $11 * 10 > $12 { bad = 1 } END { exit !bad }' "$raw"; then
  echo "FAIL: a run had no requests or many socket errors (see $raw)" >&2
  exit 1
fi
