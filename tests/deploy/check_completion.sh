#!/usr/bin/env bash
# deploy/bash-completion/fencegate offers every option of `fencegate --help`, the subcommands and
# their verbs. Usage: check_completion.sh COMPLETION_FILE FENCEGATE_BINARY
set -euo pipefail
# shellcheck source=/dev/null
source "$1"
binary=$2
failures=0

# complete WORDS...: the completions of the last word, as bash would ask for them.
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
  COMPREPLY=()
  _fencegate
  echo "${COMPREPLY[*]}"
}
expect() {
  local want=$1; shift
  local got
  got=$(complete_words "$@")
  if [[ " $got " != *" $want "* ]]; then
    echo "FAIL: completing '$*' offers '$got', not $want"
    failures=$((failures + 1))
  fi
}

for option in $("$binary" --help | grep -oE '(^|[ ,])--[a-z-]+' | tr -d ' ,' | sort -u); do
  expect "$option" fencegate "${option:0:4}"
done
expect store fencegate st
expect lock fencegate l
expect floor fencegate store f
expect --prefix fencegate store floor --p
expect acquire fencegate lock a
expect --ttl fencegate lock acquire NAME --t
[ "$failures" -eq 0 ] && echo "bash completion: every case completes"
exit "$failures"
