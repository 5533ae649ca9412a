#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests (issue 17), from Debian's postgresql-15:
#
#   tests/support/postgres.sh start DIR   initdb + pg_ctl start on a free loopback port; writes
#                                         DIR/url (postgresql://postgres@127.0.0.1:PORT, no
#                                         database: each test creates and drops its own)
#   tests/support/postgres.sh stop DIR    stops the cluster and removes its files
#
# CTest runs it as the `postgres` fixture (tests/unit/store/CMakeLists.txt). PostgreSQL refuses
# to run as root, so as root the cluster runs as the system user adserver-test (created once,
# no login, no home). Its files live in a fresh directory under /tmp (a build tree under /root
# is not reachable for that user); DIR only holds the URL and the path. Trust authentication
# on 127.0.0.1 and a Unix socket in that directory; fsync off (nothing here must survive a
# crash of the machine).
set -euo pipefail
cmd=${1:-} dir=${2:-}
[[ ( "$cmd" == start || "$cmd" == stop || "$cmd" == halt || "$cmd" == resume ) && -n "$dir" ]] ||
  { echo "usage: tests/support/postgres.sh start|stop|halt|resume DIR" >&2; exit 2; }
bin=/usr/lib/postgresql/15/bin
[[ -x "$bin/initdb" ]] || bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[[ -n "$bin" && -x "$bin/initdb" ]] ||
  { echo "PostgreSQL server binaries not found (scripts/install-deps.sh installs postgresql-15)" >&2; exit 1; }

as_user() {
  if ((EUID == 0)); then runuser -u adserver-test -- "$@"; else "$@"; fi
}

stop() {
  local data
  data=$(cat "$dir/data_dir" 2>/dev/null || true)
  if [[ -n "$data" && -d "$data/db" ]]; then
    as_user "$bin/pg_ctl" -D "$data/db" -m fast -w stop >/dev/null 2>&1 || true
  fi
  [[ -n "$data" && "$data" == /tmp/adserver-pg.* ]] && rm -rf "$data"
  rm -f "$dir/url" "$dir/data_dir"
}

if [[ "$cmd" == stop ]]; then
  stop
  exit 0
fi

# halt / resume: an outage of a running cluster (tests of cluster mode's failure behaviour):
# the server stops, keeping its data, and starts again on the same port.
server_options() {
  echo "-p $1 -k $2 -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
        -c full_page_writes=off -c max_connections=200"
}
if [[ "$cmd" == halt || "$cmd" == resume ]]; then
  data=$(cat "$dir/data_dir")
  port=$(sed -E 's/.*:([0-9]+)$/\1/' "$dir/url")
  if [[ "$cmd" == halt ]]; then
    as_user "$bin/pg_ctl" -D "$data/db" -m fast -w stop >/dev/null
  else
    as_user "$bin/pg_ctl" -D "$data/db" -l "$data/server.log" -w -t 60 start \
      -o "$(server_options "$port" "$data")" >/dev/null
  fi
  exit 0
fi

mkdir -p "$dir"
stop  # a cluster left by an interrupted run
if ((EUID == 0)) && ! id -u adserver-test >/dev/null 2>&1; then
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin adserver-test
fi
data=$(mktemp -d /tmp/adserver-pg.XXXXXX)
echo "$data" >"$dir/data_dir"
((EUID == 0)) && chown adserver-test: "$data"
as_user "$bin/initdb" -D "$data/db" -U postgres -A trust -E UTF8 --locale=C --no-sync \
  >"$data/initdb.log" 2>&1 || { cat "$data/initdb.log" >&2; exit 1; }
# A port below the ephemeral range that nothing listens on; pg_ctl fails if another process
# takes it meanwhile, so a few tries.
for _ in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 10000))
  if as_user "$bin/pg_ctl" -D "$data/db" -l "$data/server.log" -w -t 60 start \
    -o "$(server_options "$port" "$data")" >/dev/null; then
    echo "postgresql://postgres@127.0.0.1:$port" >"$dir/url"
    echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port ($data)"
    exit 0
  fi
done
cat "$data/server.log" >&2
exit 1
