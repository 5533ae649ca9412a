#!/usr/bin/env bash
# Lints docs/openapi.yaml with the pinned @redocly/cli (package.json here) and redocly.yaml, in
# which every finding is an error: exits non-zero on any. Needs Node >= 20.19 and
# `npm ci --ignore-scripts` in this directory (scripts/install-deps.sh does both). Exits 77
# (skipped) when the CLI is missing, unless ADSERVER_REQUIRE_OPENAPI_LINT=1 (scripts/test.sh).
# Usage: lint.sh NODE
set -euo pipefail
node=$1
here="$(cd "$(dirname "$0")" && pwd)"
cli="$here/node_modules/@redocly/cli/bin/cli.js"
if [[ ! -f "$cli" ]]; then
  echo "@redocly/cli is not installed in $here (run scripts/install-deps.sh)"
  [[ "${ADSERVER_REQUIRE_OPENAPI_LINT:-0}" == 1 ]] && exit 1
  exit 77
fi
# @redocly/cli 2.x runs on Node >= 20.19 (Debian 12's own nodejs is 18: the check says so
# instead of failing on a syntax error deep inside the CLI).
if ! "$node" -e 'const [a, b] = process.versions.node.split(".").map(Number);
                 process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'; then
  echo "@redocly/cli needs Node >= 20.19; $node is $("$node" --version)"
  exit 1
fi
# No telemetry or update check from a test.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
exec "$node" "$cli" lint "$here/../../docs/openapi.yaml" --config "$here/redocly.yaml"
