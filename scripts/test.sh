#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite: unit and integration tests
# in a Release build, then again under AddressSanitizer + UndefinedBehaviorSanitizer, then each
# libFuzzer target for 60 s (scripts/fuzz.sh, docs/testing.md), whose build runs in the
# background on idle CPU while the suites run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)

echo "== Release build"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DADSERVER_WERROR=ON -DADSERVER_BUILD_BENCH=ON >/dev/null
cmake --build build -j"$jobs"

# The fuzz targets' clang build runs beside the two test suites on CPU time they leave idle
# (SCHED_IDLE: it never takes a CPU a test wants), so the fuzz stage mostly finds it done.
# Job control (set -m) gives the job a process group of its own, which the trap can end whole.
mkdir -p build-fuzz
set -m
FUZZ_BUILD_ONLY=1 chrt --idle 0 scripts/fuzz.sh 60 >build-fuzz/background-build.log 2>&1 &
fuzz_build=$!
set +m
trap 'kill -- -"$fuzz_build" 2>/dev/null || true' EXIT

(cd build && ADSERVER_REQUIRE_BROWSER=1 ADSERVER_REQUIRE_OPENAPI_LINT=1 ctest --output-on-failure -j"$jobs")

echo "== ASan+UBSan build"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DADSERVER_SANITIZE=ON -DADSERVER_WERROR=ON >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j"$jobs" -L "unit|integration")

echo "== Fuzz targets (clang, libFuzzer, ASan+UBSan), 60 s each, two at a time"
wait "$fuzz_build" || { cat build-fuzz/background-build.log; exit 1; }
FUZZ_JOBS=2 FUZZ_OUT=build-fuzz/runs/ci scripts/fuzz.sh 60
echo "== all tests passed"
