#!/usr/bin/env bash
# Installs what the server needs (only that: scripts/test.sh installs the test tools), builds
# the server in Release and starts it with a demo dataset.
# Usage: scripts/demo.sh [HOST:PORT]   (default 127.0.0.1:8080; data in ./demo-data)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --server
# A tree an earlier version configured with another generator is configured anew.
if [[ -f build/CMakeCache.txt ]] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' build/CMakeCache.txt; then
  rm -rf build/CMakeCache.txt build/CMakeFiles
fi
# Tests off: GoogleTest is a test package. scripts/test.sh turns them on again in the same tree.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DADSERVER_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target adserver
listen="${1:-127.0.0.1:8080}"
# Click URLs in live keys' ads point here (http.public_url; production sets its public address).
export ADSERVER_PUBLIC_URL="${ADSERVER_PUBLIC_URL:-http://$listen}"
exec build/adserver serve --demo --data ./demo-data --listen "$listen"
