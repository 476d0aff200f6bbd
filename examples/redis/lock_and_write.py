#!/usr/bin/python3
"""Takes a Redis lock (SET NX PX) and, in the same Lua script, the fencing token (INCR of a
counter next to the lock) with redis-py (Debian: python3-redis), then writes through fencegate:
one PUT of RESOURCE_PATH per line of standard input.

    printf 'v1\\nv2\\n' | examples/redis/lock_and_write.py LOCK_NAME RESOURCE_PATH

Keys: lock:LOCK_NAME holds the owner's random id, fence:LOCK_NAME the last token issued. Taking
both in one script means no holder ever runs with a token lower than its predecessor's. The
lock and the fenced writes are the client library's (clients/python: fencegate.sources.redis).
Exit codes: 0 written, 3 refused by fencegate (the lock was lost), 4 lock not acquired in time,
1 other failure, 2 usage.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import example  # noqa: E402
from fencegate.sources.redis import RedisLocks  # noqa: E402


def main():
    args = example.arguments(__doc__, "--redis", "REDIS_URL", "redis://127.0.0.1:6379")
    return example.lock_and_write(args, RedisLocks(args.redis),
                                  lambda lease: f" owner={lease.owner}")


if __name__ == "__main__":
    sys.exit(main())
