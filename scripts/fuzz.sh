#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang, ASan + UBSan) and runs each for SECONDS on a fresh
# copy of its seed corpus, two at a time. Fails if any target reports a crash, a leak, a UBSan
# error, a timeout or an out-of-memory. CI runs it with 60 s; a long run is the same with more
# (docs/testing.md).
#   scripts/fuzz.sh SECONDS [TARGET...]     (targets: http_request ad_request identity_cookie
#                                            click_token bulk_import config admin_json)
# Environment: FUZZ_BUILD_DIR (build-san: scripts/test.sh's sanitizer tree), FUZZ_JOBS (2,
# targets run at once), FUZZ_OUT (where corpora, logs and crash inputs go; default
# $FUZZ_BUILD_DIR/runs/<time>), FUZZ_BUILD_ONLY=1 (build the targets, run nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -lt 1 || ! "$1" =~ ^[0-9]+$ ]]; then
  sed -n '2,10p' "$0" >&2
  exit 2
fi
seconds=$1
shift
all_targets=(http_request ad_request identity_cookie click_token bulk_import config admin_json)
targets=("${@:-${all_targets[@]}}")
build=${FUZZ_BUILD_DIR:-build-san}
jobs=${FUZZ_JOBS:-2}
out=${FUZZ_OUT:-$build/runs/$(date -u +%Y%m%dT%H%M%SZ)}

# The same configuration as scripts/test.sh's sanitizer build (whose tree this is by default):
# clang, ASan + UBSan and libFuzzer's coverage on every library, tests as the tree has them.
if [[ -f $build/CMakeCache.txt ]] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$build/CMakeCache.txt"; then
  rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  -DADSERVER_FUZZ=ON -DADSERVER_WERROR=ON >/dev/null
cmake --build "$build" -j"$jobs" --target $(printf '%s_fuzzer ' "${targets[@]}")
# FUZZ_BUILD_ONLY=1: only the build.
[[ "${FUZZ_BUILD_ONLY:-0}" != 1 ]] || exit 0
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Runs one target in $out/<target>/ (corpus/, crashes as crash-*, log). Exit status: libFuzzer's.
run_one() {
  local target=$1 dir="$out/$1"
  rm -rf "$dir"
  mkdir -p "$dir/corpus"
  cp fuzz/corpus/"$target"/* "$dir/corpus/"
  local dict=()
  case $target in
    http_request) dict=(-dict=fuzz/dict/http_request.dict) ;;
    ad_request | admin_json) dict=(-dict=fuzz/dict/json.dict) ;;
    config) dict=(-dict=fuzz/dict/config.dict) ;;
    bulk_import) dict=(-dict=fuzz/dict/bulk_import.dict) ;;
  esac
  # TMPDIR: the config target writes its input to a file there.
  mkdir -p "$dir/tmp"
  TMPDIR="$dir/tmp" ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/fuzz/${target}_fuzzer" "$dir/corpus" "${dict[@]}" -max_total_time="$seconds" \
    -timeout=60 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
    -artifact_prefix="$dir/" >"$dir/log" 2>&1 && echo 0 >"$dir/rc" || echo $? >"$dir/rc"
}

running=0
for target in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
  run_one "$target" &
  running=$((running + 1))
done
wait

status=0

printf '%-16s %8s %12s %8s %8s  %s\n' target seconds executions corpus crashes result
for target in "${targets[@]}"; do
  result=ok
  [[ "$(cat "$out/$target/rc")" == 0 ]] || result=FAILED
  log="$out/$target/log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  corpus=$(find "$out/$target/corpus" -type f | wc -l)
  crashes=$(find "$out/$target" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' \
    -o -maxdepth 1 -name 'timeout-*' -o -maxdepth 1 -name 'oom-*' | wc -l)
  [[ $crashes -eq 0 ]] || result=FAILED
  printf '%-16s %8s %12s %8s %8s  %s\n' "$target" "$seconds" "${execs:-?}" "$corpus" "$crashes" \
    "$result"
  if [[ $result != ok ]]; then
    status=1
    echo "---- $log (last 60 lines)"
    tail -60 "$log"
  fi
done
echo "runs in $out"
exit $status
