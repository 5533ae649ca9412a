#!/usr/bin/env bash
# Builds the Debian package in BUILD_DIR (cpack), checks its systemd unit with
# `systemd-analyze verify`, installs it with dpkg -i, runs the unit's ExecStart line as the
# unit's user with the unit's environment and working directory (systemd itself may not run
# here) until /readyz answers and the generated admin token is accepted, stops it with SIGTERM
# and purges the package again. Needs root; refuses to run where adserver is already installed.
#   scripts/package-test.sh [BUILD_DIR]      (default: build, a configured Release tree)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
unit=/usr/lib/systemd/system/adserver.service

fail() {
  echo "package-test: $*" >&2
  exit 1
}
[[ $(id -u) == 0 ]] || fail "needs root (dpkg -i)"
if dpkg-query -W -f='${Status}' adserver 2>/dev/null | grep -q "install ok installed"; then
  fail "adserver is already installed on this machine; not touching it"
fi
[[ ! -e /var/lib/adserver ]] || fail "/var/lib/adserver exists; not touching it"

cmake --build "$build" -j"$(nproc)" --target adserver >/dev/null
rm -f "$build"/adserver_*.deb
(cd "$build" && cpack -G DEB >/dev/null 2>&1) || fail "cpack failed"
deb=$(ls "$build"/adserver_*_amd64.deb)
echo "package: $deb ($(stat -c %s "$deb") bytes)"
contents=$(dpkg-deb -c "$deb")
grep -q ' ./usr/bin/adserver$' <<<"$contents" || fail "no /usr/bin/adserver in the package"
grep -q ' ./etc/adserver/adserver.toml$' <<<"$contents" || fail "no /etc/adserver/adserver.toml"
grep -q " .$unit\$" <<<"$contents" || fail "no $unit"

server_pid=
cleanup() {
  set +e
  [[ -n $server_pid ]] && kill -KILL "$server_pid" 2>/dev/null
  rm -rf /var/lib/adserver
  dpkg --purge adserver >/dev/null 2>&1
}
trap cleanup EXIT

dpkg -i "$deb" >/dev/null
# The version the binary reports is the package's, with a commit.
version=$(/usr/bin/adserver --version)
[[ $version =~ ^adserver\ $(dpkg-query -W -f='${Version}' adserver)\ \(commit\ ([0-9a-f]{12}|unknown)\)$ ]] ||
  fail "unexpected --version: $version"
# systemd-analyze verify: unit syntax, known directives, the ExecStart binary exists.
SYSTEMD_LOG_LEVEL=warning systemd-analyze verify "$unit" 2>&1 | tee /tmp/package-test-verify.log
[[ ! -s /tmp/package-test-verify.log ]] || fail "systemd-analyze verify reported problems"
getent passwd adserver >/dev/null || fail "post-install did not create the adserver user"
[[ $(stat -c %U:%a /var/lib/adserver) == adserver:750 ]] || fail "/var/lib/adserver not adserver 0750"
[[ $(stat -c %U:%G:%a /etc/adserver/admin.token) == root:adserver:640 ]] ||
  fail "/etc/adserver/admin.token not root:adserver 0640"

# The unit's ExecStart, User, Environment and WorkingDirectory lines, as systemd would use them.
unit_value() { sed -n "s/^$1=//p" "$unit"; }
read -r -a exec_start <<<"$(unit_value ExecStart)"
user=$(unit_value User)
workdir=$(unit_value WorkingDirectory)
mapfile -t unit_env < <(unit_value Environment)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
echo "running as $user: ${exec_start[*]} (port $port)"
(cd "$workdir" && umask "$(unit_value UMask)" &&
  exec setpriv --reuid="$user" --regid="$user" --init-groups --no-new-privs \
    env -i PATH=/usr/bin:/bin "${unit_env[@]}" ADSERVER_LISTEN="127.0.0.1:$port" "${exec_start[@]}") \
  >/tmp/package-test-server.log 2>&1 &
server_pid=$!
for _ in $(seq 1 300); do
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat /tmp/package-test-server.log; fail "server exited"; }
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || fail "/readyz did not answer in 30 s"
[[ $(ps -o user= -p "$server_pid") == "$user" ]] || fail "server does not run as $user"
token=$(cat /etc/adserver/admin.token)
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" \
  "http://127.0.0.1:$port/admin/v1/publishers")
[[ $code == 200 ]] || fail "admin API with the generated token answered $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer wrong" \
  "http://127.0.0.1:$port/admin/v1/publishers")
[[ $code == 401 ]] || fail "admin API with a wrong token answered $code"
[[ -f /var/lib/adserver/adserver.db ]] || fail "no database in /var/lib/adserver"
[[ $(stat -c %U /var/lib/adserver/adserver.db) == "$user" ]] || fail "database not owned by $user"
kill -TERM "$server_pid"
wait "$server_pid" || fail "server exited with $? on SIGTERM"
server_pid=

rm -rf /var/lib/adserver
dpkg --purge adserver >/dev/null
[[ ! -e /usr/bin/adserver && ! -e $unit && ! -e /etc/adserver ]] || fail "purge left files behind"
! getent passwd adserver >/dev/null || fail "purge left the adserver user"
trap - EXIT
echo "package-test: ok (installed, verified, served as $user, purged)"
