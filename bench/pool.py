#!/usr/bin/env python3
"""The cost of balancing: fencegate with one http backend server against fencegate with the same
backend made of three servers (docs/UPSTREAMS.md), same run, same workloads.

Three nginx backends are started from conf/backend-nginx.conf. fencegate "one server" has
`url:` (the first of them); fencegate "three servers" has `servers:` (all three) with --policy
(round_robin unless given) and, with --health-check, active checks every second. Both run the GET
and the fenced 1 KiB PUT at the current token in interleaved repetitions with wrk; CPU per
request is the fencegate process's user+system time over the requests wrk completed. With
--callgrind-requests, each is also run under callgrind for that many requests per workload
(instructions per request). The ratio three/one is printed for both: the issue aims at 1.05 or
less."""

import argparse
import os
import shutil
import statistics
import tempfile
from pathlib import Path

from harness import callgrind, fixed_client, procs, servers, wrk
from harness.workloads import all_workloads

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent


def pool_config(backend_ports, policy, health_check):
    """The `origin` backend's keys replacing conf/fencegate.yaml's url line."""
    lines = "    servers:\n" + "".join(f"      - http://127.0.0.1:{p}\n" for p in backend_ports)
    lines += f"    policy: {policy}\n"
    if health_check:
        lines += "    health_check: {path: /get, interval: 1s, timeout: 500ms}\n"
    return lines


def write_config(workdir, name, backend_ports, policy, health_check):
    directory = Path(workdir) / name
    directory.mkdir(parents=True, exist_ok=True)
    conf = servers._render("fencegate.yaml", directory / "fencegate.yaml",
                           BACKEND_PORT=backend_ports[0])
    if len(backend_ports) > 1:
        text = conf.read_text()
        url = f"    url: http://127.0.0.1:{backend_ports[0]}\n"
        conf.write_text(text.replace(url, pool_config(backend_ports, policy, health_check)))
    return directory, conf


def start(workdir, name, cpu, backend_ports, args, wrapper=()):
    directory, conf = write_config(workdir, name, backend_ports, args.policy, args.health_check)
    process = procs.Process(name, list(wrapper) + [
        args.fencegate, "--config", conf, "--listen", "127.0.0.1:0", "--admin-listen",
        "127.0.0.1:0", "--data-dir", directory / "data"], cpu, directory / "out.log")
    match = process.wait_for_line(r"fencegate listening traffic=[^:\s]+:(\d+) admin=\S+:(\d+)",
                                  120 if wrapper else 15)
    port = int(match.group(1))
    procs.wait_for_port(port, process, 120 if wrapper else 15)
    return port, process


