#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs every test: unit tests in parallel, then
# the integration tests (which start the real fencegate binary) one at a time, then the zombie
# torture run (tests/torture). Prints the time each stage took. Then the same tests under
# sanitizers, and the fuzzers (see "Sanitizer and fuzz builds" below).
#
# FENCEGATE_TEST_STAGES picks stages to run (default: all), e.g.
#   FENCEGATE_TEST_STAGES="asan fuzz" bash scripts/test.sh
# Stages: build unit integration browser package faults load webdav lock_services clients s3
# torture asan tsan fuzz
# (all but the last three need "build"), and replicas (the etcd store and several replicas).
set -euo pipefail
cd "$(dirname "$0")/.."

stages=" ${FENCEGATE_TEST_STAGES:-build unit integration browser package faults load webdav lock_services clients replicas s3 torture asan tsan fuzz} "
want() { [[ "$stages" == *" $1 "* ]]; }
jobs=$(nproc 2>/dev/null || echo 2)

stage_start=0
stage() { stage_start=$(date +%s); echo "==> $1"; }
stage_done() { echo "==> $1 took $(( $(date +%s) - stage_start ))s"; }
total_start=$(date +%s)

stage "install dependencies"
scripts/install-deps.sh
stage_done "install dependencies"

# The build is a unity build (CMakeLists.txt, FENCEGATE_UNITY_BUILD): on a fresh clone it takes
# about half the CPU time of compiling file by file (docs/TESTING.md "Build time"). For
# incremental work on a few files, FENCEGATE_UNITY_BUILD=OFF recompiles only those files.
if want build; then
  stage "build"
  TIMEFORMAT="==> build used %U s user + %S s system CPU"
  time scripts/build.sh -DFENCEGATE_BUILD_TESTS=ON -DFENCEGATE_UNITY_BUILD="${FENCEGATE_UNITY_BUILD:-ON}"
  stage_done "build"
fi

# ---- Sanitizer and fuzz builds ----------------------------------------------------------------
# Each has its own build dir, built with clang. Sanitizer reports go to files under
# <build dir>/sanitizer-logs (they come from the gtest binaries and from every fencegate the
# integration tests start); any report fails the stage even when the test itself passed.

# Debian installs llvm-symbolizer (for file:line in reports) under this name with llvm-14.
symbolizer=external_symbolizer_path=/usr/lib/llvm-14/bin/llvm-symbolizer

# configure_sanitized DIR OPT CMAKE_ARGS...: configures DIR with clang at optimization OPT. Line
# tables only: reports still name file and line. The ASan build is -O0: clang compiles a unit
# with ASan+UBSan about 2.6x faster at -O0 than at -O1 (gateway/session/session.cc: 45.7 s -> 17.6 s)
# and the tests it runs mostly wait on sockets. TSan stays at -O1 (its runtime cost at -O0 is
# far higher) and the fuzzers too (executions per second are their whole point).
configure_sanitized() {
  local dir=$1 opt=$2
  shift 2
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt -gline-tables-only" "$@" >/dev/null
}

# check_sanitizer_logs DIR: fails when any sanitizer report was written under DIR/sanitizer-logs.
check_sanitizer_logs() {
  local reports
  reports=$(find "$1/sanitizer-logs" -type f -size +0 2>/dev/null || true)
  if [ -n "$reports" ]; then
    echo "sanitizer reports in $1/sanitizer-logs:"
    for f in $reports; do echo "--- $f"; head -n 80 "$f"; done
    return 1
  fi
}

# fresh_logs DIR: an empty report dir, so that a report from an earlier run cannot fail this one.
fresh_logs() {
  rm -rf "$1/sanitizer-logs"
  mkdir -p "$1/sanitizer-logs"
  realpath "$1/sanitizer-logs"
}

# The sanitizer and fuzz builds compile the tree again with clang (together about 17 minutes of
# both cores here), while the stages from "unit" to "torture" mostly wait on servers, sockets
# and disks. So those builds run in the background, one at a time, at the lowest CPU priority
# (nice 19: a test gets a core whenever it wants one). The first starts after the main build,
# the next one as soon as a stage has waited for the one before it, and each sanitizer or fuzz
# stage first waits for its own build.
pending_builds=()
for name in asan tsan fuzz; do
  if want "$name"; then pending_builds+=("$name"); fi
done
declare -A build_pid=() build_started=()
trap 'for pid in "${build_pid[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT

