#!/usr/bin/env bash
# Takes a PostgreSQL advisory lock with psql (pg_try_advisory_lock) and, in the same statement,
# the fencing token (nextval of a sequence with CACHE 1), then writes through fencegate: one PUT
# of RESOURCE_PATH per line of standard input.
#
#   printf 'v1\nv2\n' | examples/postgresql/lock-and-write.sh LOCK_NAME RESOURCE_PATH
#
# Environment: FENCEGATE_URL (http://127.0.0.1:8080), PG_DSN (a libpq connection string; empty:
# libpq's PGHOST, PGPORT, PGUSER, PGDATABASE), LEASE_SECONDS (10: idle_session_timeout; a
# pinger keeps the session busy while this script runs), WAIT_SECONDS (30: how long to wait for
# the lock).
# Exit: 0 written, 3 refused by fencegate (the lock was lost), 4 lock not acquired in time,
# 1 other failure, 2 usage.
#
# An advisory lock lives as long as its session, and a stalled client's session can live on
# forever; idle_session_timeout turns it into a lease: the server ends a session that stays
# silent that long, and the lock goes with it.
set -uo pipefail
# shellcheck source=../common/fencegate.sh
. "$(dirname "$0")/../common/fencegate.sh"

[ $# -eq 2 ] || { echo "usage: $0 LOCK_NAME RESOURCE_PATH < lines" >&2; exit 2; }
lock=$1 path=$2
lease=${LEASE_SECONDS:-10}
export PGOPTIONS="${PGOPTIONS:-} -c idle_session_timeout=${lease}s -c client_min_messages=warning"

# One psql session for the whole run; the lock name and the sequence name ("fence:LOCK_NAME")
# travel as psql variables, quoted by psql (:'lock' as a literal, :"sequence" as an identifier).
# On an error psql stops, and the next read sees its end of output.
coproc pg { exec psql -X -q -A -t -v ON_ERROR_STOP=1 -v lock="$lock" -v sequence="fence:$lock" \
  ${PG_DSN:+"$PG_DSN"}; }
# shellcheck disable=SC2154 # pg_PID is set by coproc
pg_pid=$pg_PID pg_out=${pg[0]}
# Subshells (the pinger) do not inherit a coprocess's descriptors; they do inherit a copy.
exec {pg_in}>&"${pg[1]}"
eval "exec ${pg[1]}>&-"
pinger=""
# psql exits when the server ends the session; writing to it afterwards must fail, not kill us.
trap '' PIPE
release() {
  [ -n "$pinger" ] && kill "$pinger" 2>/dev/null
  # Unlocking in our own session can only release our own lock; if the session is gone, so is
  # the lock.
  printf "SELECT pg_advisory_unlock(hashtext(:'lock')) \\\\g /dev/null\n\\\\q\n" 1>&"$pg_in" 2>/dev/null
  exec {pg_in}>&-
  wait "$pg_pid" 2>/dev/null
}
trap release EXIT

# sql STATEMENT: runs STATEMENT and sets `reply` to its one-line result.
sql() {
  printf '%s\n' "$1" >&"$pg_in"
  IFS= read -r -t 30 reply <&"$pg_out" || { echo "psql: no reply to: $1" >&2; exit 1; }
}

# CACHE 1: every nextval comes from the shared sequence, in order. With a larger cache each
# session hands out numbers from its own pre-allocated block, and a later holder could get a
# lower number than an earlier one.
sql "CREATE SEQUENCE IF NOT EXISTS :\"sequence\" CACHE 1; SELECT 'ok';"
[ "$reply" = ok ] || { echo "psql: $reply" >&2; exit 1; }

# nextval runs only once the lock is ours (CASE evaluates its branches in order), so a holder's
# token is always higher than every earlier holder's.
deadline=$(( SECONDS + ${WAIT_SECONDS:-30} ))
while :; do
  sql "SELECT CASE WHEN pg_try_advisory_lock(hashtext(:'lock'))
       THEN nextval(quote_ident(:'sequence')::regclass) END;"
  [[ $reply =~ ^[0-9]+$ ]] && break
  [ -z "$reply" ] || { echo "psql: $reply" >&2; exit 1; }
  [ "$SECONDS" -lt "$deadline" ] || { echo "not acquired: $lock" >&2; exit 4; }
  sleep 0.2
done
token=$reply

# The pinger runs a statement every third of the lease, so a live script never looks idle.
(
  while sleep "$(( lease / 3 )).$(printf %03d $(( lease * 1000 / 3 % 1000 )))"; do
    printf 'SELECT 1 \\g /dev/null\n' >&"$pg_in" || exit
  done
) &
pinger=$!

echo "acquired lock=$lock token=$token"
write_lines "$path" "$token"
