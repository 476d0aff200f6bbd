#!/usr/bin/env bash
# Takes a ZooKeeper lock with zkCli.sh (the recipe kazoo and Curator use: an ephemeral sequential
# node under /locks/LOCK_NAME; the lowest sequence holds the lock), uses the node's czxid as the
# fencing token, and writes through fencegate: one PUT of RESOURCE_PATH per line of standard
# input.
#
#   printf 'v1\nv2\n' | examples/zookeeper/lock-and-write.sh LOCK_NAME RESOURCE_PATH
#
# Environment: FENCEGATE_URL (http://127.0.0.1:8080), ZK_SERVER (127.0.0.1:2181),
# LEASE_SECONDS (10: the session timeout; zkCli keeps the session alive while this script runs,
# and the node dies with the session), WAIT_SECONDS (30: how long to wait for the lock),
# ZKCLI (/usr/share/zookeeper/bin/zkCli.sh).
# Exit: 0 written, 3 refused by fencegate (the lock was lost), 4 lock not acquired in time,
# 1 other failure, 2 usage.
#
# Nodes are named <uuid>__lock__<sequence>, as kazoo's Lock names them, so this script and
# kazoo clients contend for the same lock.
set -uo pipefail
# shellcheck source=../common/fencegate.sh
. "$(dirname "$0")/../common/fencegate.sh"

[ $# -eq 2 ] || { echo "usage: $0 LOCK_NAME RESOURCE_PATH < lines" >&2; exit 2; }
lock=$1 path=$2 dir=/locks/$1
wait_seconds=${WAIT_SECONDS:-30}

# One zkCli session for the whole run: commands go in on its standard input, replies (on its
# stdout and stderr) come back through the coprocess pipe.
coproc zk { exec "${ZKCLI:-/usr/share/zookeeper/bin/zkCli.sh}" -server "${ZK_SERVER:-127.0.0.1:2181}" \
  -timeout "$(( ${LEASE_SECONDS:-10} * 1000 ))" 2>&1; }
# shellcheck disable=SC2154 # zk_PID is set by coproc
zk_pid=$zk_PID
zk_out=${zk[0]} zk_in=${zk[1]}
node=""
release() {
  # Deleting our own node frees the lock; quitting closes the session, which would too.
  [ -n "$node" ] && printf 'delete %s\n' "$node" 1>&"$zk_in" 2>/dev/null
  printf 'quit\n' 1>&"$zk_in" 2>/dev/null
  exec {zk_in}>&-
  timeout 10 tail --pid="$zk_pid" -f /dev/null || kill "$zk_pid" 2>/dev/null
}
trap release EXIT

# zk COMMAND PATTERN: runs COMMAND and sets `reply` to the first reply line matching the
# extended regex PATTERN (errors included in the pattern by the caller).
zk() {
  printf '%s\n' "$1" >&"$zk_in"
  while IFS= read -r -t "$wait_seconds" reply <&"$zk_out"; do
    [[ $reply =~ $2 ]] && return 0
  done
  echo "zkCli: no reply to '$1'" >&2
  exit 1
}

for parent in /locks "$dir"; do
  zk "create $parent \"\"" "^(Created $parent|Node already exists: $parent)\$"
done
zk "create -e -s $dir/$(tr -d - </proc/sys/kernel/random/uuid)__lock__ \"\"" \
  "^(Created $dir/.*__lock__[0-9]{10}|.*(Exception|Error).*)\$"
[[ $reply == Created* ]] || { echo "zkCli: $reply" >&2; exit 1; }
node=${reply#Created }
sequence=${node##*__lock__}

# The lock is ours once no contender has a lower sequence number. (kazoo watches the
# predecessor instead of polling; a shell has no watches.)
deadline=$(( SECONDS + wait_seconds ))
while :; do
  zk "ls $dir" '^\[.*\]$'
  lowest=$(tr -d '[] ' <<<"$reply" | tr , '\n' | grep -o '__lock__[0-9]\{10\}$' | sort | head -n 1)
  [ "$lowest" = "__lock__$sequence" ] && break
  [ "$SECONDS" -lt "$deadline" ] || { echo "not acquired: $lock" >&2; exit 4; }
  sleep 0.2
done

zk "stat $node" '^cZxid = 0x[0-9a-f]+$'
token=$(( 16#${reply#cZxid = 0x} ))
echo "acquired lock=$lock token=$token node=$node sequence=$((10#$sequence))"

write_lines "$path" "$token"
