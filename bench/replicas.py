#!/usr/bin/env python3
"""Replica rows (issues 7 and 29): what keeping the fences in etcd costs a fenced PUT.

Setups, same machine, same nginx backend, interleaved repetitions with wrk:
  rocksdb-1   one fencegate, fences in its embedded RocksDB (bench/conf/fencegate.yaml);
  etcd-1      one fencegate, fences in a 3-member etcd cluster on loopback;
  etcd-3      three fencegate replicas with shard ownership (`cluster:`) on that etcd cluster
              behind HAProxy (round robin per request, bench/conf/haproxy-replicas.cfg): two
              writes in three reach a replica that forwards them to their shard's owner.
Workloads: put_current (the fence is already at the token: no store write), put_advance_1 and
put_advance_64 (every request advances an existing key's fence: one durable store write each;
the 4,096 keys are written once before the first run), put_fresh_64 (every request the first
write of a key never written before). Per run, from the fencegates' /metrics: advances per store
write (per synced write on RocksDB, per etcd transaction on etcd: the group-commit factor) and
etcd round trips per advance transaction.
In the same repetitions: etcd_txn_1, a raw etcd client (wrk, lua/etcd_txn.lua) doing one txn
per request against the leader on one connection, the peer of put_advance_1 on etcd-3; and the
forwarding rows (harness/forward_cost.py): the fenced PUT at the current token on one connection
straight to its shard's owner and through a replica that forwards it, with the replicas' summed
CPU per request. Prints the tables and issue 29's targets marked met or not, and writes them to
<out>/replicas-latest.{md,json}.
fencegate and HAProxy run on --proxy-cpu; etcd, the backend and wrk on --load-cpu (2 cores
here)."""

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from harness import cluster, etcd, forward_cost, procs, replica_report, servers, wrk
# Under these names as well: bench/forwarding.py imports them from here.
from harness.cluster import wait_settled
from harness.etcd import start as start_etcd
from harness.replica_workloads import ETCD_TXN_1, PUT_FRESH_64, AdvanceKeys
from harness.workloads import all_workloads

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
WORKLOADS = ("put_current", "put_advance_1", "put_advance_64")

# Advances handed to the store, the writes that carried them (one store kind each), and the
# HTTP exchanges with etcd of the fence store (the shard ownership's own are not in it).
ADVANCES = "fencegate_store_advances_total"
SYNC_WRITES = "fencegate_store_sync_writes_total"
ETCD_TXNS = "fencegate_store_etcd_txns_total"
ROUND_TRIPS = "fencegate_store_round_trips_total"


def start_fencegate(name, workdir, cpu, backend_port, binary, store_block="", port=0):
    """Returns (traffic port, admin port, process). The backend's response_timeout is 5 s in
    every setup (default 60 s): it bounds a new shard owner's quarantine, hence the start-up."""
    return servers.start_fencegate(name, workdir, cpu, backend_port, binary, store_block, port,
                                   response_timeout="5s")


def store_figures(before, after):
    """Advances per store write and etcd round trips per advance txn between two counter
    reads; None where no write happened."""
    writes = (after[SYNC_WRITES] - before[SYNC_WRITES]) + (after[ETCD_TXNS] - before[ETCD_TXNS])
    txns = after[ETCD_TXNS] - before[ETCD_TXNS]
    return {"advances_per_write": (after[ADVANCES] - before[ADVANCES]) / writes if writes else None,
            "round_trips_per_txn": (after[ROUND_TRIPS] - before[ROUND_TRIPS]) / txns if txns
            else None}


def report_line(rep, reps, row, column, figures):
    bad = figures["non_2xx"] + figures["socket_errors"] + figures.get("txn_failed", 0)
    extra = ""
    if figures.get("advances_per_write"):
        extra += f"  {figures['advances_per_write']:.1f} adv/write"
    if figures.get("round_trips_per_txn"):
        extra += f"  {figures['round_trips_per_txn']:.2f} rt/txn"
    if "cpu_us_per_req" in figures:
        extra += (f"  p50 {figures['p50_ms']:.3f} ms  {figures['cpu_us_per_req']:.1f} CPU µs/req"
                  f"  {figures['forwards_per_req']:.2f} fwd/req")
    print(f"rep {rep}/{reps} {row:15} {column:10} {figures['req_per_s']:10.0f} req/s  "
          f"p99 {figures['p99_ms']:.3f} ms{extra}" + (f"  errors {bad}" if bad else ""),
          flush=True)


