#!/usr/bin/python3
"""Takes an etcd lock through etcd's JSON gateway (/v3/, plain urllib, nothing to install), uses
the lock key's create_revision as the fencing token, and writes through fencegate: one PUT of
RESOURCE_PATH per line of standard input.

    printf 'v1\\nv2\\n' | examples/etcd/lock_and_write.py LOCK_NAME RESOURCE_PATH

The token is the create_revision of the lock key, not the lease ID: revisions are etcd's global
write counter, so the next holder's key always has a higher one; lease IDs are merely unique.
Exit codes: 0 written, 3 refused by fencegate (the lock was lost), 4 lock not acquired in time,
1 other failure, 2 usage.
"""

import argparse
import base64
import json
import os
import sys
import threading
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import fencegate  # noqa: E402


def b64(text):
    return base64.b64encode(text.encode()).decode()


class Etcd:
    """The few etcd v3 JSON-gateway calls a lock holder needs. int64s travel as JSON strings."""

    def __init__(self, endpoint):
        self.endpoint = endpoint.rstrip("/")

    def call(self, method, body, timeout=10):
        request = urllib.request.Request(f"{self.endpoint}/v3/{method}",
                                         data=json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.load(response)

    def grant(self, ttl):
        return self.call("lease/grant", {"TTL": ttl})["ID"]

    def keepalive(self, lease):
        """Returns the remaining TTL; 0 (field omitted) once the lease is gone."""
        return int(self.call("lease/keepalive", {"ID": lease})["result"].get("TTL", "0"))

    def lock(self, name, lease, wait_seconds):
        """Blocks until the lock is ours; returns the lock key (name/<lease in hex>)."""
        reply = self.call("lock/lock", {"name": b64(name), "lease": lease}, timeout=wait_seconds)
        return base64.b64decode(reply["key"]).decode()

    def create_revision(self, key):
        kvs = self.call("kv/range", {"key": b64(key)}).get("kvs", [])
        if not kvs:
            raise RuntimeError(f"lock key {key} vanished before its revision was read")
        return int(kvs[0]["create_revision"])

    def revoke(self, lease):
        self.call("lease/revoke", {"ID": lease})


def keep_alive(etcd, lease, ttl, stop):
    """Renews the lease every third of its TTL until stopped or the lease is gone."""
    while not stop.wait(ttl / 3):
        try:
            if etcd.keepalive(lease) == 0:
                fencegate.report(f"lease {lease} expired: the lock is lost")
                return
        except OSError as error:
            fencegate.report(f"lease renewal failed: {error}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lock_name")
    parser.add_argument("resource_path")
    parser.add_argument("--fencegate", default=fencegate.DEFAULT_URL)
    parser.add_argument("--etcd", default=os.environ.get("ETCD_ENDPOINT", "http://127.0.0.1:2379"))
    parser.add_argument("--lease-seconds", type=int, default=int(os.environ.get("LEASE_SECONDS", 10)))
    parser.add_argument("--wait-seconds", type=float, default=float(os.environ.get("WAIT_SECONDS", 30)))
    args = parser.parse_args()
    endpoint = args.etcd if "://" in args.etcd else "http://" + args.etcd
    etcd = Etcd(endpoint)

    def acquire_and_write():
        lease = etcd.grant(args.lease_seconds)
        stop = threading.Event()
        renewer = threading.Thread(target=keep_alive, args=(etcd, lease, args.lease_seconds, stop),
                                   daemon=True)
        renewer.start()
        try:
            try:
                key = etcd.lock(args.lock_name, lease, args.wait_seconds)
            except TimeoutError as error:
                raise TimeoutError(f"{args.lock_name} within {args.wait_seconds}s") from error
            token = etcd.create_revision(key)
            fencegate.report(f"acquired lock={args.lock_name} token={token} key={key}")
            fencegate.write_lines(args.fencegate, args.resource_path, token)
        finally:
            stop.set()
            # Revoking our lease deletes our lock key and nothing else: a successor's key hangs
            # on its own lease. Once the lease expired, etcd answers 404 and there is nothing
            # left to release.
            try:
                etcd.revoke(lease)
            except urllib.error.HTTPError:
                pass

    return fencegate.run_worker(acquire_and_write)


if __name__ == "__main__":
    sys.exit(main())
