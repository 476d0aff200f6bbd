#!/usr/bin/env python3
"""Forwarding rows (issue 29): what a fenced write forwarded between replicas costs over the
same write sent straight to its shard's owner.

Two fencegate replicas with `cluster:` on a one-member etcd (Debian etcd-server), the nginx
backend. For each workload (the fenced 1 KiB PUT at the current token, with the short and with
the realistic header block) the key's shard owner is looked up in /admin/cluster; "direct"
sends the PUT to the owner, "forwarded" sends it to the other replica, which relays it to the
owner. Reported:
  * instructions per request (callgrind, both replicas under valgrind, a fixed number of
    requests over one keep-alive connection after a warm-up) in each replica and summed over
    both, and the ratio forwarded / direct of the sums (the issue's target: 1.3 or less);
  * with --latency-requests, on a second pair of replicas run natively, the p50 latency of the
    same PUT over one connection from outside (the issue's target: a ratio of 1.2 or less) and
    the CPU time (from /proc/PID/task/*/schedstat) per request summed over both replicas,
    direct and forwarded interleaved in blocks; also for put_advance, where every request
    advances one key's fence (an etcd write at the owner).
At the current token the owner admits from its cache: no etcd write is counted.
fencegate runs on --proxy-cpu; etcd, the backend and the client on --load-cpu."""

import argparse
import dataclasses
import itertools
import json
import os
import shutil
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

from harness import callgrind, fixed_client, procs, servers
from harness.workloads import all_workloads
from replicas import start_etcd, wait_settled

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
WORKLOADS = ("put_current", "put_headers")
_CURRENT = next(w for w in all_workloads(1) if w.name == "put_current")
# Latency pass only: every request advances the fence of one key (an etcd write at the owner).
ADVANCE = dataclasses.replace(
    _CURRENT, name="put_advance", fixed_request=_CURRENT.fixed_request.replace(
        "/put/current", "/fwd/advance").replace("Fencing-Token: 1", "Fencing-Token: {token}"))
SHARDS = 16
# Under valgrind a replica runs tens of times slower: a longer lease keeps it from
# self-fencing while it is measured.
LEASE_TTL = {"callgrind": "10s", "native": "2s"}


def fnv1a(text):
    """lockstore/etcd/shard_ownership.cc's hash of a fence key."""
    value = 1469598103934665603
    for byte in text.encode():
        value = ((value ^ byte) * 1099511628211) % (1 << 64)
    return value


def start_pair(tag, workdir, cpu, backend_port, endpoints, binary, wrapper=()):
    """Two replicas g1, g2 on their own etcd prefix; returns [(name, traffic, admin, process)]."""
    ports = [procs.free_port() for _ in range(2)]
    config = ("store:\n  kind: etcd\n  prefix: /bench-forwarding-" + tag + "/\n  endpoints:\n"
              + "".join(f"    - {e}\n" for e in endpoints) + "locks:\n  enabled: false\n"
              + f"cluster:\n  name: {{name}}\n  shards: {SHARDS}\n"
              + f"  lease_ttl: {LEASE_TTL[tag]}\n  peers:\n"
              + "".join(f"    g{i}: 127.0.0.1:{p}\n" for i, p in enumerate(ports, 1)))
    replicas = []
    for i, port in enumerate(ports, 1):
        name = f"g{i}"
        traffic, admin, process = servers.start_fencegate(
            f"{tag}-{name}", workdir, cpu, backend_port, binary, config.format(name=name), port,
            response_timeout="5s", wrapper=wrapper)
        replicas.append((name, traffic, admin, process))
    return replicas


def owner_of(key, replicas):
    """(owner, other): the replica that owns the key's shard, as the owner reports it."""
    shard = fnv1a(key) % SHARDS
    name, _, admin, _ = replicas[0]
    with urllib.request.urlopen(f"http://127.0.0.1:{admin}/admin/cluster", timeout=30) as r:
        view = json.loads(r.read())
    owner = name if view["shards"][shard]["state"] == "owned" else view["shards"][shard]["owner"]
    first, second = replicas
    return (first, second) if first[0] == owner else (second, first)


def workload_key(workload):
    """The fence key of a workload's fixed request (route fence_key "{path}")."""
    return workload.fixed_request.split(" ", 2)[1]


