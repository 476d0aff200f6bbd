#!/usr/bin/env python3
"""Replica rows (issue 7): what keeping the fences in etcd costs a fenced PUT.

Setups, same machine, same nginx backend, interleaved repetitions with wrk:
  rocksdb-1   one fencegate, fences in its embedded RocksDB (bench/conf/fencegate.yaml);
  etcd-1      one fencegate, fences in a 3-member etcd cluster on loopback;
  etcd-3      three fencegate replicas with shard ownership (`cluster:`) on that etcd cluster
              behind HAProxy (round robin per request, bench/conf/haproxy-replicas.cfg): two
              writes in three reach a replica that forwards them to their shard's owner.
Workloads: put_current (the fence is already at the token: no store write), put_advance_1 and
put_advance_64 (every request advances its key's fence: one durable store write each). Prints
req/s and p99 medians and the ratios etcd-1/rocksdb-1 and etcd-3/rocksdb-1, and for the
advancing workloads the advances per store write: per synced write on RocksDB, per etcd
transaction on etcd (the group-commit factor, from the replicas' /metrics around each run).
fencegate and HAProxy run on --proxy-cpu; etcd, the backend and wrk on --load-cpu (2 cores
here)."""

import argparse
import json
import os
import re
import shutil
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

from harness import procs, servers, wrk
from harness.workloads import all_workloads

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
WORKLOADS = ("put_current", "put_advance_1", "put_advance_64")


def start_etcd(workdir, cpu, members=3):
    """A 3-member etcd cluster (Debian etcd-server); returns its client endpoints."""
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


def start_fencegate(name, workdir, cpu, backend_port, binary, store_block="", port=0):
    """Returns (traffic port, admin port). The backend's response_timeout is 5 s in every
    setup (default 60 s): it bounds a new shard owner's quarantine, hence the start-up."""
    traffic, admin, _ = servers.start_fencegate(name, workdir, cpu, backend_port, binary,
                                                store_block, port, response_timeout="5s")
    return traffic, admin


def wait_settled(admin_ports, timeout=120):
    """Shard ownership: until every replica sees every shard owned, out of quarantine."""
    deadline = time.monotonic() + timeout
    while True:
        views = []
        for port in admin_ports:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/admin/cluster",
                                            timeout=5) as r:
                    views.append(json.loads(r.read()))
            except (OSError, ValueError):
                views.append({})
        if all(v.get("shards") and all(s["state"] in ("owned", "peer") for s in v["shards"])
               for v in views):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"replicas did not settle within {timeout} s")
        time.sleep(0.2)


# Advances handed to the store, and the writes that carried them (one store kind each).
ADVANCES = "fencegate_store_advances_total"
WRITES = ("fencegate_store_sync_writes_total", "fencegate_store_etcd_txns_total")


def read_store_counters(admin_ports):
    """(advances, store writes) summed over the fencegates' /metrics."""
    totals = {name: 0.0 for name in (ADVANCES, *WRITES)}
    for port in admin_ports:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            text = r.read().decode()
        for name in totals:
            match = re.search(rf"^{name}(?:\{{\}})? ([0-9.e+]+)$", text, re.MULTILINE)
            totals[name] += float(match.group(1)) if match else 0.0
    return totals[ADVANCES], sum(totals[name] for name in WRITES)


def run_interleaved(setups, admin_ports, workloads, reps, duration, cpu):
    """wrk.interleaved, with each run's advances per store write read around it."""
    samples = {(w.name, name): [] for w in workloads for name in setups}
    for rep in range(1, reps + 1):
        for workload in workloads:
            for name, port in setups.items():
                before = read_store_counters(admin_ports[name])
                figures = wrk.run(f"http://127.0.0.1:{port}", workload, duration, cpu,
                                  script_args=[f"{workload.name}-{name}-r{rep}"])
                after = read_store_counters(admin_ports[name])
                writes = after[1] - before[1]
                figures["advances_per_write"] = (after[0] - before[0]) / writes if writes else None
                samples[(workload.name, name)].append(figures)
                bad = figures["non_2xx"] + figures["socket_errors"]
                per_write = figures["advances_per_write"]
                print(f"rep {rep}/{reps} {workload.name:15} {name:16} "
                      f"{figures['req_per_s']:10.0f} req/s  p99 {figures['p99_ms']:.3f} ms"
                      + (f"  {per_write:.1f} adv/write" if per_write else "")
                      + (f"  errors {bad}" if bad else ""), flush=True)
    return samples


