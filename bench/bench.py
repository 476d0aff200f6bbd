#!/usr/bin/env python3
"""fencegate side by side with nginx, HAProxy and the direct path (see bench/README.md).

Starts a backend and every proxy on 127.0.0.1, checks that the fencing peers apply the same
token rules, runs each workload against each proxy in interleaved repetitions with wrk (the
order rotating from one repetition to the next), measures the raw fdatasync rate and latency of
the same disk around each fencegate advance run, counts instructions per request under
callgrind, and writes bench/results/latest.{md,json}."""

import argparse
import datetime
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import (callgrind, checks, fsync_probe, idle, many_keys, procs, report, servers,
                     store_counters, stream, wrk)
from harness.workloads import all_workloads

# Workloads that are not timed wrk runs: each has its own measurement (see bench/README.md).
EXTRA_WORKLOADS = ("stream", "idle", "many_keys")

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=5, help="seconds per wrk run (5)")
    parser.add_argument("--reps", type=int, default=5, help="interleaved repetitions (5)")
    parser.add_argument("--warmup", type=int, default=1, help="seconds of warm-up per pair (1)")
    parser.add_argument("--connections", type=int, default=16,
                        help="connections of the GET and current-token PUT workloads (16)")
    parser.add_argument("--proxies", default=",".join(servers.PROXIES),
                        help="comma-separated subset of " + ",".join(servers.PROXIES))
    parser.add_argument("--workloads", default="",
                        help="comma-separated subset of "
                             + ",".join([w.name for w in all_workloads(16)] + list(EXTRA_WORKLOADS))
                             + " (all)")
    parser.add_argument("--stream-bytes", type=int, default=1 << 30,
                        help="body size of the streamed PUT (1 GiB)")
    parser.add_argument("--idle-connections", type=int, default=10000,
                        help="idle keep-alive connections opened to each proxy (10000)")
    parser.add_argument("--keys", default="1000,1000000",
                        help="fence keys in the stores of the many_keys workload; the first is "
                             "the baseline (1000,1000000)")
    parser.add_argument("--fence-fill", default=None,
                        help="bench/tools/fence_fill binary (default: next to --fencegate's "
                             "build, <build>/bench/fence_fill)")
    parser.add_argument("--callgrind-requests", type=int, default=5000,
                        help="requests counted per proxy and workload under callgrind; 0 = skip")
    parser.add_argument("--fsync-seconds", type=float, default=3.0,
                        help="length of each raw fdatasync measurement (3)")
    parser.add_argument("--proxy-cpu", type=int, default=0)
    parser.add_argument("--load-cpu", type=int, default=1, help="CPU of backend, wrk, probe")
    parser.add_argument("--fencegate", default=str(REPO_DIR / "build/gateway/fencegate"))
    parser.add_argument("--workdir-parent", default=None,
                        help="where the temp dir (fence store, fsync probe) goes; same disk")
    parser.add_argument("--out", default=str(BENCH_DIR / "results"))
    parser.add_argument("--keep-workdir", action="store_true")
    return parser.parse_args()


def measure(endpoint, workload, args, nonce):
    """One wrk run with the proxy's CPU time and RSS around it."""
    process = endpoint.process
    cpu_before = process.cpu_seconds() if process else None
    figures = wrk.run(endpoint.url, workload, args.duration, args.load_cpu, script_args=[nonce])
    if workload.body_bytes:
        figures["mb_per_s"] = figures["req_per_s"] * workload.body_bytes / 1e6
    # A 2xx of an advancing workload is one advance; a 409 is a write that arrived stale.
    admitted = figures["requests"] - figures["non_2xx"]
    if workload.advances:
        figures["advances_per_s"] = (figures["req_per_s"] * admitted / figures["requests"]
                                     if figures["requests"] else 0.0)
    if process:
        cpu = process.cpu_seconds() - cpu_before
        figures["cpu_us_per_req"] = cpu * 1e6 / figures["requests"] if figures["requests"] else None
        if workload.advances and endpoint.name in servers.FENCING:
            figures["cpu_us_per_advance"] = cpu * 1e6 / admitted if admitted else None
        figures["rss_mib"] = process.rss_kib() / 1024
    return figures


def rotated(endpoints, rep):
    """The endpoints in the order of repetition `rep` (from 1): each repetition starts one
    further along, so no proxy always runs first (on a cold cache) or right after another."""
    shift = (rep - 1) % len(endpoints)
    return endpoints[shift:] + endpoints[:shift]