def run_interleaved(setups, admin_ports, advance_keys, replicas, endpoints, workloads, args):
    """Every workload against every setup, then the raw etcd client after put_advance_1 and the
    forwarding pair, `reps` rounds; returns {(row, column): [figures of each rep]}."""
    samples = {}
    counters = (ADVANCES, SYNC_WRITES, ETCD_TXNS, ROUND_TRIPS)
    for rep in range(1, args.reps + 1):
        for workload in workloads:
            for name, port in setups.items():
                advancing = workload.name.startswith("put_advance")
                script_args = (advance_keys[name].script_args() if advancing
                               else [f"{workload.name}-{name}-r{rep}"])
                before = cluster.read_counters(admin_ports[name], counters)
                figures = wrk.run(f"http://127.0.0.1:{port}", workload, args.duration,
                                  args.load_cpu, script_args=script_args)
                if workload.advances:
                    figures.update(store_figures(before, cluster.read_counters(
                        admin_ports[name], counters)))
                if advancing:
                    advance_keys[name].ran(figures, workload.connections)
                samples.setdefault((workload.name, name), []).append(figures)
                report_line(rep, args.reps, workload.name, name, figures)
            if workload.name == "put_advance_1":
                figures = wrk.run(f"http://{etcd.leader(endpoints)}", ETCD_TXN_1,
                                  args.duration, args.load_cpu, script_args=[f"r{rep}"])
                samples.setdefault((ETCD_TXN_1.name, "etcd-raw"), []).append(figures)
                report_line(rep, args.reps, ETCD_TXN_1.name, "etcd-raw", figures)
        # The pair in turn first and second, so neither always runs on the warmer machine.
        pair = list(forward_cost.routes(replicas).items())
        idle_rate = forward_cost.idle_cpu_rate(replicas)
        for label, port in pair if rep % 2 else reversed(pair):
            figures = forward_cost.run(port, replicas, idle_rate, args.duration, args.load_cpu)
            samples.setdefault(("put_current_1", label), []).append(figures)
            report_line(rep, args.reps, "put_current_1", label, figures)
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


def git_commit():
    done = subprocess.run(["git", "-C", REPO_DIR, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16,
                        help="connections of the current-token PUT (16)")
    parser.add_argument("--proxy-cpu", type=int, default=0)
    parser.add_argument("--load-cpu", type=int, default=1)
    parser.add_argument("--fencegate", default=str(REPO_DIR / "build/gateway/fencegate"))
    parser.add_argument("--out", default=str(BENCH_DIR / "results"))
    args = parser.parse_args()

    started_at = time.monotonic()
    workloads = [w for w in all_workloads(args.connections) if w.name in WORKLOADS]
    workloads.append(PUT_FRESH_64)
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
        cluster_block = ("cluster:\n  name: {name}\n  lease_ttl: 2s\n  peers:\n"
                         + "".join(f"    g{i}: 127.0.0.1:{p}\n" for i, p in enumerate(ports, 1)))
        replica_store = store.replace("prefix: /bench/", "prefix: /bench-cluster/")
        replicas = {f"g{i}": start_fencegate(f"etcd-3-g{i}", workdir, args.proxy_cpu,
                                             backend.port, args.fencegate,
                                             replica_store + cluster_block.format(name=f"g{i}"),
                                             port)
                    for i, port in enumerate(ports, 1)}
        wait_settled([admin for _, admin, _ in replicas.values()])
        setups["etcd-3"] = start_haproxy(workdir, args.proxy_cpu, ports)
        admin_ports["etcd-3"] = [admin for _, admin, _ in replicas.values()]

        advance_keys = {name: AdvanceKeys(f"keys-{name}") for name in setups}
        for name, port in setups.items():
            prefill_at = time.monotonic()
            advance_keys[name].prefill(port)
            print(f"advance keys of {name} written in {time.monotonic() - prefill_at:.1f} s",
                  flush=True)
        samples = run_interleaved(setups, admin_ports, advance_keys, replicas, endpoints,
                                  workloads, args)
    finally:
        procs.stop_all()
        shutil.rmtree(workdir, ignore_errors=True)

    elapsed = time.monotonic() - started_at
    meta = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": git_commit(), "command": shlex.join(["bench/replicas.py", *sys.argv[1:]]),
            "reps": args.reps, "duration_s": args.duration, "elapsed_s": elapsed,
            "fencegate": args.fencegate,
            "failed": sum(f["non_2xx"] + f["socket_errors"] + f.get("txn_failed", 0)
                          for runs in samples.values() for f in runs)}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print()
    print(replica_report.write(samples, [w.name for w in workloads], list(setups), meta,
                               out / "replicas-latest.md", out / "replicas-latest.json"))
    print(f"written: {out / 'replicas-latest.md'}, {out / 'replicas-latest.json'}")
    print(f"whole run: {elapsed:.0f} s")


if __name__ == "__main__":
    os.sched_setaffinity(0, {1})
    main()