def forwards(replica):
    """fencegate_cluster_forwards_total{result="relayed"} of one replica."""
    with urllib.request.urlopen(f"http://127.0.0.1:{replica[2]}/metrics", timeout=30) as r:
        for line in r.read().decode().splitlines():
            if line.startswith('fencegate_cluster_forwards_total{result="relayed"}'):
                return float(line.split()[-1])
    return 0.0


def counted(replicas, prefix, run):
    """Instructions of each replica while run() sends its requests: zero both, run, dump both."""
    before = {r[0]: set(prefix.parent.glob(f"{prefix.name}.{r[3].pid}.*")) for r in replicas}
    for replica in replicas:
        callgrind._control("-z", replica[3].pid)
    run()
    counts = {}
    for replica in replicas:
        callgrind._control("-d", replica[3].pid)
        counts[replica[0]] = callgrind._instructions_in_new_dump(prefix, replica[3].pid,
                                                                 before[replica[0]])
    return counts


def send(port, workload, count):
    client = fixed_client.Client(port, 1)
    try:
        statuses = client.send(fixed_client.request_bytes(workload, port), count)
    finally:
        client.close()
    if any(status >= 300 for status in statuses):
        raise RuntimeError(f"{workload.name} to port {port}: statuses {statuses}")


def measure_instructions(replicas, prefix, workloads, requests, warmup):
    """{workload: {"direct"|"forwarded": {replica name: Ir per request}}}"""
    results = {}
    for workload in workloads:
        owner, other = owner_of(workload_key(workload), replicas)
        for port in (owner[1], other[1]):
            send(port, workload, warmup)
        relayed = forwards(other)
        results[workload.name] = {}
        for label, port in (("direct", owner[1]), ("forwarded", other[1])):
            counts = counted(replicas, prefix, lambda: send(port, workload, requests))
            results[workload.name][label] = {
                ("owner" if name == owner[0] else "forwarder"): ir / requests
                for name, ir in counts.items()}
        if forwards(other) - relayed != requests:
            raise RuntimeError(f"{workload.name}: the non-owner did not forward every request")
    return results


