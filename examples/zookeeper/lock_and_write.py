#!/usr/bin/python3
"""Takes a ZooKeeper lock with kazoo's Lock recipe (Debian: python3-kazoo), uses the lock node's
czxid as the fencing token, and writes through fencegate: one PUT of RESOURCE_PATH per line of
standard input.

    printf 'v1\\nv2\\n' | examples/zookeeper/lock_and_write.py LOCK_NAME RESOURCE_PATH

The lock node is ephemeral and sequential under /locks/LOCK_NAME; it dies with the session.
Its czxid (the transaction that created it) is ZooKeeper's global, ever-increasing zxid, so the
next holder's node always has a higher one. The sequence suffix grows too, but only while the
parent node is never deleted and recreated. The lock and the fenced writes are the client
library's (clients/python: fencegate.sources.zookeeper).
Exit codes: 0 written, 3 refused by fencegate (the lock was lost), 4 lock not acquired in time,
1 other failure, 2 usage.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import example  # noqa: E402
from fencegate.sources.zookeeper import ZooKeeperLocks  # noqa: E402


def main():
    args = example.arguments(__doc__, "--zookeeper", "ZK_SERVER", "127.0.0.1:2181",
                             "the lease is the session timeout: the node dies this long after "
                             "the client stalls")
    return example.lock_and_write(
        args, ZooKeeperLocks(args.zookeeper),
        lambda lease: f" node={lease.node} sequence={lease.sequence}")


if __name__ == "__main__":
    sys.exit(main())