def instructions_per_request(workdir, name, backend_ports, workloads, args):
    """{workload: Ir per request} of one fencegate under callgrind (as harness/callgrind.py)."""
    prefix = Path(workdir) / f"callgrind-{name}"
    wrapper = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={prefix}.%p"]
    port, process = start(workdir, name + "-callgrind", args.proxy_cpu, backend_ports, args,
                          wrapper)
    results = {}
    try:
        for workload in workloads:
            request = fixed_client.request_bytes(workload, port)
            client = fixed_client.Client(port, workload.connections)
            try:
                client.send(request, 500)
                before = set(prefix.parent.glob(f"{prefix.name}.{process.pid}.*"))
                callgrind._control("-z", process.pid)
                statuses = client.send(request, args.callgrind_requests)
                callgrind._control("-d", process.pid)
            finally:
                client.close()
            if any(status >= 300 for status in statuses):
                raise RuntimeError(f"callgrind {name}/{workload.name}: statuses {set(statuses)}")
            results[workload.name] = callgrind._instructions_in_new_dump(
                prefix, process.pid, before) / args.callgrind_requests
    finally:
        process.stop()
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=5, help="seconds per wrk run (5)")
    parser.add_argument("--reps", type=int, default=3, help="interleaved repetitions (3)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--policy", default="round_robin",
                        choices=("round_robin", "least_request", "fence_key"))
    parser.add_argument("--health-check", action="store_true",
                        help="active health checks on the three servers (every 1s)")
    parser.add_argument("--callgrind-requests", type=int, default=0,
                        help="requests counted per workload under callgrind; 0 = skip (0)")
    parser.add_argument("--wrk", action=argparse.BooleanOptionalAction, default=True,
                        help="the timed wrk runs (on)")
    parser.add_argument("--proxy-cpu", type=int, default=0)
    parser.add_argument("--load-cpu", type=int, default=1, help="CPU of backends and wrk")
    parser.add_argument("--fencegate", default=str(REPO_DIR / "build/gateway/fencegate"))
    args = parser.parse_args()

    workloads = [w for w in all_workloads(args.connections) if w.name in ("get", "put_current")]
    workdir = Path(tempfile.mkdtemp(prefix="fencegate-bench-pool-"))
    try:
        backend_ports = []
        for i in range(3):
            endpoint, _ = servers.start_backend(workdir / f"b{i}", args.load_cpu, workdir)
            backend_ports.append(endpoint.port)
        setups = {"one server": backend_ports[:1], "three servers": backend_ports}
        rows = {}
        if args.wrk:
            started = {name: start(workdir, name.replace(" ", "-"), args.proxy_cpu, ports, args)
                       for name, ports in setups.items()}
            cpu = {(w.name, name): [] for w in workloads for name in setups}
            samples = {(w.name, name): [] for w in workloads for name in setups}
            for rep in range(1, args.reps + 1):
                for workload in workloads:
                    for name, (port, process) in started.items():
                        before = process.cpu_seconds()
                        figures = wrk.run(f"http://127.0.0.1:{port}", workload, args.duration,
                                          args.load_cpu, script_args=[f"r{rep}"])
                        used = process.cpu_seconds() - before
                        samples[(workload.name, name)].append(figures)
                        cpu[(workload.name, name)].append(used / max(figures["requests"], 1))
                        print(f"rep {rep}/{args.reps} {workload.name:12} {name:14} "
                              f"{figures['req_per_s']:10.0f} req/s "
                              f"{cpu[(workload.name, name)][-1] * 1e6:7.2f} us CPU/req", flush=True)
            for workload in workloads:
                one = statistics.median(cpu[(workload.name, "one server")])
                three = statistics.median(cpu[(workload.name, "three servers")])
                rps = [statistics.median(f["req_per_s"] for f in samples[(workload.name, n)])
                       for n in setups]
                rows.setdefault(workload.name, {}).update(
                    {"req/s one": f"{rps[0]:,.0f}", "req/s three": f"{rps[1]:,.0f}",
                     "CPU/req one": f"{one * 1e6:.2f} us", "CPU/req three": f"{three * 1e6:.2f} us",
                     "CPU ratio": f"{three / one:.3f}"})
            for _, process in started.values():
                process.stop()
        if args.callgrind_requests > 0:
            ir = {name: instructions_per_request(workdir, name.replace(" ", "-"), ports,
                                                 workloads, args)
                  for name, ports in setups.items()}
            for workload in workloads:
                one, three = ir["one server"][workload.name], ir["three servers"][workload.name]
                rows.setdefault(workload.name, {}).update(
                    {"Ir/req one": f"{one:,.0f}", "Ir/req three": f"{three:,.0f}",
                     "Ir ratio": f"{three / one:.3f}"})
        columns = list(next(iter(rows.values())).keys()) if rows else []
        print(f"\npolicy {args.policy}" + (", health checks" if args.health_check else ""))
        print("| workload | " + " | ".join(columns) + " |")
        print("| --- |" + " --- |" * len(columns))
        for workload, row in rows.items():
            print(f"| {workload} | " + " | ".join(row[c] for c in columns) + " |")
    finally:
        procs.stop_all()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    os.sched_setaffinity(0, {1})
    main()
