#!/usr/bin/env bash
# systemd-analyze verify of deploy/systemd/fencegate.service, with its /usr/bin/fencegate pointed
# at the binary under test (the unit is checked as shipped otherwise). Exit 77 (ctest: skipped)
# with the reason when systemd-analyze cannot run here.
# Usage: verify_unit.sh UNIT_FILE FENCEGATE_BINARY
set -euo pipefail
unit=$1 binary=$2
if ! command -v systemd-analyze >/dev/null; then
  echo "SKIP: systemd-analyze is not installed"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed "s#/usr/bin/fencegate#$binary#g" "$unit" > "$dir/fencegate.service"
# --man=no: the page is not installed here (the package stage verifies the installed unit with it).
if ! output=$(systemd-analyze verify --man=no "$dir/fencegate.service" 2>&1); then
  if grep -qiE 'Failed to (initialize manager|connect)|System has not been booted' <<<"$output"; then
    echo "SKIP: systemd-analyze verify cannot run here: $output"
    exit 77
  fi
  echo "$output"
  exit 1
fi
if [ -n "$output" ]; then
  echo "$output"  # a warning is a failure too: the unit must verify clean
  exit 1
fi
echo "systemd-analyze verify: clean"