# start_next_build: configures the next pending sanitizer or fuzz build and starts it.
start_next_build() {
  [ ${#pending_builds[@]} -gt 0 ] || return 0
  local name=${pending_builds[0]} dir target
  pending_builds=("${pending_builds[@]:1}")
  case $name in
    asan) dir=build-asan target=unit_and_integration_tests
          configure_sanitized "$dir" -O0 -DFENCEGATE_SANITIZE=address ;;
    tsan) dir=build-tsan target=unit_and_integration_tests
          configure_sanitized "$dir" -O1 -DFENCEGATE_SANITIZE=thread ;;
    fuzz) dir=build-fuzz target=fuzzers
          configure_sanitized "$dir" -O1 -DFENCEGATE_BUILD_FUZZERS=ON -DFENCEGATE_BUILD_TESTS=OFF ;;
  esac
  echo "==> $name build started in the background (log: $dir/background-build.log)"
  nice -n 19 cmake --build "$dir" --target "$target" -j "$jobs" >"$dir/background-build.log" 2>&1 &
  build_pid[$name]=$!
  build_started[$name]=$(date +%s)
}

# finish_build NAME DIR: waits for NAME's background build; on failure shows its log's end.
finish_build() {
  local name=$1 dir=$2 status=0
  wait "${build_pid[$name]}" || status=$?
  unset "build_pid[$name]"
  echo "==> $name build ran $(( $(date +%s) - build_started[$name] ))s in the background"
  if [ "$status" -ne 0 ]; then
    tail -n 80 "$dir/background-build.log"
    echo "$name build failed; the whole log is $dir/background-build.log"
    return 1
  fi
}

start_next_build

# ctest_stage STAGE TITLE LABEL TIMEOUT [CTEST_ARGS...]: runs the tests with LABEL (a regex) as
# one timed stage when STAGE is wanted. Only the unit tests run in parallel: the others start
# real servers and the fencegate binary, and share the two cores badly.
ctest_stage() {
  local name=$1 title=$2 label=$3 timeout=$4
  shift 4
  want "$name" || return 0
  stage "$title"
  ctest --test-dir build -L "$label" --output-on-failure --timeout "$timeout" "$@"
  stage_done "$title"
}

ctest_stage unit "unit tests" unit 300 -j "$jobs"
ctest_stage integration "integration tests" integration 600
# The admin console in headless Chromium (tests/browser/console_test.py): login, every page
# without a browser console error, a zombie write live in the list, a forced lock release.
# Screenshots in build/tests/browser/browser-output/ (about 10 s).
ctest_stage browser "browser" browser 300
# The Debian package (tests/deploy/check_package.sh): built by cpack from the main build dir
# (no second compile: only the install prefix changes, to /usr), inspected with dpkg-deb,
# installed (root: into the machine; otherwise into a scratch root), started from / with the
# installed config, a fenced write and a SIGHUP reload, then removed and purged.
if want package; then
  stage "package"
  if [ ! -f build/build.ninja ]; then
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DFENCEGATE_BUILD_TESTS=OFF >/dev/null
  fi
  cmake -S . -B build -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
  cmake --build build --target fencegate fencegate_man -j "$jobs"
  timeout 900 tests/deploy/check_package.sh build
  stage_done "package"
fi
# kill -9 loop, full and read-only store disk (mounts: root), wall-clock jumps under faketime.
ctest_stage faults "faults" faults 600
# Abuse of the real binary with its memory bounds asserted: a flood of stale writes, hundreds of
# paused uploads, trickling writes cut by the write deadline (under 1 min).
ctest_stage load "load" load 300
# The webdav adapter before a real Apache mod_dav_fs: flows, two-gateway races (about 1 min).
ctest_stage webdav "webdav" webdav 300
ctest_stage lock_services "lock services" lock_services 300
# What clients program against: api/openapi.yaml checked against the real binary's answers, the
# Python client library (clients/python/) and the lock command, with real lock servers.
ctest_stage clients "clients" clients 300
# The etcd store and several replicas on a real etcd cluster (tests/etcd, tests/replicas).
ctest_stage replicas "replicas" '^(etcd|replicas)$' 300
# The s3 adapter against a real Ceph radosgw (tests/support/radosgw.sh, started once) and awscli,
# then the zombie torture's s3 mode (its own radosgw; 30 s of load). About 2 minutes.
ctest_stage s3 "s3" s3 600
ctest_stage torture "torture" torture 1500

