#!/usr/bin/env bash
# Takes an etcd lock with etcdctl, uses the lock key's create_revision as the fencing token, and
# writes through fencegate: one PUT of RESOURCE_PATH per line of standard input.
#
#   printf 'v1\nv2\n' | examples/etcd/lock-and-write.sh LOCK_NAME RESOURCE_PATH
#
# Environment: FENCEGATE_URL (http://127.0.0.1:8080), ETCD_ENDPOINT (127.0.0.1:2379),
# LEASE_SECONDS (10: the lease etcdctl keeps alive while this script runs), WAIT_SECONDS (30:
# how long to wait for the lock).
# Exit: 0 written, 3 refused by fencegate (the lock was lost), 4 lock not acquired in time,
# 1 other failure, 2 usage.
#
# Why create_revision and not the lease ID: the revision is etcd's global, ever-increasing
# write counter, and a lock key created later (by the next holder) always has a higher one.
# Lease IDs are only unique, not ordered by lock acquisition.
set -uo pipefail
# shellcheck source=../common/fencegate.sh
. "$(dirname "$0")/../common/fencegate.sh"

[ $# -eq 2 ] || { echo "usage: $0 LOCK_NAME RESOURCE_PATH < lines" >&2; exit 2; }
lock=$1 path=$2
etcdctl=(etcdctl --endpoints="${ETCD_ENDPOINT:-127.0.0.1:2379}")
export ETCDCTL_API=3

# Without a command, `etcdctl lock` prints the key it created once the lock is ours and holds
# the lock, keeping its lease alive, until it gets SIGTERM.
coproc holder { exec "${etcdctl[@]}" lock --ttl="${LEASE_SECONDS:-10}" "$lock"; }
# shellcheck disable=SC2154 # holder_PID is set by coproc
holder_pid=$holder_PID
release() { kill -TERM "$holder_pid" 2>/dev/null; wait "$holder_pid" 2>/dev/null; }
trap release EXIT

IFS= read -r -t "${WAIT_SECONDS:-30}" key <&"${holder[0]}" || { echo "not acquired: $lock" >&2; exit 4; }
token=$("${etcdctl[@]}" get "$key" -w fields | sed -n 's/^"CreateRevision" : //p')
[ -n "$token" ] || { echo "lock key $key vanished before its revision was read" >&2; exit 1; }
echo "acquired lock=$lock token=$token key=$key"

write_lines "$path" "$token"
