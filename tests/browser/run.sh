#!/usr/bin/env bash
# CTest entry of the browser test: run.sh NODE ADSERVER_BINARY. Exit 77 = skipped (missing
# chromium / playwright-core), turned into a failure when ADSERVER_REQUIRE_BROWSER=1.
set -uo pipefail
node=$1
binary=$2
cd "$(dirname "$0")"
missing=""
[[ -x /usr/bin/chromium ]] || missing+=" chromium (apt-get install chromium)"
[[ -d node_modules/playwright-core ]] || missing+=" playwright-core (npm ci --ignore-scripts in tests/browser)"
if [[ -n "$missing" ]]; then
  echo "browser test needs:$missing"
  [[ "${ADSERVER_REQUIRE_BROWSER:-0}" == 1 ]] && exit 1
  exit 77
fi
exec "$node" identity_cookie.test.mjs "$binary"