if want asan; then
  stage "asan build (AddressSanitizer + UndefinedBehaviorSanitizer): waiting for it"
  finish_build asan build-asan
  stage_done "asan build"
  start_next_build

  stage "asan unit + integration tests"
  logs=$(fresh_logs build-asan)
  export ASAN_OPTIONS="$symbolizer:log_path=$logs/asan:detect_leaks=1:strict_string_checks=1"
  export UBSAN_OPTIONS="$symbolizer:log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1"
  failed=0
  ctest --test-dir build-asan -L unit -j "$jobs" --output-on-failure --timeout 600 || failed=1
  # Leaks are checked here too: every fencegate the integration tests stop with SIGTERM, shutdown
  # drains cut at their deadline included, must exit with nothing leaked (Server::Shutdown lets
  # go of the sessions that still hold themselves). A SIGKILL leaves no report, by design.
  ctest --test-dir build-asan -L integration --output-on-failure --timeout 900 || failed=1
  check_sanitizer_logs build-asan || failed=1
  [ "$failed" -eq 0 ]
  unset ASAN_OPTIONS UBSAN_OPTIONS
  stage_done "asan unit + integration tests"
fi

if want tsan; then
  stage "tsan build (ThreadSanitizer): waiting for it"
  finish_build tsan build-tsan
  stage_done "tsan build"
  start_next_build

  stage "tsan unit + integration tests"
  logs=$(fresh_logs build-tsan)
  suppressions=$(realpath tests/tsan.supp)
  export TSAN_OPTIONS="$symbolizer:log_path=$logs/tsan:suppressions=$suppressions"
  failed=0
  ctest --test-dir build-tsan -L unit -j "$jobs" --output-on-failure --timeout 900 || failed=1
  ctest --test-dir build-tsan -L integration --output-on-failure --timeout 900 || failed=1
  check_sanitizer_logs build-tsan || failed=1
  [ "$failed" -eq 0 ]
  unset TSAN_OPTIONS
  stage_done "tsan unit + integration tests"
fi

if want fuzz; then
  stage "fuzz build (libFuzzer + ASan + UBSan): waiting for it"
  finish_build fuzz build-fuzz
  stage_done "fuzz build"

  # Each fuzzer starts from its checked-in seeds and grows a scratch corpus (the checked-in one
  # stays as it is); a crash or a violated property fails the stage and leaves the input in
  # build-fuzz/artifacts/. A fuzzer is one single-threaded process, so they run $jobs at a time.
  fuzz_seconds=${FENCEGATE_FUZZ_SECONDS:-30}
  run_fuzzer() {
    local target=$1 seeds=$2 dict=()
    rm -rf "build-fuzz/corpus/$target"
    mkdir -p "build-fuzz/corpus/$target" build-fuzz/artifacts
    [ -f "tests/fuzz/$target.dict" ] && dict=("-dict=tests/fuzz/$target.dict")
    ASAN_OPTIONS=$symbolizer UBSAN_OPTIONS="$symbolizer:print_stacktrace=1" \
      "build-fuzz/tests/fuzz/$target" -max_total_time="$fuzz_seconds" -timeout=25 \
      -print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/$target-" "${dict[@]}" \
      "build-fuzz/corpus/$target" "$seeds" >"build-fuzz/$target.log" 2>&1
  }
  targets=()
  for seeds in tests/fuzz/corpus/*/; do targets+=("$(basename "$seeds")"); done
  for ((i = 0; i < ${#targets[@]}; i += jobs)); do
    batch=("${targets[@]:i:jobs}")
    stage "fuzz ${batch[*]} for ${fuzz_seconds}s"
    pids=()
    for target in "${batch[@]}"; do
      run_fuzzer "$target" "tests/fuzz/corpus/$target/" &
      pids+=($!)
    done
    for j in "${!batch[@]}"; do
      target=${batch[j]}
      if ! wait "${pids[j]}"; then
        tail -n 60 "build-fuzz/$target.log"
        echo "fuzz $target failed; the input is in build-fuzz/artifacts/"
        exit 1
      fi
      echo "$target:"
      grep -E '^stat::(number_of_executed_units|average_exec_per_sec)' "build-fuzz/$target.log"
    done
    stage_done "fuzz ${batch[*]}"
  done
fi

echo "==> all tests passed in $(( $(date +%s) - total_start ))s"
