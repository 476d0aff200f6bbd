# shellcheck shell=bash
# Sourced by the shell examples: writes through fencegate with a fencing token.
#
# FENCEGATE_URL is the gateway's traffic listener (default http://127.0.0.1:8080).

FENCEGATE_URL=${FENCEGATE_URL:-http://127.0.0.1:8080}

# fenced_put PATH TOKEN BODY: replaces the resource at PATH with BODY (plus a newline), carrying
# "Fencing-Token: TOKEN". Returns 0 when written, 3 when fencegate refused the token (409: a
# newer lock holder has written since, so this client lost its lock and must stop), 1 otherwise.
fenced_put() {
  local path=$1 token=$2 body=$3 response status
  response=$(mktemp)
  status=$(printf '%s\n' "$body" | curl -sS -o "$response" -w '%{http_code}' -X PUT \
    -H "Fencing-Token: $token" --data-binary @- "$FENCEGATE_URL$path") || status=000
  case $status in
    2??) echo "wrote $path token=$token status=$status"; rm -f "$response"; return 0 ;;
    409) echo "refused $path token=$token status=409 $(cat "$response")" ;;
    *) echo "failed $path token=$token status=$status $(cat "$response")" ;;
  esac
  rm -f "$response"
  [ "$status" = 409 ] && return 3
  return 1
}

# write_lines PATH TOKEN: one fenced_put per line of standard input (each line is the resource's
# next version, as a worker publishing results would send them). Stops at the first failure and
# returns its status.
write_lines() {
  local line rc
  while IFS= read -r line; do
    fenced_put "$1" "$2" "$line" || { rc=$?; return "$rc"; }
  done
  return 0
}
