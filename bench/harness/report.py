"""Medians, ratios, and the Markdown and JSON reports."""

import json
import statistics

# (key, label, decimals) of every figure, in table order.
FIGURES = [
    ("req_per_s", "req/s", 0),
    ("p50_ms", "p50 latency ms", 3),
    ("p99_ms", "p99 latency ms", 3),
    ("cpu_us_per_req", "proxy CPU µs/req", 1),
    ("instructions_per_req", "instructions/req (callgrind)", 0),
    ("rss_mib", "proxy RSS MiB", 1),
]
BASELINES = ("nginx", "haproxy", "direct")


def summarize(samples, callgrind, fsync_samples, workloads, proxies):
    """Medians of the interleaved repetitions, per workload and proxy."""
    summary = {"workloads": {}, "fsync_per_s": _median(fsync_samples)}
    for workload in workloads:
        per_proxy = {}
        for proxy in proxies:
            runs = samples[workload.name][proxy]
            figures = {key: _median([run[key] for run in runs if run.get(key) is not None])
                       for key, _, _ in FIGURES if key != "instructions_per_req"}
            figures["instructions_per_req"] = callgrind.get(workload.name, {}).get(proxy)
            figures["non_2xx"] = sum(run["non_2xx"] for run in runs)
            figures["socket_errors"] = sum(run["socket_errors"] for run in runs)
            per_proxy[proxy] = figures
        ratios = {}
        if "fencegate" in per_proxy:
            for key, _, _ in FIGURES:
                ratios[key] = {base: _ratio(per_proxy["fencegate"][key], per_proxy[base][key])
                               for base in BASELINES if base in per_proxy}
        summary["workloads"][workload.name] = {
            "title": workload.title, "advances": workload.advances,
            "proxies": per_proxy, "fencegate_over": ratios}
    return summary


def write(summary, raw, meta, md_path, json_path):
    json_path.write_text(json.dumps({"meta": meta, "summary": summary, "samples": raw}, indent=2))
    text = markdown(summary, meta)
    md_path.write_text(text)
    return text


def markdown(summary, meta):
    proxies = list(next(iter(summary["workloads"].values()))["proxies"])
    bases = [b for b in BASELINES if b in proxies] if "fencegate" in proxies else []
    lines = [
        f"Command: `{meta['command']}`  ",
        f"Commit {meta['commit']}, {meta['date']}; {meta['reps']} interleaved repetitions of "
        f"{meta['duration_s']} s, medians; proxy on CPU {meta['proxy_cpu']}, backend and wrk on "
        f"CPU {meta['load_cpu']}; callgrind: {meta['callgrind']}.",
        "",
        "| workload | figure | " + " | ".join(proxies) + "".join(f" | fencegate/{b}" for b in bases)
        + " |",
        "|---|---|" + "---:|" * (len(proxies) + len(bases)),
    ]
    for name, workload in summary["workloads"].items():
        for key, label, decimals in FIGURES:
            values = [_fmt(workload["proxies"][p][key], decimals) for p in proxies]
            ratios = [_fmt(workload["fencegate_over"][key].get(b), 2) for b in bases]
            if all(v == "—" for v in values):
                continue
            lines.append(f"| {name} | {label} | " + " | ".join(values + ratios) + " |")
    lines += ["", "Workloads: " + "; ".join(
        f"`{name}` = {w['title']}" for name, w in summary["workloads"].items()) + "."]
    advancing = {n: w for n, w in summary["workloads"].items()
                 if w["advances"] and "fencegate" in w["proxies"]}
    if advancing:
        fsync = summary["fsync_per_s"]
        lines += ["", "| durable advances | fencegate advances/s | raw fsync/s (4 KiB append + "
                  "fsync, same disk) | advances / fsync |", "|---|---:|---:|---:|"]
        for name, workload in advancing.items():
            rate = workload["proxies"]["fencegate"]["req_per_s"]
            lines.append(f"| {name} | {_fmt(rate, 0)} | {_fmt(fsync, 0)} | "
                         f"{_fmt(_ratio(rate, fsync), 2)} |")
    failures = [f"{n}/{p}: {f['non_2xx']} non-2xx, {f['socket_errors']} socket errors"
                for n, w in summary["workloads"].items() for p, f in w["proxies"].items()
                if f["non_2xx"] or f["socket_errors"]]
    lines += ["", "Failed requests: " + ("; ".join(failures) if failures else "none") + "."]
    return "\n".join(lines) + "\n"


def _median(values):
    return statistics.median(values) if values else None


def _ratio(a, b):
    return a / b if a is not None and b else None


def _fmt(value, decimals):
    if value is None:
        return "—"
    return f"{value:,.{decimals}f}"
