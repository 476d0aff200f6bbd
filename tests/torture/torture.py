#!/usr/bin/env python3
"""Zombie torture run for fencegate (issue 4): lock holders that pause past their lease, requests
delayed, duplicated and reset on the way, a backend that is slow, fails, resets and hangs, and a
checker that fails the run on any write applied out of token order, any acknowledged write lost
and any refused write applied.

  tests/torture/torture.py --fencegate build/gateway/fencegate                 # all modes, 45 s each
  tests/torture/torture.py --mode http --duration 1800 --seed 7                # the long run

Modes: http (the http adapter in front of the recording backend), filesystem (the filesystem
adapter), two-gateways (two fencegate processes with separate fence stores in front of one
filesystem root), webdav (two such gateways, webdav adapter, in front of one real Apache
mod_dav_fs; see dav_mode.py), http-servers (one gateway in front of three servers of one http
backend, one of them killed and restarted mid-run; see servers_mode.py), s3 (kept out of "all": two such gateways in front of a real
Ceph radosgw, which this mode starts with tests/support/radosgw.sh), replicas (kept out of "all":
a real 3-member etcd cluster and --replicas gateways on it, --layout, --fault; see
replicas_mode.py). Exit status: 0 no violation (with --expect-violations: some found), 1 violations (printed with an excerpt of the
history), 2 the run could not be made or tortured nothing (no acknowledged write or no zombie
refused).
"""

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import apache_dav  # noqa: E402
import checker  # noqa: E402
import dav_mode  # noqa: E402
from gateway import FILESYSTEM_CONFIG, HTTP_CONFIG, Gateway  # noqa: E402
from file_snapshots import SnapshotTaker  # noqa: E402
from lock_issuer import LockIssuer  # noqa: E402
from recording_backend import AppliedLog, RecordingBackend  # noqa: E402
from relays import BackendRelay, ClientRelay  # noqa: E402
import replicas_mode  # noqa: E402
import s3_mode  # noqa: E402
import servers_mode  # noqa: E402
from workers import Workload  # noqa: E402

MODES = ("http", "filesystem", "two-gateways", "webdav", servers_mode.MODE)
# Two gateways with separate fence stores in front of one http backend that does not check
# tokens: nothing can order their writes (that needs a shared fence store or a backend that
# checks tokens). Run only as a control, with --expect-violations: it shows the checker catches
# writes applied out of token order end to end.
UNSAFE_MODE = "unsafe-http-two-gateways"
# Two gateways, separate fence stores, one radosgw bucket: safe through the s3 adapter's
# conditional writes at the backend. Needs root and Ceph, so it is not part of "all".
S3_MODE = "s3"
# Replicas sharing fences in a real etcd cluster, under a fault schedule (issue 7).
REPLICAS_MODE = "replicas"


