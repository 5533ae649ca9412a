# Sourced by bench/load.sh and bench/cpu_split.sh: the nginx side of the comparison (issue 6).

# A loopback port nothing listens on (nginx fails loudly if it was taken meanwhile).
free_port() {
  local port
  for _ in $(seq 100); do
    port=$((20000 + RANDOM % 40000))
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
