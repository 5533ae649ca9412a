#!/usr/bin/env bash
# A throwaway Redis for the tests (issue 17), Debian's redis-server:
#
#   tests/support/redis.sh start DIR   redis-server on a free loopback port, no persistence;
#                                      writes DIR/url (redis://127.0.0.1:PORT)
#   tests/support/redis.sh stop DIR    shuts it down
#
# CTest runs it as the `redis` fixture (tests/unit/store/CMakeLists.txt); each test uses a
# database number and key prefix of its own (support/redis/test_redis.h).
set -euo pipefail
cmd=${1:-} dir=${2:-}
[[ ( "$cmd" == start || "$cmd" == stop || "$cmd" == halt || "$cmd" == resume ) && -n "$dir" ]] ||
  { echo "usage: tests/support/redis.sh start|stop|halt|resume DIR" >&2; exit 2; }
command -v redis-server >/dev/null ||
  { echo "redis-server not found (scripts/install-deps.sh installs it)" >&2; exit 1; }

stop() {
  local pid
  pid=$(cat "$dir/pid" 2>/dev/null || true)
  if [[ -n "$pid" ]] && kill "$pid" 2>/dev/null; then
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  fi
  rm -f "$dir/url" "$dir/pid"
}

if [[ "$cmd" == stop ]]; then
  stop
  exit 0
fi
# Starts redis-server on $port; true once it answers.
run_on() {
  rm -f "$dir/pid"
  # Daemonized (its own session, no inherited descriptors: CTest waits for those).
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
    --pidfile "$dir/pid" --databases 64 --logfile "$dir/redis.log" --dir "$dir" </dev/null
  for _ in $(seq 100); do
    redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && return 0
    sleep 0.05
  done
  return 1
}

# halt / resume: an outage (tests of cluster mode's failure behaviour). Redis keeps nothing
# (no persistence): it comes back empty on the same port, as after a crash.
if [[ "$cmd" == halt ]]; then
  pid=$(cat "$dir/pid")
  kill -9 "$pid"
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  exit 0
fi
if [[ "$cmd" == resume ]]; then
  port=$(sed -E 's/.*:([0-9]+)$/\1/' "$dir/url")
  run_on
  exit
fi

mkdir -p "$dir"
stop
for _ in 1 2 3 4 5; do
  port=$((30000 + RANDOM % 2000))
  if run_on; then
    echo "redis://127.0.0.1:$port" >"$dir/url"
    echo "Redis $(redis-server --version | awk '{print $3}') on 127.0.0.1:$port"
    exit 0
  fi
  stop
done
cat "$dir/redis.log" >&2
exit 1
