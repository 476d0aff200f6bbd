#!/usr/bin/env bash
# deploy/bash-completion/fencegate offers every option of `fencegate --help`, the subcommands and
# their verbs. Usage: check_completion.sh COMPLETION_FILE FENCEGATE_BINARY
set -euo pipefail
# shellcheck source=/dev/null
source "$1"
binary=$2
# shellcheck source=tests/deploy/completion_helpers.sh
source "$(dirname "$0")/completion_helpers.sh"

for option in $("$binary" --help | grep -oE '(^|[ ,])--[a-z-]+' | tr -d ' ,' | sort -u); do
  offers "$option" fencegate "${option:0:4}"
done
offers store fencegate st
offers lock fencegate l
offers floor fencegate store f
offers --prefix fencegate store floor --p
offers acquire fencegate lock a
offers --ttl fencegate lock acquire NAME --t
[ "$failures" -eq 0 ] && echo "bash completion: every case completes"
exit "$failures"
