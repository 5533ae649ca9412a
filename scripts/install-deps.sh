#!/usr/bin/env bash
# Installs the Debian 12 packages adserver builds, runs and tests with (only what is missing),
# and the npm packages of the project registry and of the test tools.
#   scripts/install-deps.sh            everything scripts/test.sh needs
#   scripts/install-deps.sh --server   only what building and running the server needs (and the
#                                      registry lists the demo imports): scripts/demo.sh
#   ... --server --no-registry         the server's packages, without the registry lists and
#                                      without Node.js and npm (which only the lists need)
#   scripts/install-deps.sh --registry the registry lists only, and Node.js and npm if missing
#                                      (scripts/demo.sh runs it while the server compiles)
set -euo pipefail
scope=all
registry=yes
for arg in "$@"; do
  case $arg in
    --server) scope=server ;;
    --no-registry) registry=no ;;
    --registry) scope=registry ;;
    *) echo "usage: $0 [--server [--no-registry] | --registry]" >&2; exit 2 ;;
  esac
done
# The server: compiler, build tools, the libraries it links, Chart.js for the console.
packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libboost1.81-dev libsimdjson-dev libsqlite3-dev libsodium-dev libssl-dev libspdlog-dev libfmt-dev
  libcli11-dev nlohmann-json3-dev libtomlplusplus-dev liblmdb-dev zlib1g-dev libre2-dev
  libpq-dev libhiredis-dev  # the PostgreSQL and Redis adapters (cluster mode) are always built
  libjs-chart.js
)
if [[ $scope == all ]]; then
  packages+=(
    ccache  # scripts/test.sh builds through it where a cache survives between runs
    sqlite3 lmdb-utils libgtest-dev libgmock-dev libbenchmark-dev
    clang libclang-rt-14-dev  # the sanitizer build: clang with ASan, UBSan and libFuzzer
    postgresql-15  # the PostgreSQL adapter's tests (tests/support/postgres.sh)
    redis-server  # the Redis adapter's tests (tests/support/redis.sh)
    curl wrk nginx-light python3 python3-jsonschema python3-yaml
    chromium
    systemd  # systemd-analyze verify of the packaged unit (scripts/package-test.sh)
    prometheus  # promtool check metrics and a real scrape in tests/integration/metrics_test.cc
  )
fi
# Node.js and npm only for test tooling and data packages; keep an existing installation
# (e.g. a newer Node from another source) instead of pulling Debian's.
# --registry alone installs no package but these two, which the lists' export runs;
# --server --no-registry leaves them to it (scripts/demo.sh: Node.js and npm, about 300 Debian
# packages, install while the server compiles instead of before).
[[ $scope != registry ]] || packages=()
if [[ $scope != server || $registry == yes ]]; then
  command -v node >/dev/null 2>&1 || packages+=(nodejs)
  command -v npm >/dev/null 2>&1 || packages+=(npm)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Real project lists (MIT, ISC, Apache-2.0, BSD or CC0; npm) for `adserver projects import` and
# the demo registry: packages the exporter runs (package-lock.json, `npm ci`) and data-only
# packages fetched as pinned tarballs (packs.json, fetch-packs.js). Re-exported whenever the
# pinned packages or the exporter change (stamp = their digest).
registry_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tools/registry"
registry_stamp=$(cat "$registry_dir"/{package-lock.json,packs.json,export.js,fetch-packs.js,licence.js} |
  sha256sum | cut -d' ' -f1)
if [[ $registry == yes && "$(cat "$registry_dir/out/.stamp" 2>/dev/null)" != "$registry_stamp" ]]; then
  (cd "$registry_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error &&
    node fetch-packs.js && rm -rf out && node export.js && echo "$registry_stamp" >out/.stamp)
fi

[[ $scope == all ]] || exit 0

# Browser test driver (tests/browser): npm playwright-core only, never `npx playwright install`.
browser_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/browser"
if [[ ! -d "$browser_dir/node_modules/playwright-core" ]]; then
  (cd "$browser_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
# A real EVM node (anvil, npm) for the indexer's integration test.
anvil_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/anvil"
if [[ ! -x "$anvil_dir/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil" ]]; then
  # `npm install`, not `npm ci`: the package lists per-platform optional binaries that npm 11's
  # lock-file check rejects; versions stay pinned by package.json and the lock.
  (cd "$anvil_dir" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
# OpenAPI linter (tests/openapi): npm @redocly/cli, pinned; a single bundled package.
openapi_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/openapi"
if [[ ! -f "$openapi_dir/node_modules/@redocly/cli/bin/cli.js" ]]; then
  (cd "$openapi_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