async def run_mode(args, mode, run_dir):
    seed = f"{args.seed}/{mode}"
    if mode == REPLICAS_MODE:
        return await replicas_mode.run(args, run_dir, seed)
    answers = {}
    resources = [f"r{i}" for i in range(args.resources)]
    backend = backend_relay = snapshots = apache = radosgw = servers = kill = None
    applied = None
    gateways = []
    relays = []
    try:
        if mode in ("http", UNSAFE_MODE):
            applied = AppliedLog(os.path.join(run_dir, "applied.jsonl"))
            backend = RecordingBackend(seed, applied, "Fencing-Token")
            await backend.start()
            backend_relay = BackendRelay(backend.port, seed)
            await backend_relay.start()
            for name in ("g1", "g2") if mode == UNSAFE_MODE else ("g1",):
                config = HTTP_CONFIG.format(
                    access_log=os.path.join(run_dir, f"access-{name}.log"),
                    backend_port=backend_relay.port)
                gateways.append(Gateway(args.fencegate, run_dir, name, config))
            path_prefix = "/kv/"
        elif mode == servers_mode.MODE:
            applied = AppliedLog(os.path.join(run_dir, "applied.jsonl"))
            servers = servers_mode.Servers(seed, applied)
            await servers.start(seed)
            config = servers.config(os.path.join(run_dir, "access-g1.log"))
            gateways.append(Gateway(args.fencegate, run_dir, "g1", config))
            path_prefix = "/kv/"
        elif mode in ("webdav", dav_mode.UNSAFE_MODE):
            apache = apache_dav.ApacheDav(run_dir)
            await apache.start()
            backend_relay = BackendRelay(apache.port, seed)
            await backend_relay.start()
            for name in ("g1", "g2"):
                template = dav_mode.WEBDAV_CONFIG if mode == "webdav" else dav_mode.UNSAFE_CONFIG
                config = template.format(
                    access_log=os.path.join(run_dir, f"access-{name}.log"),
                    backend_port=backend_relay.port)
                gateways.append(Gateway(args.fencegate, run_dir, name, config))
            snapshots = dav_mode.DavSnapshots(apache.port, resources)
            path_prefix = "/dav/"
        elif mode == S3_MODE:
            radosgw = s3_mode.Radosgw(run_dir)
            await radosgw.start()
            await radosgw.create_bucket()
            backend_relay = BackendRelay(radosgw.port, seed)
            await backend_relay.start()
            for name in ("g1", "g2"):
                config = radosgw.config(os.path.join(run_dir, f"access-{name}.log"),
                                        backend_relay.port)
                gateways.append(Gateway(args.fencegate, run_dir, name, config))
            snapshots = s3_mode.S3SnapshotTaker(radosgw, resources)
            path_prefix = f"/{s3_mode.BUCKET}/"
        else:
            root = os.path.join(run_dir, "files")
            os.makedirs(root)
            for name in ("g1", "g2") if mode == "two-gateways" else ("g1",):
                config = FILESYSTEM_CONFIG.format(
                    access_log=os.path.join(run_dir, f"access-{name}.log"), root=root)
                gateways.append(Gateway(args.fencegate, run_dir, name, config))
            snapshots = SnapshotTaker(root, resources)
            path_prefix = "/files/"
        for gateway in gateways:
            await gateway.start()
            relay = ClientRelay(gateway.name, gateway.port, seed, args.client_timeout, answers)
            await relay.start()
            relays.append(relay)

        issuer = LockIssuer(args.lease)
        workload = Workload(seed, issuer, relays, path_prefix, resources,
                            time.monotonic() + args.duration, args.max_writes,
                            args.client_timeout, args.pause_probability)
        stop_snapshots = asyncio.Event()
        snapshotting = asyncio.ensure_future(snapshots.run(stop_snapshots)) if snapshots else None
        killing = None
        if servers is not None:
            kill = servers_mode.ServerKill(servers, gateways[0], args.duration * 0.3,
                                           args.duration * 0.3)
            killing = asyncio.ensure_future(kill.run(time.monotonic()))
        await workload.run(args.workers)
        if killing:
            await killing
        # Stalled and duplicated copies are still on their way: let them arrive and be answered.
        for relay in relays:
            await relay.drain(timeout=90)
        if snapshotting:
            stop_snapshots.set()
            await snapshotting

        report = checker.Report(mode)
        checker.count(report, workload, answers)
        if apache is not None:
            dav_mode.check(report, workload.attempts, answers, snapshots.snapshots,
                           await snapshots.final(), dav_mode.read_access_log(apache.access_log))
            report.figures["snapshot read errors"] = snapshots.errors
            report.figures["torn snapshot reads taken again"] = snapshots.torn_reads
        elif backend is not None:
            checker.check_log(report, workload.attempts, answers, backend.log)
            report.figures["backend faults"] = dict(sorted(backend.faults.items()))
        elif servers is not None:
            checker.check_log(report, workload.attempts, answers, applied.entries)
            report.figures["backend faults"] = servers.faults()
        else:
            checker.check_files(report, workload.attempts, answers, snapshots.snapshots,
                                snapshots.final())
        if backend_relay:
            report.figures["backend relay"] = {"connections": backend_relay.connections,
                                               "delays": backend_relay.delays,
                                               "resets": backend_relay.resets}
        faults = {}
        for relay in relays:
            for fault, n in relay.faults.items():
                faults[fault] = faults.get(fault, 0) + n
        report.figures["client relay faults"] = dict(sorted(faults.items()))
        report.figures["lock acquisitions"] = issuer.acquisitions
        report.figures["locks taken over after expiry"] = issuer.expiries
        metrics = {}
        for gateway in gateways:
            for name, value in (await gateway.metrics()).items():
                metrics[name] = metrics.get(name, 0) + int(value)
        report.figures["gateway metrics"] = dict(sorted(metrics.items()))
        if kill is not None:
            servers_mode.check(report, kill, answers, metrics)
        return report
    finally:
        for relay in relays:
            await relay.stop()
        for gateway in gateways:
            await gateway.stop()
        if backend_relay:
            await backend_relay.stop()
        if backend:
            await backend.stop()
        if servers:
            await servers.stop()
        if applied:
            applied.close()
        if apache:
            await apache.stop()
        if radosgw:
            await radosgw.stop()


