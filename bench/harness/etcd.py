"""A 3-member etcd cluster on loopback (Debian etcd-server) for the replica rows, and which
member leads it."""

import json
import time
import urllib.request

from . import procs


def start(workdir, cpu, members=3):
    """Starts the members on `cpu`; returns their client endpoints (host:port)."""
    names = [f"m{i}" for i in range(members)]
    ports = {name: (procs.free_port(), procs.free_port()) for name in names}
    initial = ",".join(f"{n}=http://127.0.0.1:{ports[n][1]}" for n in names)
    for name in names:
        client, peer = (f"http://127.0.0.1:{p}" for p in ports[name])
        procs.Process(f"etcd-{name}", [
            "etcd", "--name", name, "--data-dir", workdir / "etcd" / name,
            "--listen-client-urls", client, "--advertise-client-urls", client,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", initial, "--initial-cluster-state", "new",
            "--log-level", "warn"], cpu, workdir / f"etcd-{name}.log")
    deadline = time.monotonic() + 60
    for name in names:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ports[name][0]}/health", timeout=2) as r:
                    if b'"true"' in r.read():
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"etcd {name} not healthy within 60 s")
            time.sleep(0.1)
    return [f"127.0.0.1:{ports[n][0]}" for n in names]


def leader(endpoints):
    """The endpoint of the member that leads now (each member's /v3/maintenance/status names
    the leader's member id and its own)."""
    for endpoint in endpoints:
        request = urllib.request.Request(f"http://{endpoint}/v3/maintenance/status", data=b"{}",
                                         method="POST")
        with urllib.request.urlopen(request, timeout=5) as r:
            status = json.loads(r.read())
        if status.get("leader") and status["leader"] == status["header"]["member_id"]:
            return endpoint
    raise RuntimeError("no etcd member reports itself the leader")
