#!/usr/bin/env python3
"""TLS rows: fencegate and nginx terminating TLS in front of the same nginx backend, same run.

Full handshakes per second (every request on a new connection, `Connection: close`, no session
resumption) and the fenced 1 KiB PUT at the current token over keep-alive TLS, with plain
fencegate as the reference. Certificates come from tests/support/make_test_certs.sh (P-256).
Interleaved repetitions, wrk pinned next to the backend, proxies pinned to --proxy-cpu."""

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from harness import procs, servers, wrk
from harness.workloads import Workload

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent

WORKLOADS = [
    Workload("handshake", "new TLS connection per GET (Connection: close), 16 connections",
             "/get", 16, 1, script="connection_close.lua"),
    Workload("put_current", "fenced PUT 1 KiB at current token, 16 keep-alive connections",
             "/put/current", 16, 1, script="put_current.lua"),
]


def start_nginx_tls(workdir, cpu, backend_port, certs):
    directory = servers._nginx_dir(workdir, "nginx-tls")
    port = procs.free_port()
    conf = servers._render("proxy-nginx-tls.conf", directory / "nginx.conf", DIR=directory,
                           PORT=port, BACKEND_PORT=backend_port, CERT=certs / "server.pem",
                           KEY=certs / "server.key")
    process = procs.Process("nginx-tls", ["nginx", "-p", directory, "-c", conf], cpu,
                            directory / "out.log")
    procs.wait_for_port(port, process, 15)
    return port, process


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--proxy-cpu", type=int, default=0)
    parser.add_argument("--load-cpu", type=int, default=1)
    parser.add_argument("--fencegate", default=str(REPO_DIR / "build/gateway/fencegate"))
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="fencegate-bench-tls-"))
    try:
        certs = workdir / "certs"
        subprocess.run(["bash", REPO_DIR / "tests/support/make_test_certs.sh", certs], check=True)
        backend_endpoint, _ = servers.start_backend(workdir, args.load_cpu, workdir)
        tls_block = (f"tls:\n  traffic:\n    cert_file: {certs / 'server.pem'}\n"
                     f"    key_file: {certs / 'server.key'}\n")
        endpoints = {}
        port, _, _ = servers.start_fencegate("fencegate-tls", workdir, args.proxy_cpu,
                                             backend_endpoint.port, args.fencegate, tls_block)
        endpoints["fencegate TLS"] = f"https://127.0.0.1:{port}"
        port, _ = start_nginx_tls(workdir, args.proxy_cpu, backend_endpoint.port, certs)
        endpoints["nginx TLS"] = f"https://127.0.0.1:{port}"
        port, _, _ = servers.start_fencegate("fencegate-plain", workdir, args.proxy_cpu,
                                             backend_endpoint.port, args.fencegate)
        endpoints["fencegate plain"] = f"http://127.0.0.1:{port}"

        samples = wrk.interleaved(endpoints, WORKLOADS, args.reps, args.duration, args.load_cpu,
                                  lambda rep, workload, name: f"r{rep}")
        print()
        print("| workload | " + " | ".join(endpoints) + " |")
        print("| --- |" + " --- |" * len(endpoints))
        for workload in WORKLOADS:
            medians = [statistics.median(f["req_per_s"] for f in samples[(workload.name, n)])
                       for n in endpoints]
            print(f"| {workload.title} | " + " | ".join(f"{m:,.0f}/s" for m in medians) + " |")
    finally:
        procs.stop_all()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    os.sched_setaffinity(0, {1})
    main()
