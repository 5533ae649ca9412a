#!/usr/bin/env bash
# CTest entry of a browser test: run.sh NODE ADSERVER_BINARY [TEST_FILE] (default
# identity_cookie.test.mjs). Exit 77 = skipped (missing
# chromium / playwright-core), turned into a failure when ADSERVER_REQUIRE_BROWSER=1.
set -uo pipefail
node=$1
binary=$2
test_file=${3:-identity_cookie.test.mjs}
cd "$(dirname "$0")"
missing=""
[[ -x /usr/bin/chromium ]] || missing+=" chromium (apt-get install chromium)"
[[ -d node_modules/playwright-core ]] || missing+=" playwright-core (npm ci --ignore-scripts in tests/browser)"
if [[ -n "$missing" ]]; then
  echo "browser test needs:$missing"
  [[ "${ADSERVER_REQUIRE_BROWSER:-0}" == 1 ]] && exit 1
  exit 77
fi
exec "$node" "$test_file" "$binary"
