#!/usr/bin/env bash
# Installs what the server needs (only that: scripts/test.sh installs the test tools), builds
# the server in Release and starts it with a demo dataset.
# Usage: scripts/demo.sh [HOST:PORT]   (default 127.0.0.1:8080; data in ./demo-data)
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
scripts/install-deps.sh --server --no-registry
packages_at=$SECONDS
# The registry lists the demo imports (Node.js and npm from Debian if missing, npm downloads,
# then an export) are fetched while the server compiles; the server starts once both are done.
# The first apt-get has finished, so the second one does not wait for dpkg's lock.
registry_log=$(mktemp)
scripts/install-deps.sh --registry >"$registry_log" 2>&1 &
registry_pid=$!
# A tree an earlier version configured with another generator is configured anew.
if [[ -f build/CMakeCache.txt ]] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' build/CMakeCache.txt; then
  rm -rf build/CMakeCache.txt build/CMakeFiles
fi
# Tests off: GoogleTest is a test package. scripts/test.sh turns them on again in the same tree.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DADSERVER_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target adserver
built_at=$SECONDS
if ! wait "$registry_pid"; then
  cat "$registry_log" >&2
  echo "demo: the registry lists could not be fetched or exported (above)" >&2
  exit 1
fi
cat "$registry_log"
rm -f "$registry_log"
echo "demo: packages $((packages_at - started)) s, build $((built_at - packages_at)) s (the registry" \
  "lists alongside), then $((SECONDS - built_at)) s waiting for the lists"
listen="${1:-127.0.0.1:8080}"
# Click URLs in live keys' ads point here (http.public_url; production sets its public address).
export ADSERVER_PUBLIC_URL="${ADSERVER_PUBLIC_URL:-http://$listen}"
exec build/adserver serve --demo --data ./demo-data --listen "$listen"
