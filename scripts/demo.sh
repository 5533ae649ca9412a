#!/usr/bin/env bash
# Installs what is missing, builds in Release and starts adserver with a demo dataset.
# Usage: scripts/demo.sh [HOST:PORT]   (default 127.0.0.1:8080; data in ./demo-data)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target adserver
listen="${1:-127.0.0.1:8080}"
# Click URLs in live keys' ads point here (http.public_url; production sets its public address).
export ADSERVER_PUBLIC_URL="${ADSERVER_PUBLIC_URL:-http://$listen}"
exec build/adserver serve --demo --data ./demo-data --listen "$listen"
