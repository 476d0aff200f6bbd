"""What forwarding costs a fenced write (issue 29's forwarding target): the same PUT at the
current token on one connection, sent straight to the replica that owns its key's shard, then to
a replica that forwards it there. Per run: wrk's latency, and the CPU time of all three replica
processes per request, so the forwarding replica's work counts too. At the current token the
owner admits from its cache: no store write, so what differs is forwarding.

CPU is read from /proc/<pid>/task/*/schedstat (time on CPU in ns, every thread) rather than
/proc/<pid>/stat's utime + stime, whose 10 ms ticks are a few percent of a run's total here; the
replicas' background (ownership polling, lease keep-alives: about 13 ms/s for the three on this
machine), measured idle before each pair, is taken off."""

import time
from pathlib import Path

from . import cluster, wrk
from .replica_workloads import PUT_CURRENT_1

FENCE_KEY = PUT_CURRENT_1.path  # the bench route's fence_key is "{path}"
RELAYED = 'fencegate_cluster_forwards_total{result="relayed"}'
IDLE_S = 2.0


def routes(replicas):
    """{"direct": owner's traffic port, "forwarded": a non-owner's}; replicas maps a replica's
    cluster name to (traffic port, admin port, process)."""
    owner = cluster.owner_of(next(iter(replicas.values()))[1], FENCE_KEY)
    other = next(name for name in replicas if name != owner)
    return {"direct": replicas[owner][0], "forwarded": replicas[other][0]}


def _on_cpu_s(replicas):
    """Seconds on CPU so far, summed over every thread of every replica."""
    total_ns = 0
    for _, _, process in replicas.values():
        for task in Path(f"/proc/{process.pid}/task").iterdir():
            try:
                total_ns += int((task / "schedstat").read_text().split()[0])
            except (FileNotFoundError, ProcessLookupError):
                pass  # a thread that ended between the listing and the read
    return total_ns / 1e9


def idle_cpu_rate(replicas):
    """The replicas' CPU seconds per second with no requests, over IDLE_S."""
    before, started = _on_cpu_s(replicas), time.monotonic()
    time.sleep(IDLE_S)
    return (_on_cpu_s(replicas) - before) / (time.monotonic() - started)


def run(port, replicas, idle_rate, duration_s, cpu):
    """One wrk run against `port`; wrk's figures plus the replicas' CPU µs per request (less
    idle_rate over the run) and the forwards per request (about 0 direct, 1 forwarded)."""
    admin_ports = [admin for _, admin, _ in replicas.values()]
    relayed_before = cluster.read_counters(admin_ports, [RELAYED])[RELAYED]
    cpu_before, started = _on_cpu_s(replicas), time.monotonic()
    figures = wrk.run(f"http://127.0.0.1:{port}", PUT_CURRENT_1, duration_s, cpu)
    busy = _on_cpu_s(replicas) - cpu_before - idle_rate * (time.monotonic() - started)
    relayed_after = cluster.read_counters(admin_ports, [RELAYED])[RELAYED]
    requests = figures["requests"] or 1
    figures["cpu_us_per_req"] = busy * 1e6 / requests
    figures["idle_cpu_ms_per_s"] = idle_rate * 1e3
    figures["forwards_per_req"] = (relayed_after - relayed_before) / requests
    return figures
