"""Admission with many fence keys in the store: two fencegate instances, one on a store filled
with `few` keys and one with `many` (bench/tools/fence_fill writes the records through the
gateway's own store code, in batches), measured with the same PUT-at-current-token load spread
over all of each store's keys, in interleaved repetitions."""

import subprocess
import time
from pathlib import Path

from . import servers, wrk
from .workloads import Workload

_FILL_TIMEOUT_S = 600


def fill(tool, data_dir, keys):
    """Fences /k/0 .. /k/<keys-1> at token 1 in <data_dir>/fences; returns seconds taken."""
    start = time.monotonic()
    done = subprocess.run([str(tool), "--store", str(Path(data_dir) / "fences"),
                           "--keys", str(keys), "--prefix", "/k/"],
                          capture_output=True, text=True, timeout=_FILL_TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"fence_fill failed ({done.returncode}): {done.stderr}")
    return time.monotonic() - start


def workload(connections):
    return Workload("put_spread", f"PUT 1 KiB at current token on random keys of the store, "
                    f"{connections} connections", "/k/0", connections, 1,
                    script="put_spread.lua")


def run(key_counts, workdir, args, backend_port, log):
    """{keys: {"fill_s", "store_mib", "runs": [figures, ...]}} for each count in key_counts."""
    load = workload(args.connections)
    instances = {}
    for keys in key_counts:
        tag = f"-keys{keys}"
        data_dir = Path(workdir) / f"fencegate{tag}" / "data"
        fill_s = fill(args.fence_fill, data_dir, keys)
        store_mib = sum(f.stat().st_size for f in (data_dir / "fences").rglob("*")
                        if f.is_file()) / (1 << 20)
        log(f"keys {keys:>9,}: filled in {fill_s:.1f} s, store {store_mib:.1f} MiB")
        endpoint = servers.start_proxy("fencegate", workdir, args.proxy_cpu, backend_port,
                                       args.fencegate, tag=tag)
        instances[keys] = {"endpoint": endpoint, "fill_s": fill_s, "store_mib": store_mib,
                           "runs": []}

    def measure(keys, duration_s, tag):
        endpoint = instances[keys]["endpoint"]
        cpu_before = endpoint.process.cpu_seconds()
        figures = wrk.run(endpoint.url, load, duration_s, args.load_cpu,
                          script_args=[tag, keys])
        cpu = endpoint.process.cpu_seconds() - cpu_before
        figures["cpu_us_per_req"] = cpu * 1e6 / figures["requests"] if figures["requests"] else None
        figures["rss_mib"] = endpoint.process.rss_kib() / 1024
        return figures

    for keys in key_counts:
        if args.warmup > 0:
            measure(keys, args.warmup, "warm")
    for rep in range(1, args.reps + 1):
        for keys in key_counts:
            figures = measure(keys, args.duration, f"r{rep}")
            instances[keys]["runs"].append(figures)
            log(f"rep {rep}/{args.reps} put_spread keys {keys:>9,} {figures['req_per_s']:10.0f}"
                f" req/s  p99 {figures['p99_ms']:.3f} ms  {figures['cpu_us_per_req']:.1f} µs/req"
                f"  RSS {figures['rss_mib']:.1f} MiB"
                + (f"  non-2xx {figures['non_2xx']}" if figures["non_2xx"] else ""))
    for instance in instances.values():
        instance.pop("endpoint").process.stop()
    return instances
