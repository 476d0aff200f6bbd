"""Runs wrk pinned to the load CPU and parses its report."""

import re
import subprocess
from pathlib import Path

LUA_DIR = Path(__file__).resolve().parent.parent / "lua"
_UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def _ms(text):
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if not match:
        raise ValueError(f"wrk latency {text!r}")
    return float(match.group(1)) * _UNIT_MS[match.group(2)]


def parse(output):
    """The figures of one wrk --latency report."""
    requests = re.search(r"^\s*(\d+) requests in ([\d.]+)(\w+)", output, re.M)
    rate = re.search(r"^Requests/sec:\s*([\d.]+)", output, re.M)
    if not requests or not rate:
        raise ValueError(f"unexpected wrk output:\n{output}")
    percentiles = dict(re.findall(r"^\s*(\d+)%\s+(\S+)", output, re.M))
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", output)
    socket_errors = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    # Printed by scripts that tell stale writes apart (lua/put_hot.lua).
    stale = re.search(r"^stale_409: (\d+)$", output, re.M)
    # Printed by the raw etcd client (lua/etcd_txn.lua): etcd answers a failed compare 200.
    txn_failed = re.search(r"^txn_failed: (\d+)$", output, re.M)
    return {
        "requests": int(requests.group(1)),
        "req_per_s": float(rate.group(1)),
        "p50_ms": _ms(percentiles["50"]),
        "p99_ms": _ms(percentiles["99"]),
        "non_2xx": int(non_2xx.group(1)) if non_2xx else 0,
        "socket_errors": sum(map(int, socket_errors.groups())) if socket_errors else 0,
        **({"stale_409": int(stale.group(1))} if stale else {}),
        **({"txn_failed": int(txn_failed.group(1))} if txn_failed else {}),
    }


def interleaved(urls, workloads, reps, duration_s, cpu, script_arg):
    """Every workload against every url (name -> url), `reps` rounds, a line printed per run;
    script_arg(rep, workload, name) is the run's nonce for the Lua script. Returns
    {(workload name, url name): [figures of each rep]}."""
    samples = {(w.name, name): [] for w in workloads for name in urls}
    for rep in range(1, reps + 1):
        for workload in workloads:
            for name, url in urls.items():
                figures = run(url, workload, duration_s, cpu,
                              script_args=[script_arg(rep, workload, name)])
                bad = figures["non_2xx"] + figures["socket_errors"]
                samples[(workload.name, name)].append(figures)
                print(f"rep {rep}/{reps} {workload.name:15} {name:16} "
                      f"{figures['req_per_s']:10.0f} req/s  p99 {figures['p99_ms']:.3f} ms"
                      + (f"  errors {bad}" if bad else ""), flush=True)
    return samples


def run(url, workload, duration_s, cpu, script_args=()):
    """One timed run of workload against url; returns parse()'s figures. The script gets
    script_args (the run tag) and then the workload's own arguments."""
    argv = ["taskset", "-c", str(cpu), "wrk", "--latency",
            "-t", str(workload.threads), "-c", str(workload.connections),
            "-d", f"{duration_s}s", "--timeout", "10s"]
    if workload.script:
        argv += ["-s", str(LUA_DIR / workload.script)]
    argv.append(url + workload.path)
    args = list(script_args) + list(workload.script_args)
    if workload.script_args and not script_args:
        args.insert(0, "run")
    if args:
        argv += ["--"] + [str(a) for a in args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=duration_s + 60)
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr}{done.stdout}")
    return parse(done.stdout)
