#!/usr/bin/python3
"""Takes an etcd lock through etcd's JSON gateway (/v3/, plain urllib, nothing to install), uses
the lock key's create_revision as the fencing token, and writes through fencegate: one PUT of
RESOURCE_PATH per line of standard input.

    printf 'v1\\nv2\\n' | examples/etcd/lock_and_write.py LOCK_NAME RESOURCE_PATH

The token is the create_revision of the lock key, not the lease ID: revisions are etcd's global
write counter, so the next holder's key always has a higher one; lease IDs are merely unique.
The lock, its lease keeper and the fenced writes are the client library's (clients/python:
fencegate.sources.etcd). Exit codes: 0 written, 3 refused by fencegate (the lock was lost),
4 lock not acquired in time, 1 other failure, 2 usage.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import example  # noqa: E402
from fencegate.sources.etcd import EtcdLocks  # noqa: E402


def main():
    args = example.arguments(__doc__, "--etcd", "ETCD_ENDPOINT", "http://127.0.0.1:2379")
    return example.lock_and_write(args, EtcdLocks(args.etcd),
                                  lambda lease: f" key={lease.key}")


if __name__ == "__main__":
    sys.exit(main())
