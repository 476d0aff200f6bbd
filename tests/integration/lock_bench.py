#!/usr/bin/env python3
"""Measures the built-in lock API of a real fencegate (not a test; nothing asserts on figures).

Starts build/gateway/fencegate on loopback with a throwaway data directory and reports:
  1. latency: sequential acquire + release cycles on one keep-alive connection (p50/p99/mean);
  2. throughput, uncontended: P client processes, each cycling acquire/release on its own lock;
  3. throughput and fairness, contended: P client processes on ONE lock, each acquiring with a
     long-poll wait and releasing at once; grants per client and Jain's fairness index.
Every loop is bounded by a count and a time limit.

Usage: python3 tests/integration/lock_bench.py [--binary build/gateway/fencegate]
       [--cycles 2000] [--seconds 5] [--clients 4] [--etcd HOST:PORT]
--etcd keeps the locks (and fences) in an etcd you started (store kind etcd, a fresh prefix).
"""
import argparse
import http.client
import json
import multiprocessing
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CONFIG = """access_log:
  path: ""
backends:
  files:
    kind: filesystem
    root: "{data_dir}/files"
routes:
  - name: files
    prefix: /files/
    backend: files
    fence_key: "files:{path}"
locks:
  max_waiters: 10000
"""


def start(binary, workdir, etcd=None):
    config = os.path.join(workdir, "fencegate.yaml")
    with open(config, "w") as f:
        if etcd:
            f.write("store:\n  kind: etcd\n  endpoints: [\"%s\"]\n  prefix: /lock-bench-%d/\n"
                    % (etcd, os.getpid()))
        f.write(CONFIG)
    proc = subprocess.Popen(
        [binary, "--config", config, "--listen", "127.0.0.1:0", "--admin-listen",
         "127.0.0.1:0", "--data-dir", os.path.join(workdir, "data")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    m = re.search(r"traffic=127\.0\.0\.1:(\d+) admin=127\.0\.0\.1:(\d+)", line)
    if not m:
        proc.kill()
        sys.exit("fencegate did not start: " + line + proc.stderr.read())
    return proc, int(m.group(1)), int(m.group(2))


def post(conn, path, body):
    conn.request("POST", path, body=json.dumps(body),
                 headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    return response.status, json.loads(response.read() or b"{}")


def cycle(conn, name, wait_ms=0):
    t0 = time.perf_counter()
    status, grant = post(conn, "/locks/" + name, {"ttl_ms": 30000, "wait_ms": wait_ms})
    t1 = time.perf_counter()
    if status != 200:
        return None
    status, _ = post(conn, "/locks/%s/release" % name, {"owner_token": grant["owner_token"]})
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, grant["fencing_token"]


def client(args):
    port, name, start_at, seconds, max_cycles, wait_ms = args
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.connect()
    # Every client starts and stops at the same moments (CLOCK_MONOTONIC is system-wide), so
    # the grant counts compare equal time windows.
    time.sleep(max(0.0, start_at - time.monotonic()))
    done = 0
    deadline = start_at + seconds
    while done < max_cycles and time.monotonic() < deadline:
        if cycle(conn, name, wait_ms) is not None:
            done += 1
    return done


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100.0 * len(values)))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default="build/gateway/fencegate")
    parser.add_argument("--cycles", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--etcd", help="HOST:PORT of a running etcd: the locks live there")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="lock-bench-")
    proc, port, _ = start(args.binary, workdir, args.etcd)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for _ in range(50):  # warm-up
            cycle(conn, "warm")
        acquire, release = [], []
        deadline = time.perf_counter() + 4 * args.seconds
        while len(acquire) < args.cycles and time.perf_counter() < deadline:
            a, r, _ = cycle(conn, "latency")
            acquire.append(a)
            release.append(r)
        ms = lambda s: "%.3f" % (s * 1000)
        print("1. sequential acquire+release, 1 connection, %d cycles" % len(acquire))
        print("   acquire ms: p50 %s  p99 %s  mean %s" % (
            ms(pct(acquire, 50)), ms(pct(acquire, 99)), ms(statistics.mean(acquire))))
        print("   release ms: p50 %s  p99 %s  mean %s" % (
            ms(pct(release, 50)), ms(pct(release, 99)), ms(statistics.mean(release))))
        print("   cycles/s: %.0f" % (len(acquire) / (sum(acquire) + sum(release))))

        with multiprocessing.Pool(args.clients) as pool:
            start_at = time.monotonic() + 1.0
            counts = pool.map(client, [(port, "own-%d" % i, start_at, args.seconds, 10**6, 0)
                                       for i in range(args.clients)])
            elapsed = args.seconds
        print("2. uncontended: %d clients, one lock each, %.1f s" % (args.clients, elapsed))
        print("   cycles/s total: %.0f  (%.0f acquires+releases/s)" % (
            sum(counts) / elapsed, 2 * sum(counts) / elapsed))

        with multiprocessing.Pool(args.clients) as pool:
            start_at = time.monotonic() + 1.0
            counts = pool.map(client, [(port, "shared", start_at, args.seconds, 10**6, 10000)
                                       for _ in range(args.clients)])
            elapsed = args.seconds
        jain = sum(counts) ** 2 / (len(counts) * sum(c * c for c in counts))
        print("3. contended: %d clients on one lock (long-poll wait), %.1f s" % (
            args.clients, elapsed))
        print("   grants/s: %.0f  per client: %s  min/max %.3f  Jain index %.4f" % (
            sum(counts) / elapsed, counts, min(counts) / max(counts), jain))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
