#!/usr/bin/python3
"""Takes a ZooKeeper lock with kazoo's Lock recipe (Debian: python3-kazoo), uses the lock node's
czxid as the fencing token, and writes through fencegate: one PUT of RESOURCE_PATH per line of
standard input.

    printf 'v1\\nv2\\n' | examples/zookeeper/lock_and_write.py LOCK_NAME RESOURCE_PATH

The lock node is ephemeral and sequential under /locks/LOCK_NAME; it dies with the session.
Its czxid (the transaction that created it) is ZooKeeper's global, ever-increasing zxid, so the
next holder's node always has a higher one. The sequence suffix grows too, but only while the
parent node is never deleted and recreated.
Exit codes: 0 written, 3 refused by fencegate (the lock was lost), 4 lock not acquired in time,
1 other failure, 2 usage.
"""

import argparse
import os
import sys

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import LockTimeout

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import fencegate  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lock_name")
    parser.add_argument("resource_path")
    parser.add_argument("--fencegate", default=fencegate.DEFAULT_URL)
    parser.add_argument("--zookeeper", default=os.environ.get("ZK_SERVER", "127.0.0.1:2181"))
    parser.add_argument("--lease-seconds", type=float,
                        default=float(os.environ.get("LEASE_SECONDS", 10)),
                        help="session timeout: the node dies this long after the client stalls")
    parser.add_argument("--wait-seconds", type=float, default=float(os.environ.get("WAIT_SECONDS", 30)))
    args = parser.parse_args()

    def acquire_and_write():
        zk = KazooClient(hosts=args.zookeeper, timeout=args.lease_seconds)
        zk.add_listener(lambda state: fencegate.report("session lost: the lock is lost")
                        if state == KazooState.LOST else None)
        zk.start(timeout=args.wait_seconds)
        lock = zk.Lock(f"/locks/{args.lock_name}")
        try:
            try:
                lock.acquire(timeout=args.wait_seconds)
            except LockTimeout as error:
                raise TimeoutError(f"{args.lock_name} within {args.wait_seconds}s") from error
            node = f"{lock.path}/{lock.node}"
            token = zk.exists(node).czxid
            sequence = int(lock.node.rsplit("__lock__", 1)[1])
            fencegate.report(
                f"acquired lock={args.lock_name} token={token} node={node} sequence={sequence}")
            fencegate.write_lines(args.fencegate, args.resource_path, token)
        finally:
            # Deletes our own node only (its name carries our uuid), never a successor's.
            lock.release()
            zk.stop()
            zk.close()

    return fencegate.run_worker(acquire_and_write)


if __name__ == "__main__":
    sys.exit(main())
