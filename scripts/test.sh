#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (what .ci/run calls):
#   1. the unit and integration tests, the browser, OpenAPI, Prometheus and bench smoke tests in
#      a Release build (gcc, `build/`), then the Debian package test;
#   2. one sanitizer build (clang, ASan + UBSan + libFuzzer's coverage, `build-san/`; compiled
#      beside the Release suite, on the CPU time its tests leave) that holds both the unit and
#      integration tests, run again there, and the libFuzzer targets, each run for 60 s
#      (scripts/fuzz.sh).
# At the end (also after a failure) it prints how long each stage took and the ten slowest
# tests, and writes them to build/test-times.md (docs/testing.md keeps the recorded runs).
#
#   scripts/test.sh                  the whole suite
#   scripts/test.sh --quick [BASE]   the inner loop: Release build, every unit test and the
#                                    integration tests of the modules changed since BASE
#                                    (default: HEAD, i.e. uncommitted and untracked files)
#
# Environment: ADSERVER_CCACHE=0 builds without ccache even where it is installed (the clean-clone
# number of docs/testing.md is measured so); JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=full
base=HEAD
if [[ ${1:-} == --quick ]]; then
  mode=quick
  base=${2:-HEAD}
elif [[ $# -gt 0 ]]; then
  sed -n '2,18p' "$0" >&2
  exit 2
fi
jobs=${JOBS:-$(nproc)}

# ---- stage timing ---------------------------------------------------------------------------
stage_names=()
stage_secs=()
current_stage=
stage_start=0
script_start=$(date +%s)
slowest_logs=()

now() { date +%s; }
# stage NAME COMMAND...: runs COMMAND as the stage NAME and records its wall time.
stage() {
  current_stage=$1
  shift
  echo "== $current_stage"
  stage_start=$(now)
  "$@"
  stage_names+=("$current_stage")
  stage_secs+=($(($(now) - stage_start)))
  current_stage=
}

# The ten slowest tests of the ctest logs given (lines "N/M Test #K: name ....   Passed 1.23 sec").
slowest_tests() {
  sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.+[^0-9]* ([0-9.]+) sec$/\2 \1/p' "$@" |
    sort -rn | head -10
}

report() {
  local status=$?
  [[ -z ${sanitizer_pid:-} ]] || kill -- "-$sanitizer_pid" 2>/dev/null || true
  local out=build/test-times.md
  mkdir -p build
  {
    echo "| stage | seconds |"
    echo "|---|---:|"
    for i in "${!stage_names[@]}"; do
      echo "| ${stage_names[$i]} | ${stage_secs[$i]} |"
    done
    [[ -z $current_stage ]] || echo "| ${current_stage} (FAILED) | $(($(now) - stage_start)) |"
    echo "| **total** ($mode) | $(($(now) - script_start)) |"
    for log in "${slowest_logs[@]}"; do
      [[ -f $log ]] || continue
      echo
      echo "Ten slowest tests of $(basename "$log" .log):"
      echo
      echo "| test | seconds |"
      echo "|---|---:|"
      slowest_tests "$log" | while read -r secs name; do echo "| $name | $secs |"; done
    done
  } >"$out"
  echo
  echo "== stage times ($out)"
  cat "$out"
  exit $status
}
trap report EXIT

# ctest_logged DIR LOG CTEST-ARGS...: ctest in the build tree DIR, its output also in DIR/LOG.
ctest_logged() {
  local dir=$1 log=$1/$2
  shift 2
  slowest_logs+=("$log")
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" "$@" 2>&1 | tee "$log"
  return "${PIPESTATUS[0]}"
}

# The compiler launcher for the builds: ccache when installed (decided after the install stage,
# which installs it) unless ADSERVER_CCACHE=0.
launcher=()
choose_launcher() {
  if [[ ${ADSERVER_CCACHE:-1} != 0 ]] && command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    # The tests' precompiled header (cmake/AdserverHelpers.cmake) is uncacheable without these
    # (ccache manual, "Precompiled headers"): CMake includes it with -include, and nothing in
    # the tree uses __DATE__/__TIME__. A changed header still changes the hash (its content).
    export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
    # A clone at another path hits the entries this one leaves (the landing CI clones elsewhere
    # than a developer's clean-clone run): paths under the clone are hashed relative to it, the
    # build directory is not hashed with the sanitizer tree's debug information, and the unity
    # batches include their sources by relative paths (cmake/AdserverHelpers.cmake).
    export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
  else
    launcher=(-UCMAKE_CXX_COMPILER_LAUNCHER)
  fi
}

release_build() {
  choose_launcher
  # A tree an earlier version configured with another generator is configured anew.
  if [[ -f build/CMakeCache.txt ]] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' build/CMakeCache.txt; then
    rm -rf build/CMakeCache.txt build/CMakeFiles
  fi
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DADSERVER_WERROR=ON \
    -DADSERVER_BUILD_TESTS=ON -DADSERVER_BUILD_BENCH=ON "${launcher[@]}" >/dev/null
  cmake --build build -j"$jobs"
}

# The switches that make a missing real component (browser, linter, Prometheus, PostgreSQL,
# Redis, the exported project lists) a failure instead of a skip.
require_all() {
  ADSERVER_REQUIRE_BROWSER=1 ADSERVER_REQUIRE_OPENAPI_LINT=1 ADSERVER_REQUIRE_PROMETHEUS=1 \
    ADSERVER_REQUIRE_POSTGRES=1 ADSERVER_REQUIRE_REDIS=1 ADSERVER_REQUIRE_REGISTRY=1 "$@"
}

release_suite() {
  require_all ctest_logged build ctest-release.log
}

sanitizer_build() {
  choose_launcher
  cmake -S . -B build-san -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
    -DADSERVER_FUZZ=ON -DADSERVER_BUILD_TESTS=ON -DADSERVER_WERROR=ON "${launcher[@]}" >/dev/null
  cmake --build build-san -j"$jobs"
}

# The sanitizer build beside the Release suite: the suite's tests spend much of their time
# waiting (on servers starting, sockets, timers, PostgreSQL, the browser), and the build takes
# only the CPU time they leave: it runs under SCHED_IDLE (chrt --idle), so a test that wakes
# preempts the compilers at once, and once the suite is done it has the machine to itself (an
# idle-class task runs at full speed when nothing else wants the CPU). Its output goes to
# build/sanitizer-build.log, shown when it fails.
sanitizer_log=build/sanitizer-build.log
sanitizer_pid=
start_sanitizer_build() {
  mkdir -p build
  # In a process group of its own (job control on for this one job), so that a stop of the
  # script ends the compilers too.
  set -m
  (
    # (A system that refuses the idle class gets the lowest nice value instead.)
    chrt --idle -p 0 "$BASHPID" >/dev/null || renice -n 19 -p "$BASHPID" >/dev/null || true
    started=$(now)
    sanitizer_build
    echo "sanitizer build finished in $(($(now) - started)) s (beside the Release suite, then alone)"
  ) >"$sanitizer_log" 2>&1 &
  sanitizer_pid=$!
  set +m
}

finish_sanitizer_build() {
  local status=0
  wait "$sanitizer_pid" || status=$?
  sanitizer_pid=
  if ((status != 0)); then
    tail -n 60 "$sanitizer_log"
    return "$status"
  fi
  tail -n 1 "$sanitizer_log"
}

sanitizer_suite() {
  ADSERVER_REQUIRE_POSTGRES=1 ADSERVER_REQUIRE_REDIS=1 ADSERVER_REQUIRE_REGISTRY=1 \
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest_logged build-san ctest-sanitizers.log -L "unit|integration"
}

# Modules (src/<module>/, tests/unit/<module>/) touched since $base, as a ctest label regex;
# "all" when a change reaches every test (build files, test support, the composition root).
changed_modules() {
  local files
  files=$( (git diff --name-only "$base" -- && git ls-files --others --exclude-standard) | sort -u)
  local modules=()
  local f
  for f in $files; do
    case $f in
      src/app/* | src/cli/* | tests/support/* | tests/integration/* | cmake/* | CMakeLists.txt | \
        */CMakeLists.txt | scripts/*)
        echo all
        return
        ;;
      src/*/* | tests/unit/*/*)
        f=${f#src/}
        f=${f#tests/unit/}
        modules+=("${f%%/*}")
        ;;
    esac
  done
  ((${#modules[@]})) && printf '%s\n' "${modules[@]}" | sort -u | paste -sd'|' || true
}

quick_suite() {
  local modules
  modules=$(changed_modules)
  local labels="^unit$"
  if [[ $modules == all ]]; then
    labels="^(unit|integration)$"
  elif [[ -n $modules ]]; then
    labels="^(unit|$modules)$"
  fi
  echo "changed modules: ${modules:-none}; ctest -L '$labels' (browser, anvil and bench excluded)"
  ctest_logged build ctest-quick.log -L "$labels" -LE "^(browser|anvil|bench)$"
}

if [[ $mode == quick ]]; then
  stage "install (what is missing)" scripts/install-deps.sh
  stage "Release build (gcc)" release_build
  stage "quick suite" quick_suite
  exit 0
fi

stage "install (what is missing)" scripts/install-deps.sh
stage "Release build (gcc)" release_build
start_sanitizer_build
stage "Release suite (the sanitizer build beside it, idle class)" release_suite
stage "Debian package test" scripts/package-test.sh build
stage "rest of the sanitizer build (clang: ASan+UBSan, tests and fuzz targets)" finish_sanitizer_build
stage "sanitizer suite (unit, integration)" sanitizer_suite
stage "fuzz targets, 60 s each" env FUZZ_BUILD_DIR=build-san FUZZ_OUT=build-san/runs/ci \
  FUZZ_JOBS=2 scripts/fuzz.sh 60
echo "== all tests passed"