def cpu_seconds(process):
    """CPU time of every thread of a process so far, from schedstat (nanoseconds: /proc/PID/stat
    counts clock ticks, too coarse for blocks of a few hundred requests)."""
    total = 0
    for task in Path(f"/proc/{process.pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError):
            pass  # a thread that ended meanwhile
    return total / 1e9


class Requests:
    """The request bytes of a workload for one replica: always the same, or for put_advance the
    next token of its key (shared by both paths, so every request advances the fence)."""

    tokens = itertools.count(1)

    def __init__(self, workload, port):
        self._bytes = fixed_client.request_bytes(workload, port)[0]
        self._advancing = b"{token}" in self._bytes

    def __call__(self):
        if not self._advancing:
            return self._bytes
        return self._bytes.replace(b"{token}", str(next(Requests.tokens)).encode())


def timed(connection, requests, count):
    samples = []
    for _ in range(count):
        request = requests()
        start = time.perf_counter()
        status = connection.exchange(request)
        samples.append(time.perf_counter() - start)
        if status >= 300:
            raise RuntimeError(f"latency pass: status {status}")
    return samples


def measure_latency(replicas, workloads, blocks):
    """{workload: {"direct"|"forwarded": (p50 ms, CPU ms per request summed over both replicas)}}:
    blocks of requests over one connection each, alternating."""
    results = {}
    processes = [r[3] for r in replicas]
    for workload, requests in workloads:
        owner, other = owner_of(workload_key(workload), replicas)
        samples = {"direct": [], "forwarded": []}
        cpu = {"direct": 0.0, "forwarded": 0.0}
        connections = {"direct": fixed_client.Connection(owner[1]),
                       "forwarded": fixed_client.Connection(other[1])}
        requests_bytes = {label: Requests(workload, r[1])
                          for label, r in (("direct", owner), ("forwarded", other))}
        try:
            for label in samples:  # warm-up: keys, caches, the peer connection
                timed(connections[label], requests_bytes[label], 200)
            for block in range(blocks):
                order = ("direct", "forwarded") if block % 2 == 0 else ("forwarded", "direct")
                for label in order:
                    before = sum(cpu_seconds(p) for p in processes)
                    samples[label] += timed(connections[label], requests_bytes[label],
                                            requests // blocks)
                    cpu[label] += sum(cpu_seconds(p) for p in processes) - before
        finally:
            for connection in connections.values():
                connection.close()
        results[workload.name] = {
            label: (statistics.median(s) * 1000, cpu[label] * 1000 / len(s))
            for label, s in samples.items()}
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--callgrind-requests", type=int, default=2000,
                        help="requests counted per workload and path (0 skips callgrind)")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--latency-requests", type=int, default=20000,
                        help="timed requests per workload and path (0 skips the latency pass)")
    parser.add_argument("--latency-blocks", type=int, default=20)
    parser.add_argument("--advance-requests", type=int, default=2000,
                        help="timed requests of put_advance per path, each an etcd write "
                        "(0 skips it)")
    parser.add_argument("--proxy-cpu", type=int, default=0)
    parser.add_argument("--load-cpu", type=int, default=1)
    parser.add_argument("--fencegate", default=str(REPO_DIR / "build/gateway/fencegate"))
    parser.add_argument("--keep-workdir", action="store_true",
                        help="keep the temporary directory (callgrind dumps, logs) and print it")
    args = parser.parse_args()

    workloads = [w for w in all_workloads(1) if w.name in WORKLOADS]
    workdir = Path(tempfile.mkdtemp(prefix="fencegate-bench-forwarding-"))
    try:
        backend, _ = servers.start_backend(workdir, args.load_cpu, workdir)
        endpoints = start_etcd(workdir, args.load_cpu, members=1)
        pairs = {}
        if args.callgrind_requests:
            # One output file name for both: the PID tells the replicas' dumps apart. Only the
            # network threads are counted: the cluster's lease and ownership thread works on
            # its own clock, and a slower run (forwarded) would otherwise be charged more of it.
            wrapper = ["valgrind", "--tool=callgrind", "--dump-instr=no",
                       "--toggle-collect=*NetworkThread::Start*",
                       f"--callgrind-out-file={workdir}/callgrind.%p"]
            pairs["callgrind"] = start_pair("callgrind", workdir, args.proxy_cpu, backend.port,
                                            endpoints, args.fencegate, wrapper)
        if args.latency_requests:
            pairs["native"] = start_pair("native", workdir, args.proxy_cpu, backend.port,
                                         endpoints, args.fencegate)
        for replicas in pairs.values():
            wait_settled([r[2] for r in replicas], timeout=300)

        if args.callgrind_requests:
            instructions = measure_instructions(pairs["callgrind"], workdir / "callgrind",
                                                workloads, args.callgrind_requests, args.warmup)
            for replica in pairs.pop("callgrind"):
                replica[3].stop()
            print("\n| workload | path | owner Ir/req | forwarder Ir/req | sum Ir/req |")
            print("|---|---|---:|---:|---:|")
            for name, paths in instructions.items():
                for label, per in paths.items():
                    print(f"| {name} | {label} | {per['owner']:,.0f} | {per['forwarder']:,.0f} "
                          f"| {sum(per.values()):,.0f} |")
            for name, paths in instructions.items():
                ratio = sum(paths["forwarded"].values()) / sum(paths["direct"].values())
                print(f"{name}: forwarded / direct instructions {ratio:.2f} (target 1.3 or less)")
        if args.latency_requests:
            timed_workloads = [(w, args.latency_requests) for w in workloads]
            if args.advance_requests:
                timed_workloads.append((ADVANCE, args.advance_requests))
            latency = measure_latency(pairs["native"], timed_workloads, args.latency_blocks)
            print("\n| workload | direct p50 ms | forwarded p50 ms | ratio "
                  "| direct CPU ms/req | forwarded CPU ms/req | ratio |")
            print("|---|---:|---:|---:|---:|---:|---:|")
            for name, paths in latency.items():
                (d_p50, d_cpu), (f_p50, f_cpu) = paths["direct"], paths["forwarded"]
                print(f"| {name} | {d_p50:.3f} | {f_p50:.3f} | {f_p50 / d_p50:.2f} "
                      f"| {d_cpu:.4f} | {f_cpu:.4f} | {f_cpu / d_cpu:.2f} |")
    finally:
        procs.stop_all()
        if args.keep_workdir:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    os.sched_setaffinity(0, {1})
    main()
