#!/usr/bin/env bash
# Installs the Debian 12 packages adserver builds, runs and tests with (only what is missing).
set -euo pipefail
packages=(
  build-essential cmake pkg-config git ca-certificates
  libboost1.81-dev libsimdjson-dev libsqlite3-dev sqlite3 libsodium-dev libspdlog-dev libfmt-dev
  libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libgtest-dev libgmock-dev libbenchmark-dev
  curl wrk nginx-light
)
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
