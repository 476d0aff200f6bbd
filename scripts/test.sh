#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs every test: unit tests in parallel, then
# the integration tests (which start the real fencegate binary) one at a time, then the zombie
# torture run (tests/torture). Prints the time each stage took.
set -euo pipefail
cd "$(dirname "$0")/.."

stage_start=0
stage() { stage_start=$(date +%s); echo "==> $1"; }
stage_done() { echo "==> $1 took $(( $(date +%s) - stage_start ))s"; }
total_start=$(date +%s)

stage "install dependencies"
scripts/install-deps.sh
stage_done "install dependencies"

stage "build"
scripts/build.sh -DFENCEGATE_BUILD_TESTS=ON
stage_done "build"

stage "unit tests"
ctest --test-dir build -L unit -j "$(nproc 2>/dev/null || echo 2)" --output-on-failure --timeout 300
stage_done "unit tests"

stage "integration tests"
ctest --test-dir build -L integration --output-on-failure --timeout 600
stage_done "integration tests"

stage "faults"
# kill -9 loop, full and read-only store disk (mounts: root), wall-clock jumps under faketime.
ctest --test-dir build -L faults --output-on-failure --timeout 600
stage_done "faults"

stage "lock services"
ctest --test-dir build -L lock_services --output-on-failure --timeout 300
stage_done "lock services"

stage "torture"
ctest --test-dir build -L torture --output-on-failure
stage_done "torture"

echo "==> all tests passed in $(( $(date +%s) - total_start ))s"
