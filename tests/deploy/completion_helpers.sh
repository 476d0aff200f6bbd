# Shared by the bash completion checks: asks the sourced completion function what bash would
# offer, and counts what is missing. Sourced after the completion file; `failures` is the count.
failures=0

# complete_words WORDS...: the completions of the last word, as bash would ask for them.
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
  COMPREPLY=()
  _fencegate
  echo "${COMPREPLY[*]}"
}
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
offers() {  # offers WANT WORDS...
  local want=$1; shift
  local got
  got=$(complete_words "$@")
  [[ " $got " == *" $want "* ]] || fail "completing '$*' offers '$got', not $want"
}
lacks() {  # lacks UNWANTED WORDS...
  local unwanted=$1; shift
  local got
  got=$(complete_words "$@")
  [[ " $got " != *" $unwanted "* ]] || fail "completing '$*' offers $unwanted"
}
