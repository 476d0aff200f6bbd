#!/usr/bin/python3
"""Takes a Redis lock (SET NX PX) and, in the same Lua script, the fencing token (INCR of a
counter next to the lock) with redis-py (Debian: python3-redis), then writes through fencegate:
one PUT of RESOURCE_PATH per line of standard input.

    printf 'v1\\nv2\\n' | examples/redis/lock_and_write.py LOCK_NAME RESOURCE_PATH

Keys: lock:LOCK_NAME holds the owner's random id, fence:LOCK_NAME the last token issued. Taking
both in one script means no holder ever runs with a token lower than its predecessor's.
Exit codes: 0 written, 3 refused by fencegate (the lock was lost), 4 lock not acquired in time,
1 other failure, 2 usage.
"""

import argparse
import os
import sys
import threading
import time
import uuid

import redis

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import fencegate  # noqa: E402

ACQUIRE = """if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  return redis.call("INCR", KEYS[2]) end return false"""
# Renew and release touch the lock only while it still holds our owner id.
RENEW = """if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0"""
RELEASE = """if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1]) end return 0"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lock_name")
    parser.add_argument("resource_path")
    parser.add_argument("--fencegate", default=fencegate.DEFAULT_URL)
    parser.add_argument("--redis", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379"))
    parser.add_argument("--lease-seconds", type=float,
                        default=float(os.environ.get("LEASE_SECONDS", 10)))
    parser.add_argument("--wait-seconds", type=float, default=float(os.environ.get("WAIT_SECONDS", 30)))
    args = parser.parse_args()

    client = redis.Redis.from_url(args.redis)
    acquire, renew, release = (client.register_script(s) for s in (ACQUIRE, RENEW, RELEASE))
    keys = [f"lock:{args.lock_name}", f"fence:{args.lock_name}"]
    owner = uuid.uuid4().hex
    lease_ms = int(args.lease_seconds * 1000)

    def keep_alive(stop):
        while not stop.wait(args.lease_seconds / 3):
            if renew(keys=keys, args=[owner, lease_ms]) != 1:
                fencegate.report(f"lease of {keys[0]} expired: the lock is lost")
                return

    def acquire_and_write():
        deadline = time.monotonic() + args.wait_seconds
        while (token := acquire(keys=keys, args=[owner, lease_ms])) is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{args.lock_name} within {args.wait_seconds}s")
            time.sleep(0.1)
        stop = threading.Event()
        threading.Thread(target=keep_alive, args=(stop,), daemon=True).start()
        try:
            fencegate.report(f"acquired lock={args.lock_name} token={token} owner={owner}")
            fencegate.write_lines(args.fencegate, args.resource_path, token)
        finally:
            stop.set()
            release(keys=keys, args=[owner])

    return fencegate.run_worker(acquire_and_write)


if __name__ == "__main__":
    sys.exit(main())
