#!/usr/bin/env bash
# deploy/bash-completion/fencegate completes every verb of `fencegate lock` and, for each verb,
# every option its usage line in `fencegate lock --help` lists (and nothing another verb takes),
# files for the TLS and key file options, and commands after `run NAME --`.
# Usage: check_lock_completion.sh COMPLETION_FILE FENCEGATE_BINARY
set -euo pipefail
# shellcheck source=/dev/null
source "$1"
binary=$2
# shellcheck source=tests/deploy/completion_helpers.sh
source "$(dirname "$0")/completion_helpers.sh"
usage=$("$binary" lock --help)

# The verbs, as the usage lines name them.
verbs=$(grep -oE '^(Usage:)? +fencegate lock [a-z]+' <<<"$usage" | awk '{print $NF}' | sort -u)
[ -n "$verbs" ] || fail "no verbs in fencegate lock --help"
# Options every verb takes: the OPTIONS lines.
common=$(sed -n '/^OPTIONS:/,/^$/p' <<<"$usage" | grep -oE -- '--[a-z-]+' | sort -u)
[ -n "$common" ] || fail "no OPTIONS in fencegate lock --help"
for verb in $verbs; do
  offers "$verb" fencegate lock "${verb:0:2}"
  own=$(grep -E "fencegate lock $verb " <<<"$usage" | { grep -oE -- '--[a-z-]+' || true; } | sort -u)
  for option in $own $common; do
    offers "$option" fencegate lock "$verb" NAME "${option:0:3}"
  done
  for option in --owner --kill-grace --ttl; do
    grep -qx -- "$option" <<<"$own" || lacks "$option" fencegate lock "$verb" NAME --
  done
done

# File arguments complete file names; after `run NAME --` come commands.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
touch "$dir/ca.pem"
for option in --ca-file --client-cert-file --client-key-file --api-key-file; do
  offers "$dir/ca.pem" fencegate lock status NAME "$option" "$dir/c"
done
offers bash fencegate lock run NAME --ttl 5s -- bas
[ "$failures" -eq 0 ] && echo "bash completion of fencegate lock: every case completes"
exit "$failures"