def print_report(report, seconds):
    print(f"== mode {report.mode}: {seconds:.0f} s")
    for name, value in report.figures.items():
        print(f"   {name}: {value}")
    print(f"   violations: {len(report.violations)}")
    for kind, text in report.violations[:20]:
        print(f"   VIOLATION {kind}: {text}")
    if len(report.violations) > 20:
        print(f"   ... {len(report.violations) - 20} more")
    sys.stdout.flush()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fencegate",
                        default=os.path.join(here, "..", "..", "build", "gateway", "fencegate"))
    parser.add_argument("--mode", choices=MODES + (UNSAFE_MODE, dav_mode.UNSAFE_MODE, S3_MODE,
                                                REPLICAS_MODE, "all"),
                        default="all")
    parser.add_argument("--expect-violations", action="store_true",
                        help="succeed only if the checker finds violations (for the unsafe mode)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--duration", type=float, default=45, help="seconds of load per mode")
    parser.add_argument("--max-writes", type=int, default=1_000_000,
                        help="stop a mode after this many writes")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--resources", type=int, default=4)
    parser.add_argument("--lease", type=float, default=0.4, help="lock time-to-live, seconds")
    parser.add_argument("--pause-probability", type=float, default=0.1,
                        help="chance that a holder stalls past its lease before a write")
    parser.add_argument("--client-timeout", type=float, default=4.0)
    parser.add_argument("--replicas", type=int, default=3, help="replicas mode: gateways")
    parser.add_argument("--layout", choices=replicas_mode.LAYOUTS, default="partitioned",
                        help="replicas mode: which replica a write goes through")
    parser.add_argument("--fault", choices=replicas_mode.FAULTS, default="none",
                        help="replicas mode: the fault injected at 30%% of the load")
    parser.add_argument("--cluster", action="store_true",
                        help="replicas mode: shard ownership (a cluster: block in each config)")
    parser.add_argument("--lease-ttl", type=int, default=2,
                        help="replicas mode with --cluster: cluster.lease_ttl, whole seconds")
    parser.add_argument("--fault-length", type=float, default=4.0,
                        help="replicas mode: seconds until the fault is repaired")
    parser.add_argument("--keep", action="store_true", help="keep the run directory")
    args = parser.parse_args()

    run_dir = tempfile.mkdtemp(prefix="fencegate-torture-")
    print(f"torture: seed {args.seed}, run directory {run_dir}")
    status = 0
    for mode in MODES if args.mode == "all" else (args.mode,):
        mode_dir = os.path.join(run_dir, mode)
        os.makedirs(mode_dir)
        started = time.monotonic()
        try:
            report = asyncio.run(run_mode(args, mode, mode_dir))
        except (OSError, RuntimeError, asyncio.TimeoutError) as e:
            print(f"== mode {mode}: could not run: {e!r}")
            status = max(status, 2)
            continue
        print_report(report, time.monotonic() - started)
        if args.expect_violations:
            if not report.violations:
                print("   expected violations, found none: the checker missed them")
                status = 1
        elif report.violations:
            status = 1
        elif (report.figures["acknowledged (2xx)"] == 0
              or report.figures["zombie refusals (409)"] == 0):
            print("   the run tortured nothing: no acknowledged write or no zombie refused")
            status = max(status, 2)
    if status == 0 and not args.keep:
        shutil.rmtree(run_dir, ignore_errors=True)
    else:
        print(f"torture: logs kept in {run_dir}")
    verdict = "violations found, as expected" if args.expect_violations else "no violation"
    print("torture: " + (verdict if status == 0 else f"FAILED (exit {status})"))
    return status


if __name__ == "__main__":
    sys.exit(main())
