#!/usr/bin/env bash
# Takes a Redis lock with redis-cli (SET NX PX) and, in the same Lua script, the fencing token
# (INCR of a counter next to the lock), then writes through fencegate: one PUT of RESOURCE_PATH
# per line of standard input.
#
#   printf 'v1\nv2\n' | examples/redis/lock-and-write.sh LOCK_NAME RESOURCE_PATH
#
# Environment: FENCEGATE_URL (http://127.0.0.1:8080), REDIS_URL (redis://127.0.0.1:6379),
# LEASE_SECONDS (10: the lock key's PX; renewed every third of it while this script runs),
# WAIT_SECONDS (30: how long to wait for the lock).
# Exit: 0 written, 3 refused by fencegate (the lock was lost), 4 lock not acquired in time,
# 1 other failure, 2 usage.
#
# Keys: lock:LOCK_NAME holds the owner's random id, fence:LOCK_NAME the last token issued.
# Taking both in one script means no holder ever runs with a token lower than its predecessor's.
set -uo pipefail
# shellcheck source=../common/fencegate.sh
. "$(dirname "$0")/../common/fencegate.sh"

[ $# -eq 2 ] || { echo "usage: $0 LOCK_NAME RESOURCE_PATH < lines" >&2; exit 2; }
lock=$1 path=$2
redis=(redis-cli -u "${REDIS_URL:-redis://127.0.0.1:6379}")
owner=$(cat /proc/sys/kernel/random/uuid)
lease_ms=$(( ${LEASE_SECONDS:-10} * 1000 ))
keys=(2 "lock:$lock" "fence:$lock")

acquire='if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  return redis.call("INCR", KEYS[2]) end return false'
# Renew and release touch the lock only while it still holds our owner id.
renew='if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0'
# shellcheck disable=SC2089 # Lua source, passed to redis-cli as one argument
release='if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1]) end return 0'

deadline=$(( SECONDS + ${WAIT_SECONDS:-30} ))
while :; do
  token=$("${redis[@]}" EVAL "$acquire" "${keys[@]}" "$owner" "$lease_ms") || exit 1
  [[ $token =~ ^[0-9]+$ ]] && break
  [ -z "$token" ] || { echo "redis: $token" >&2; exit 1; }
  [ "$SECONDS" -lt "$deadline" ] || { echo "not acquired: $lock" >&2; exit 4; }
  sleep 0.1
done

renew_every=$(( lease_ms / 3 ))
(
  while sleep "$(( renew_every / 1000 )).$(printf %03d $(( renew_every % 1000 )))"; do
    [ "$("${redis[@]}" EVAL "$renew" "${keys[@]}" "$owner" "$lease_ms")" = 1 ] && continue
    echo "lease of lock:$lock expired: the lock is lost"
    exit
  done
) &
renewer=$!
release_lock() {
  kill "$renewer" 2>/dev/null
  # shellcheck disable=SC2090 # Lua source, passed to redis-cli as one argument
  "${redis[@]}" EVAL "$release" "${keys[@]}" "$owner" >/dev/null
}
trap release_lock EXIT

echo "acquired lock=$lock token=$token owner=$owner"
write_lines "$path" "$token"