def git_commit():
    done = subprocess.run(["git", "-C", str(REPO_DIR), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def raise_open_file_limit():
    """Soft open-file limit up to the hard one, for the idle workload's client and proxies."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def run_stream(endpoints, args, log):
    """The streamed PUT, interleaved over the endpoints like the wrk workloads."""
    runs = {endpoint.name: [] for endpoint in endpoints}
    for rep in range(1, args.reps + 1):
        for endpoint in rotated(endpoints, rep):
            figures = stream.measure(endpoint, args.stream_bytes)
            runs[endpoint.name].append(figures)
            log(f"rep {rep}/{args.reps} stream          {endpoint.name:10} "
                f"{figures['mb_per_s']:10.0f} MB/s"
                + (f"  peak RSS {figures['peak_rss_mib']:.1f} MiB" if "peak_rss_mib" in figures
                   else ""))
    return runs


def run_idle(endpoints, args, log):
    """One pass per proxy (not direct: the backend is no proxy under test)."""
    results = {}
    for endpoint in endpoints:
        if not endpoint.process:
            continue
        figures = idle.measure(endpoint, args.idle_connections)
        results[endpoint.name] = figures
        per_conn = figures["kib_per_conn"]
        log(f"idle {endpoint.name:10} held {figures['held']:,}/{figures['attempted']:,} "
            f"RSS {figures['rss_before_mib']:.1f} -> {figures['rss_after_mib']:.1f} MiB, "
            + (f"{per_conn:.1f} KiB/conn" if per_conn is not None else "no connection held"))
    return results


def main():
    args = parse_args()
    proxies = [p for p in args.proxies.split(",") if p]
    for proxy in proxies:
        if proxy not in servers.PROXIES:
            sys.exit(f"unknown proxy {proxy}")
    workloads = all_workloads(args.connections)
    extras = list(EXTRA_WORKLOADS)
    if args.workloads:
        chosen = args.workloads.split(",")
        workloads = [w for w in workloads if w.name in chosen]
        extras = [e for e in EXTRA_WORKLOADS if e in chosen]
        if len(workloads) + len(extras) != len(chosen):
            sys.exit(f"unknown workload in {args.workloads}")
    needs_fencegate = "fencegate" in proxies or "many_keys" in extras
    if needs_fencegate and not os.access(args.fencegate, os.X_OK):
        sys.exit(f"no fencegate binary at {args.fencegate} (bench/run.sh builds it)")
    key_counts = [int(k) for k in args.keys.split(",") if k]
    if "many_keys" in extras:
        if args.fence_fill is None:
            args.fence_fill = str(Path(args.fencegate).resolve().parent.parent / "bench/fence_fill")
        if not os.access(args.fence_fill, os.X_OK):
            sys.exit(f"no fence_fill binary at {args.fence_fill} (bench/run.sh builds it)")
        if len(key_counts) < 2:
            sys.exit("--keys needs a baseline and at least one other count")
    open_files = raise_open_file_limit()

    def log(line):
        print(line, flush=True)

    os.sched_setaffinity(0, {args.load_cpu})
    workdir = Path(tempfile.mkdtemp(prefix="fencegate-bench-", dir=args.workdir_parent))
    shm = Path("/dev/shm")
    stream_tmp = Path(tempfile.mkdtemp(prefix="fencegate-bench-stream-",
                                       dir=shm if shm.is_dir() and os.access(shm, os.W_OK)
                                       else workdir))
    print(f"work dir {workdir}, streamed bodies spooled in {stream_tmp}, "
          f"open files {open_files}", flush=True)
    try:
        backend, backend_process = servers.start_backend(workdir, args.load_cpu, stream_tmp)
        endpoints = [backend if name == "direct" else
                     servers.start_proxy(name, workdir, args.proxy_cpu, backend.port, args.fencegate)
                     for name in proxies]
        for endpoint in endpoints:
            checks.check_endpoint(endpoint, workloads)
            checks.check_fencing(endpoint)
        log("checked: every proxy answers every workload with a 2xx; "
            + ", ".join(e.name for e in endpoints if e.name in servers.FENCING)
            + " refuse a missing (428), malformed (400) and stale (409) token and admit an "
            "equal one")
        probe = (fsync_probe.SyncProbe(workdir)
                 if "fencegate" in proxies and any(w.advances for w in workloads) else None)

        run_id = 0
        if args.warmup > 0:
            warm = argparse.Namespace(**{**vars(args), "duration": args.warmup})
            for workload in workloads:
                for endpoint in endpoints:
                    run_id += 1
                    measure(endpoint, workload, warm, f"w{run_id}")

        samples = {w.name: {p: [] for p in proxies} for w in workloads}
        fsync_samples = []
        for rep in range(1, args.reps + 1 if workloads else 1):
            for workload in workloads:
                for endpoint in rotated(endpoints, rep):
                    run_id += 1
                    # The shared disk's sync rate swings by 10x within a minute (other
                    # tenants' I/O), so the probe brackets the very run it is compared with.
                    probed = (workload.advances and endpoint.name == "fencegate")
                    if probed:
                        before = probe.measure(args.fsync_seconds)
                        counters_before = store_counters.read(endpoint.admin_port)
                    figures = measure(endpoint, workload, args, f"r{run_id}")
                    if probed:
                        counters_after = store_counters.read(endpoint.admin_port)
                        figures["advances_per_sync_write"] = store_counters.advances_per_sync_write(
                            counters_before, counters_after)
                        figures["store_sync_us"] = store_counters.mean_sync_us(counters_before,
                                                                               counters_after)
                        after = probe.measure(args.fsync_seconds)
                        figures["fsync_before_per_s"] = before["per_s"]
                        figures["fsync_after_per_s"] = after["per_s"]
                        figures["fsync_per_s"] = (before["per_s"] + after["per_s"]) / 2
                        figures["fsync_p50_us"] = (before["p50_us"] + after["p50_us"]) / 2
                        figures["advances_per_fsync"] = (figures["advances_per_s"]
                                                         / figures["fsync_per_s"])
                        fsync_samples.append(figures["fsync_per_s"])
                    samples[workload.name][endpoint.name].append(figures)
                    stale = figures.get("stale_409", 0)
                    print(f"rep {rep}/{args.reps} {workload.name:17} {endpoint.name:10} "
                          f"{figures['req_per_s']:10.0f} req/s  p50 {figures['p50_ms']:.3f} ms"
                          f"  p99 {figures['p99_ms']:.3f} ms"
                          + (f"  {figures['cpu_us_per_req']:.1f} µs/req"
                             if figures.get("cpu_us_per_req") else "")
                          + (f"  {figures['mb_per_s']:.0f} MB/s" if "mb_per_s" in figures else "")
                          + (f"  fdatasync/s {before['per_s']:.0f}/{after['per_s']:.0f} "
                             f"({figures['fsync_p50_us']:.0f} µs) -> "
                             f"{figures['advances_per_fsync']:.2f} advances/fdatasync, "
                             f"{figures['advances_per_sync_write'] or 0:.1f} per synced write, "
                             f"own syncs {figures['store_sync_us'] or 0:.0f} µs"
                             if probed else "")
                          + (f"  {figures['cpu_us_per_advance']:.1f} CPU µs/advance"
                             if figures.get("cpu_us_per_advance") else "")
                          + (f"  stale 409 {stale}" if stale else "")
                          + (f"  non-2xx {figures['non_2xx'] - stale}"
                             if figures["non_2xx"] - stale else ""),
                          flush=True)
        if probe:
            probe.close()

        stream_runs = run_stream(endpoints, args, log) if "stream" in extras else {}
        idle_results = run_idle(endpoints, args, log) if "idle" in extras else {}
        for endpoint in endpoints:
            if endpoint.process:
                endpoint.process.stop()

        key_results = {}
        if "many_keys" in extras:
            key_results = many_keys.run(key_counts, workdir, args, backend.port, log)

        instructions = {w.name: {} for w in workloads}
        counted = [w for w in workloads if w.fixed_request and w.counted]
        if args.callgrind_requests > 0 and counted:
            for name in proxies:
                if name == "direct":
                    continue
                print(f"callgrind {name} ...", flush=True)
                per_workload = callgrind.instructions_per_request(
                    name, counted, workdir, args.proxy_cpu, backend.port, args.fencegate,
                    requests=args.callgrind_requests, warmup=max(500, args.callgrind_requests // 5),
                    connections=4)
                for workload_name, value in per_workload.items():
                    instructions[workload_name][name] = value
                    print(f"callgrind {name:10} {workload_name:17} {value:,.0f} instructions/req",
                          flush=True)
        backend_process.stop()

        meta = {
            "command": "bash bench/run.sh " + shlex.join(sys.argv[1:]),
            "commit": git_commit(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "proxies": proxies, "reps": args.reps, "duration_s": args.duration, "warmup_s": args.warmup,
            "proxy_cpu": args.proxy_cpu, "load_cpu": args.load_cpu,
            "callgrind": (f"{args.callgrind_requests} requests on 4 keep-alive connections after "
                          "warm-up" if args.callgrind_requests > 0 else "skipped"),
            "cpus": os.cpu_count(), "kernel": os.uname().release,
            "fencegate_binary": args.fencegate if needs_fencegate else None,
            "open_files": open_files, "stream_bytes": args.stream_bytes,
            "idle_connections": args.idle_connections, "keys": key_counts,
        }
        summary = report.summarize(samples, instructions, fsync_samples, workloads, proxies)
        summary["stream"] = report.summarize_stream(stream_runs)
        summary["idle"] = idle_results
        summary["many_keys"] = report.summarize_keys(key_results)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        raw = {"runs": samples, "fsync_per_s": fsync_samples, "instructions_per_req": instructions,
               "stream": stream_runs, "many_keys": {str(k): v for k, v in key_results.items()}}
        print()
        print(report.write(summary, raw, meta, out / "latest.md", out / "latest.json"))
        print(f"written: {out / 'latest.md'}, {out / 'latest.json'}")
    finally:
        procs.stop_all()
        shutil.rmtree(stream_tmp, ignore_errors=True)
        if not args.keep_workdir:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    start = time.monotonic()
    main()
    print(f"bench took {time.monotonic() - start:.0f} s")
