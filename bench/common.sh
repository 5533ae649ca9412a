# shellcheck shell=bash
# Sourced by the load scripts in bench/ (issue 6): starting adserver the way every measurement
# does, and the nginx side of the comparison.

# bench_config BINARY FILE [LINE...]: writes the TOML lines to FILE and, for a binary that has
# the setting, `[traffic] wallet_serves_per_minute = 0` (inside the LINEs' own `[traffic]` table
# when they have one; TOML forbids a second one): wrk_mix.lua cycles a pool of 4096
# requests, so at tens of thousands of requests a second each wallet comes back hundreds of
# times a minute, which no visitor does; with the limit on, nearly every impression would be
# invalid (not billed, no exposure) and the server would do less than in production. The
# wallet table is still updated on every serve (the publishers check stays on), so its cost
# is measured.
bench_config() {
  local bin=$1 file=$2
  shift 2
  printf '%s\n' "$@" >"$file"
  if ! grep -q wallet_serves_per_minute "$bin"; then return 0; fi
  if grep -qx '\[traffic\]' "$file"; then
    sed -i '/^\[traffic\]$/a wallet_serves_per_minute = 0' "$file"
  else
    printf '[traffic]\nwallet_serves_per_minute = 0\n' >>"$file"
  fi
}

# First line of DIR/bench-format.txt written by adserver-bench-data (kFormat in
# bench/bench_data.cc): a cached dataset with another stamp is generated again.
bench_data_format="format 4"

# bench_dataset GENERATOR DIR WALLETS [CAMPAIGNS]: makes sure DIR holds the dataset that
# GENERATOR (adserver-bench-data) writes for WALLETS wallets (and CAMPAIGNS campaigns, else the
# generator's default): generated into DIR.tmp, then renamed, when DIR is missing or has another
# bench_data_format.
bench_dataset() {
  local gen=$1 dir=$2 wallets=$3 campaigns=${4:-}
  if [[ -f "$dir/bench-key.txt" &&
        "$(head -1 "$dir/bench-format.txt" 2>/dev/null)" == "$bench_data_format" ]]; then
    return 0
  fi
  echo "== generating $dir ($wallets wallets${campaigns:+, $campaigns campaigns})" >&2
  rm -rf "$dir.tmp"
  "$gen" --data "$dir.tmp" --wallets "$wallets" ${campaigns:+--campaigns "$campaigns"} \
    >/dev/null || return 1
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
}

# wrk_mix_requests URL DATA FILE CPU: writes bench/wrk_mix.lua's requests for dataset DATA to
# FILE, raw and back to back in the order wrk sends them (wrk on CPU for 1 s on one connection
# to URL with WRK_DUMP set), for adserver-openloop --requests. Fails if none were written.
wrk_mix_requests() {
  local url=$1 data=$2 file=$3 cpu=$4
  WRK_DUMP="$file" taskset -c "$cpu" wrk -t1 -c1 -d1s \
    -s "$(dirname "${BASH_SOURCE[0]}")/wrk_mix.lua" "$url" -- "$data" >/dev/null
  [[ -s "$file" ]] || { echo "wrk_mix.lua wrote no requests" >&2; return 1; }
}

# sustainable_rate URL DATA SECONDS CPU: prints the rate (req/s, an integer) that wrk, closed
# loop on CPU with one thread and 64 connections, gets from URL for SECONDS with
# bench/wrk_mix.lua's mix on dataset DATA (the R of bench/overload.sh); wrk's RESULT line goes
# to stderr. Fails if wrk got no answers.
sustainable_rate() {
  local url=$1 data=$2 seconds=$3 cpu=$4 line rate
  line=$(taskset -c "$cpu" wrk -t1 -c64 -d"${seconds}s" --timeout 5s \
    -s "$(dirname "${BASH_SOURCE[0]}")/wrk_mix.lua" "$url" -- "$data" | grep '^RESULT')
  rate=$(echo "$line" | tr ' ' '\n' | awk -F= '$1 == "requests" { q = $2 }
    $1 == "duration_us" { d = $2 } END { printf "%.0f", (d > 0 ? q / (d / 1e6) : 0) }')
  echo "   wrk, 64 connections, ${seconds}s: $rate req/s; $line" >&2
  ((rate > 0)) || { echo "wrk got no answers" >&2; return 1; }
  echo "$rate"
}

# start_adserver BINARY DATA DIR [ARGS...]: `BINARY serve` on DATA, pinned to CPU 0 with one
# event loop, with ARGS added to its command line (e.g. --config FILE; without one, the
# bench_config defaults in DIR/bench.toml), logging to
# DIR/server.log; sets server_pid and server_port once it listens, then waits until
# lookups are served from the in-memory wallet table (or from the mapped table, for a binary
# without the in-memory copy; or from LMDB when the table is off). Returns 1 if it never gets
# there.
# shellcheck disable=SC2034  # server_pid and server_port are this function's outputs
start_adserver() {
  local bin=$1 data=$2 dir=$3 out
  shift 3
  if [[ " $* " != *" --config "* ]]; then
    bench_config "$bin" "$dir/bench.toml"
    set -- "$@" --config "$dir/bench.toml"
  fi
  rm -f "$dir/ready"
  taskset -c 0 "$bin" serve --data "$data" --listen 127.0.0.1:0 --io-threads 1 --log-level warn \
    --ready-file "$dir/ready" "$@" >"$dir/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 3000); do [[ -s "$dir/ready" ]] && break; sleep 0.01; done
  [[ -s "$dir/ready" ]] || { cat "$dir/server.log" >&2; return 1; }
  server_port=$(head -1 "$dir/ready")
  for _ in $(seq 600); do
    out=$(curl -sf "http://127.0.0.1:$server_port/readyz" || true)
    [[ "$out" == *'"walletTableInMemory":true'* || "$out" == *'"walletTable":"off"'* ]] && return 0
    [[ "$out" == *'"walletTable":"ready"'* && "$out" != *walletTableInMemory* ]] && return 0
    sleep 0.2
  done
  echo "adserver's wallet table never became ready (see $dir/server.log)" >&2
  return 1
}

# A loopback port nothing listens on (nginx fails loudly if it was taken meanwhile), below the
# ephemeral range: a port in it may be the local end of another program's connection in
# TIME-WAIT, and a server that binds without SO_REUSEADDR (anvil) then fails.
free_port() {
  local port span
  span=$(($(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768) - 10000))
  ((span >= 1000)) || span=40000
  for _ in $(seq 100); do
    port=$((10000 + RANDOM % span))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
  done
  return 1
}

# write_nginx_conf DIR PORT BODY: DIR/nginx.conf for nginx-light with one worker, its own
# prefix DIR, no access log, long keep-alive, answering every request on 127.0.0.1:PORT with a
# 200 and BODY (an ad response taken from adserver; quotes and backslashes are replaced so it
# fits a config string, keeping its byte count).
write_nginx_conf() {
  local dir=$1 port=$2 body
  body=$(printf '%s' "$3" | tr "'\\\\" '"/')
  mkdir -p "$dir/logs"
  cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  keepalive_requests 10000;
  keepalive_timeout 60s;
  server {
    listen 127.0.0.1:$port;
    location / {
      default_type "application/json; charset=utf-8";
      add_header Cache-Control no-store;
      add_header Access-Control-Allow-Origin *;
      return 200 '$body';
    }
  }
}
CONF
}