def start_haproxy(workdir, cpu, ports):
    directory = workdir / "haproxy"
    directory.mkdir()
    port = procs.free_port()
    conf = servers._render("haproxy-replicas.cfg", directory / "haproxy.cfg", PORT=port,
                           PORT_1=ports[0], PORT_2=ports[1], PORT_3=ports[2])
    process = procs.Process("haproxy", ["haproxy", "-db", "-f", conf], cpu,
                            directory / "out.log")
    procs.wait_for_port(port, process, 15)
    return port


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16,
                        help="connections of the current-token PUT (16)")
    parser.add_argument("--proxy-cpu", type=int, default=0)
    parser.add_argument("--load-cpu", type=int, default=1)
    parser.add_argument("--fencegate", default=str(REPO_DIR / "build/gateway/fencegate"))
    args = parser.parse_args()

    workloads = [w for w in all_workloads(args.connections) if w.name in WORKLOADS]
    workdir = Path(tempfile.mkdtemp(prefix="fencegate-bench-replicas-"))
    try:
        backend, _ = servers.start_backend(workdir, args.load_cpu, workdir)
        endpoints = start_etcd(workdir, args.load_cpu)
        store = ("store:\n  kind: etcd\n  prefix: /bench/\n  endpoints:\n"
                 + "".join(f"    - {e}\n" for e in endpoints) + "locks:\n  enabled: false\n")
        single = {"rocksdb-1": start_fencegate("rocksdb-1", workdir, args.proxy_cpu,
                                               backend.port, args.fencegate),
                  "etcd-1": start_fencegate("etcd-1", workdir, args.proxy_cpu, backend.port,
                                            args.fencegate, store)}
        setups = {name: ports[0] for name, ports in single.items()}
        admin_ports = {name: [ports[1]] for name, ports in single.items()}
        # Three replicas with shard ownership (their own etcd prefix): a write reaching a
        # replica that does not own its key's shard is forwarded to the owner.
        ports = [procs.free_port() for _ in range(3)]
        cluster = ("cluster:\n  name: {name}\n  lease_ttl: 2s\n  peers:\n"
                   + "".join(f"    g{i}: 127.0.0.1:{p}\n" for i, p in enumerate(ports, 1)))
        replica_store = store.replace("prefix: /bench/", "prefix: /bench-cluster/")
        started = [start_fencegate(f"etcd-3-g{i}", workdir, args.proxy_cpu, backend.port,
                                   args.fencegate,
                                   replica_store + cluster.format(name=f"g{i}"), port)
                   for i, port in enumerate(ports, 1)]
        wait_settled([admin for _, admin in started])
        setups["etcd-3"] = start_haproxy(workdir, args.proxy_cpu, ports)
        admin_ports["etcd-3"] = [admin for _, admin in started]

        # Distinct advance keys per workload, setup and run: tokens start at 1.
        samples = run_interleaved(setups, admin_ports, workloads, args.reps, args.duration,
                                  args.load_cpu)
        print()
        print("| workload | figure | " + " | ".join(setups)
              + " | etcd-1/rocksdb-1 | etcd-3/rocksdb-1 |")
        print("|---|---|" + "---:|" * (len(setups) + 2))
        for workload in workloads:
            for figure, label, fmt in (("req_per_s", "req/s", "{:,.0f}"),
                                       ("p99_ms", "p99 latency ms", "{:.2f}")):
                medians = {s: statistics.median(f[figure] for f in samples[(workload.name, s)])
                           for s in setups}
                base = medians["rocksdb-1"]
                print(f"| {workload.name} | {label} | "
                      + " | ".join(fmt.format(medians[s]) for s in setups)
                      + f" | {medians['etcd-1'] / base:.2f} | {medians['etcd-3'] / base:.2f} |")
            per_write = {s: [f["advances_per_write"] for f in samples[(workload.name, s)]
                             if f["advances_per_write"] is not None] for s in setups}
            if workload.name.startswith("put_advance") and any(per_write.values()):
                print(f"| {workload.name} | advances per store write | "
                      + " | ".join(f"{statistics.median(per_write[s]):.1f}" if per_write[s]
                                   else "-" for s in setups)
                      + " | | |")
        failed = sum(f["non_2xx"] + f["socket_errors"] for v in samples.values() for f in v)
        print(f"\nFailed requests: {failed or 'none'}.")
    finally:
        procs.stop_all()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    os.sched_setaffinity(0, {1})
    main()
