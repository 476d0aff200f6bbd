"""Replicas with `cluster:` seen from outside: when their shard ownership has settled, which
replica owns a fence key's shard, and counters summed over their /metrics."""

import json
import re
import time
import urllib.request


def admin_view(admin_port):
    """GET /admin/cluster of one replica."""
    with urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/admin/cluster", timeout=5) as r:
        return json.loads(r.read())


def wait_settled(admin_ports, timeout=120):
    """Until every replica sees every shard owned, out of quarantine."""
    deadline = time.monotonic() + timeout
    while True:
        views = []
        for port in admin_ports:
            try:
                views.append(admin_view(port))
            except (OSError, ValueError):
                views.append({})
        if all(v.get("shards") and all(s["state"] in ("owned", "peer") for s in v["shards"])
               for v in views):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"replicas did not settle within {timeout} s")
        time.sleep(0.2)


def shard_of(fence_key, shards):
    """lockstore/etcd/shard_ownership.cc ShardOfKey: 64-bit FNV-1a of the key, mod shards."""
    value = 1469598103934665603
    for byte in fence_key.encode():
        value = ((value ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return value % shards


def owner_of(admin_port, fence_key):
    """The name of the replica that owns fence_key's shard, as replica `admin_port` sees it."""
    shards = admin_view(admin_port)["shards"]
    return shards[shard_of(fence_key, len(shards))]["owner"]


def read_counters(admin_ports, series):
    """{series: value summed over the fencegates' /metrics} for each series (a metric name, with
    its labels as exposed when it has any: 'name{result="relayed"}'); 0 for one not exposed."""
    totals = {name: 0.0 for name in series}
    for port in admin_ports:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            text = r.read().decode()
        for name in series:
            pattern = re.escape(name) + ("" if "{" in name else r"(?:\{\})?")
            match = re.search(rf"^{pattern} ([0-9.e+]+)$", text, re.MULTILINE)
            totals[name] += float(match.group(1)) if match else 0.0
    return totals