# sample_ad_body PORT KEY DATA_DIR TMP_FILE: prints the body of the first 200 that adserver on
# PORT answers for one of DATA_DIR's first 200 known wallets (what nginx answers with: the same
# size as a typical ad response); fails if none gets an ad.
sample_ad_body() {
  local port=$1 key=$2 data=$3 tmp=$4 wallet code
  while read -r wallet; do
    code=$(curl -s -o "$tmp" -w '%{http_code}' -X POST "http://127.0.0.1:$port/v1/ads" \
      -H 'Content-Type: application/json' -H "x-api-key: $key" \
      -d "{\"walletAddresses\":[\"$wallet\"],\"imageFormat\":\"LANDSCAPE\"}")
    if [[ "$code" == 200 ]]; then cat "$tmp"; return 0; fi
  done < <(head -200 "$data/wallets-known.txt")
  echo "no known wallet got an ad from adserver" >&2
  return 1
}

# identity_cookies PORT KEY DATA_DIR OUT N: writes OUT with one "cookie<TAB>wallet" line for
# each of DATA_DIR's first N known wallets: the identity cookie adserver on PORT sets for a
# consented request with that wallet (cookies are sealed under the server's own key ring, so
# they are only valid for that process). Fails if none was set.
identity_cookies() {
  local port=$1 key=$2 data=$3 out=$4 n=$5 wallet value
  : >"$out"
  while read -r wallet; do
    value=$(curl -s -o /dev/null -D - -X POST "http://127.0.0.1:$port/v1/ads" \
      -H 'Content-Type: application/json' -H "x-api-key: $key" \
      -d "{\"walletAddresses\":[\"$wallet\"],\"imageFormat\":\"LANDSCAPE\",\"cookieConsent\":true}" |
      sed -n 's/^[Ss]et-[Cc]ookie: adserver_id=\([^;]*\);.*/\1/p' | head -1)
    [[ -n "$value" ]] && printf '%s\t%s\n' "$value" "$wallet" >>"$out"
  done < <(head -"$n" "$data/wallets-known.txt")
  [[ -s "$out" ]] || { echo "adserver set no identity cookie" >&2; return 1; }
}

# ensure_bench_build BUILD_DIR TARGET...: builds Release with -DADSERVER_BUILD_BENCH=ON in
# BUILD_DIR when a target's binary is missing there.
ensure_bench_build() {
  local dir=$1 target
  shift
  for target in "$@"; do
    [[ -x "$dir/$target" ]] && continue
    echo "== building Release in $dir" >&2
    cmake -S "$(dirname "${BASH_SOURCE[0]}")/.." -B "$dir" -DCMAKE_BUILD_TYPE=Release \
      -DADSERVER_BUILD_BENCH=ON >/dev/null
    cmake --build "$dir" -j"$(nproc)" --target "$@" >&2
    return
  done
}

# cpu_ticks PID...: CPU ticks (utime+stime) of the processes and their children (nginx's
# worker).
cpu_ticks() {
  local total=0 pid
  for pid in "$@" $(for p in "$@"; do pgrep -P "$p" || true; done); do
    [[ -r /proc/$pid/stat ]] || continue
    # Fields after the ")" of the command: utime is field 14, stime 15 of the whole line.
    total=$((total + $(sed 's/.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')))
  done
  echo "$total"
}
