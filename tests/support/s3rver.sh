#!/usr/bin/env bash
# s3rver (npm, installed by scripts/install-deps.sh into /opt/fencegate-test/npm) on an
# ephemeral loopback port, data in DIR: an S3 server that accepts If-Match / If-None-Match and
# ignores them, the lying backend of the condition probe tests. Its one credential is
# S3RVER / S3RVER (checked: requests must be signed with it).
#
#   tests/support/s3rver.sh start DIR   -> prints "s3rver ready port=PORT access=S3RVER secret=S3RVER"
#   tests/support/s3rver.sh stop DIR    -> stops it (SIGTERM, then SIGKILL) and waits until it is gone
set -euo pipefail

cmd=${1:?usage: s3rver.sh start|stop DIR}
dir=${2:?usage: s3rver.sh start|stop DIR}
s3rver=${S3RVER_BIN:-/opt/fencegate-test/npm/node_modules/.bin/s3rver}

if [ "$cmd" = stop ]; then
  [ -s "$dir/s3rver.pid" ] || exit 0
  pid=$(cat "$dir/s3rver.pid")
  kill "$pid" 2>/dev/null || exit 0
  # Returns when the process is gone (tail follows nothing and ends with it), at most 10 s.
  timeout 10 tail --pid="$pid" -f /dev/null && exit 0
  kill -9 "$pid" 2>/dev/null || true
  exit 0
fi
[ "$cmd" = start ] || { echo "unknown command $cmd" >&2; exit 2; }
[ -x "$s3rver" ] || { echo "s3rver is not installed at $s3rver (scripts/install-deps.sh)" >&2; exit 1; }

mkdir -p "$dir/data"
# Port 0: the kernel picks one; s3rver prints it once listening.
"$s3rver" -d "$dir/data" -a 127.0.0.1 -p 0 --no-vhost-buckets >"$dir/s3rver.log" 2>&1 &
echo $! >"$dir/s3rver.pid"
# s3rver prints "S3rver listening on 127.0.0.1:PORT" once it listens: read until that line (or
# the process ends), at most 30 s (node starts in ~0.6 s here, slower on a busy machine).
line=$(timeout 30 tail --pid="$(cat "$dir/s3rver.pid")" -n +1 -f "$dir/s3rver.log" |
  grep -m1 '^S3rver listening on 127\.0\.0\.1:' || true)
port=$(sed -n 's/^S3rver listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' <<<"$line")
if [ -z "${port:-}" ]; then
  echo "s3rver did not start:" >&2
  cat "$dir/s3rver.log" >&2
  exit 1
fi
echo "s3rver ready port=$port access=S3RVER secret=S3RVER"
