"""Medians, ratios, and the Markdown and JSON reports."""

import json
import statistics

# (key, label, decimals) of every figure, in table order.
FIGURES = [
    ("req_per_s", "req/s", 0),
    ("mb_per_s", "MB/s of bodies (10^6 bytes)", 0),
    ("p50_ms", "p50 latency ms", 3),
    ("p99_ms", "p99 latency ms", 3),
    ("cpu_us_per_req", "proxy CPU µs/req", 1),
    ("instructions_per_req", "instructions/req (callgrind)", 0),
    ("rss_mib", "proxy RSS MiB", 1),
]
BASELINES = ("nginx", "nginx_lua", "haproxy", "direct")
# What each peer is, printed under the tables: fencegate's ratios to nginx_lua compare it with
# the fence check a user would build instead, which skips part of fencegate's work.
PEER_NOTES = {
    "nginx": "plain reverse proxy, no fencing",
    "nginx_lua": ("nginx with the same token check in Lua (conf/fence_check.lua: 428/400/409, "
                  "`>=` admits, tokens compared exactly as strings) and the highest token per "
                  "key in a `lua_shared_dict`: **in memory only** (lost on restart, no "
                  "durability), **no barrier** (a stale write already in flight is not held), "
                  "**no audit trail**, a repeated Fencing-Token field not refused"),
    "haproxy": "plain reverse proxy, no fencing",
    "direct": "no proxy: wrk straight to the backend",
}
# Per-run figures of the advancing workloads, medians over the repetitions.
ADVANCE_FIGURES = ("fsync_per_s", "fsync_p50_us", "store_sync_us", "advances_per_s",
                   "advances_per_fsync", "advances_per_sync_write", "cpu_us_per_advance")
# Figures also compared repetition by repetition: fencegate against the peer run in the same
# repetition, seconds apart. The host's speed drifts between repetitions (other tenants), and a ratio within one
# repetition cancels most of that drift; its spread shows how far a single ratio can be trusted.
PAIRED_FIGURES = [
    ("cpu_us_per_req", "proxy CPU µs/req"),
    ("req_per_s", "req/s"),
]
# Figures of the streamed PUT, of the idle connections and of the many-keys workload.
STREAM_FIGURES = [
    ("mb_per_s", "MB/s (10^6 bytes)", 0),
    ("peak_rss_mib", "proxy peak RSS MiB (VmHWM, max of reps)", 1),
    ("cpu_s_per_gib", "proxy CPU s/GiB", 2),
]
IDLE_FIGURES = [
    ("held", "connections held", 0),
    ("rss_before_mib", "RSS before MiB", 1),
    ("rss_after_mib", "RSS with them open MiB", 1),
    ("kib_per_conn", "RSS KiB per idle connection", 1),
]
KEY_FIGURES = [
    ("req_per_s", "req/s", 0),
    ("p99_ms", "p99 latency ms", 3),
    ("cpu_us_per_req", "proxy CPU µs/req", 1),
    ("rss_mib", "proxy RSS MiB", 1),
    ("store_mib", "store on disk MiB", 1),
    ("fill_s", "fill time s (fence_fill)", 1),
]


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
            for key in ADVANCE_FIGURES:
                values = [run[key] for run in runs if run.get(key) is not None]
                if values:
                    figures[key] = _median(values)
            figures["non_2xx"] = sum(run["non_2xx"] for run in runs)
            figures["stale_409"] = sum(run.get("stale_409", 0) for run in runs)
            figures["socket_errors"] = sum(run["socket_errors"] for run in runs)
            per_proxy[proxy] = figures
        ratios = {}
        paired = {}
        if "fencegate" in per_proxy:
            for key, _, _ in FIGURES:
                ratios[key] = {base: _ratio(per_proxy["fencegate"][key], per_proxy[base][key])
                               for base in BASELINES if base in per_proxy}
            for key, _ in PAIRED_FIGURES:
                paired[key] = {base: _paired_ratios(samples[workload.name]["fencegate"],
                                                    samples[workload.name][base], key)
                               for base in BASELINES if base in per_proxy}
        floor = (_floor(samples[workload.name]["fencegate"], samples[workload.name]["direct"])
                 if workload.floor and "fencegate" in per_proxy and "direct" in per_proxy
                 else None)
        summary["workloads"][workload.name] = {
            "title": workload.title, "advances": workload.advances,
            "proxies": per_proxy, "fencegate_over": ratios, "paired": paired,
            "floor": _with_nginx_p50(floor, per_proxy)}
    return summary


def _floor(fencegate_runs, direct_runs):
    """One connection advancing one key: each advance is one sync, then one backend round
    trip, so its floor is the raw fdatasync latency (the probe around fencegate's run) plus
    direct's p50 latency in the same repetition. Medians over the repetitions, in µs, of the
    floor, of fencegate's p50 and of their difference taken within each repetition."""
    reps = [(f["fsync_p50_us"], d["p50_ms"] * 1000, f["p50_ms"] * 1000, f.get("store_sync_us"))
            for f, d in zip(fencegate_runs, direct_runs) if f.get("fsync_p50_us") is not None]
    if not reps:
        return None
    over = [r[2] - r[0] - r[1] for r in reps]
    return {"sync_us": _median([r[0] for r in reps]), "direct_us": _median([r[1] for r in reps]),
            "store_sync_us": _median([r[3] for r in reps if r[3] is not None]),
            "floor_us": _median([r[0] + r[1] for r in reps]),
            "fencegate_us": _median([r[2] for r in reps]),
            "over_floor_us": _median(over), "over_floor_min_us": min(over),
            "over_floor_max_us": max(over)}


def _with_nginx_p50(floor, per_proxy):
    """Adds plain nginx's p50 of the same request: a round trip through a proxy on the other
    CPU, which direct (wrk and backend on one CPU) does not pay."""
    if floor is not None and "nginx" in per_proxy:
        p50 = per_proxy["nginx"]["p50_ms"]
        floor["nginx_us"] = p50 * 1000 if p50 is not None else None
    return floor


def summarize_stream(runs):
    """{proxy: figures}: median throughput and CPU, highest peak RSS over the repetitions."""
    summary = {}
    for proxy, samples in runs.items():
        figures = {key: _median([r[key] for r in samples if key in r])
                   for key, _, _ in STREAM_FIGURES}
        peaks = [r["peak_rss_mib"] for r in samples if "peak_rss_mib" in r]
        figures["peak_rss_mib"] = max(peaks) if peaks else None
        summary[proxy] = figures
    return summary


def summarize_keys(results):
    """{keys: figures}: medians of the repetitions, with the fill's figures, and for every count
    but the first its ratio to the first within each repetition ("paired")."""
    base_runs = next(iter(results.values()))["runs"] if results else []
    return {keys: {**{key: _median([r[key] for r in result["runs"] if r.get(key) is not None])
                      for key in ("req_per_s", "p99_ms", "cpu_us_per_req", "rss_mib")},
                   "store_mib": result["store_mib"], "fill_s": result["fill_s"],
                   "non_2xx": sum(r["non_2xx"] for r in result["runs"]),
                   "socket_errors": sum(r["socket_errors"] for r in result["runs"]),
                   "paired": {key: _paired_ratios(result["runs"], base_runs, key)
                              for key in ("req_per_s", "cpu_us_per_req")}}
            for keys, result in results.items()}


def write(summary, raw, meta, md_path, json_path):
    json_path.write_text(json.dumps({"meta": meta, "summary": summary, "samples": raw}, indent=2))
    text = markdown(summary, meta)
    md_path.write_text(text)
    return text


def markdown(summary, meta):
    lines = [
        f"Command: `{meta['command']}`  ",
        f"Commit {meta['commit']}, {meta['date']}; {meta['reps']} interleaved repetitions "
        f"(run order rotating) of {meta['duration_s']} s, medians; proxy on CPU {meta['proxy_cpu']}, backend and wrk on "
        f"CPU {meta['load_cpu']}; callgrind: {meta['callgrind']}.",
    ]
    lines += _peer_notes(meta.get("proxies", []))
    if summary["workloads"]:
        lines += _request_tables(summary)
    if summary.get("stream"):
        lines += _stream_table(summary["stream"], meta)
    if summary.get("idle"):
        lines += _idle_table(summary["idle"], meta)
    if summary.get("many_keys"):
        lines += _keys_table(summary["many_keys"], meta)
    return "\n".join(lines) + "\n"


def _ratio_header(proxies, bases, first="figure"):
    return ["", f"| {first} | " + " | ".join(proxies) + "".join(f" | fencegate/{b}" for b in bases)
            + " |", "|---|" + "---:|" * (len(proxies) + len(bases))]


def _stream_table(stream, meta):
    proxies = list(stream)
    bases = [b for b in BASELINES if b in proxies] if "fencegate" in proxies else []
    lines = ["", f"**Streamed PUT** of {meta['stream_bytes'] / (1 << 30):g} GiB, one connection, "
             f"{meta['reps']} repetitions interleaved (targets: fencegate/direct MB/s >= 0.8, "
             "fencegate peak RSS < 100 MB):"]
    lines += _ratio_header(proxies, bases)
    for key, label, decimals in STREAM_FIGURES:
        values = [_fmt(stream[p].get(key), decimals) for p in proxies]
        ratios = [_fmt(_ratio(stream["fencegate"].get(key), stream[b].get(key)), 2) for b in bases]
        if all(v == "—" for v in values):
            continue
        lines.append(f"| {label} | " + " | ".join(values + ratios) + " |")
    return lines


def _idle_table(idle_results, meta):
    proxies = list(idle_results)
    bases = [b for b in BASELINES if b in proxies] if "fencegate" in proxies else []
    lines = ["", f"**Idle keep-alive connections**: {meta['idle_connections']:,} opened to each "
             "proxy, one GET on each, then left idle; RSS before and with them open, divided by "
             f"those still open (target: fencegate <= 16 KiB). Open-file limit "
             f"{meta['open_files']:,}:"]
    lines += _ratio_header(proxies, bases)
    for key, label, decimals in IDLE_FIGURES:
        values = [_fmt(idle_results[p].get(key), decimals) for p in proxies]
        ratios = [_fmt(_ratio(idle_results["fencegate"].get(key), idle_results[b].get(key)), 2)
                  if key == "kib_per_conn" else "" for b in bases]
        lines.append(f"| {label} | " + " | ".join(values + ratios) + " |")
    return lines


def _keys_table(many_keys, meta):
    counts = list(many_keys)
    base = counts[0]
    lines = ["", "**Fence keys in the store**: fencegate on a store pre-filled with each number of "
             "keys, PUT 1 KiB at the current token on keys drawn at random from all of them, "
             f"{meta['reps']} repetitions interleaved (target: req/s within 10 % of the "
             f"{base:,}-key case, RSS bounded by the block cache):"]
    lines += ["", "| figure | " + " | ".join(f"{k:,} keys" for k in counts)
              + "".join(f" | {k:,} / {base:,}" for k in counts[1:]) + " |",
              "|---|" + "---:|" * (2 * len(counts) - 1)]
    for key, label, decimals in KEY_FIGURES:
        values = [_fmt(many_keys[k].get(key), decimals) for k in counts]
        ratios = [_fmt(_ratio(many_keys[k].get(key), many_keys[base].get(key)), 2)
                  for k in counts[1:]]
        lines.append(f"| {label} | " + " | ".join(values + ratios) + " |")
    for k in counts[1:]:
        paired = many_keys[k].get("paired") or {}
        figures = [f"{label} {r['median']:.2f} ({r['min']:.2f}–{r['max']:.2f})"
                   for key, label in (("req_per_s", "req/s"), ("cpu_us_per_req", "CPU µs/req"))
                   if (r := paired.get(key))]
        if figures:
            lines += ["", f"{k:,} / {base:,} within each repetition (median, lowest–highest): "
                      + ", ".join(figures) + "."]
    failures = [f"{k:,} keys: {f['non_2xx']} non-2xx, {f['socket_errors']} socket errors"
                for k, f in many_keys.items() if f["non_2xx"] or f["socket_errors"]]
    lines += ["", "Failed requests: " + ("; ".join(failures) if failures else "none") + "."]
    return lines


def _request_tables(summary):
    proxies = list(next(iter(summary["workloads"].values()))["proxies"])
    bases = [b for b in BASELINES if b in proxies] if "fencegate" in proxies else []
    lines = [
        "",
        "| workload | figure | " + " | ".join(proxies) + "".join(f" | fencegate/{b}" for b in bases)
        + " |",
        "|---|---|" + "---:|" * (len(proxies) + len(bases)),
    ]
    for name, workload in summary["workloads"].items():
        for key, label, decimals in FIGURES:
            if key == "instructions_per_req":
                continue  # its own table below
            values = [_fmt(workload["proxies"][p][key], decimals) for p in proxies]
            ratios = [_fmt(workload["fencegate_over"][key].get(b), 2) for b in bases]
            if all(v == "—" for v in values):
                continue
            lines.append(f"| {name} | {label} | " + " | ".join(values + ratios) + " |")
    lines += _instructions_table(summary, proxies, bases)
    lines += _paired_table(summary)
    lines += ["", "Workloads: " + "; ".join(
        f"`{name}` = {w['title']}" for name, w in summary["workloads"].items()) + "."]
    lines += _advances_table(summary)
    lines += _floor_table(summary)
    failures = [f"{n}/{p}: {f['non_2xx'] - f['stale_409']} non-2xx, "
                f"{f['socket_errors']} socket errors"
                for n, w in summary["workloads"].items() for p, f in w["proxies"].items()
                if f["non_2xx"] - f["stale_409"] or f["socket_errors"]]
    lines += ["", "Failed requests (stale 409s apart): "
              + ("; ".join(failures) if failures else "none") + "."]
    stale = [f"{n}/{p}: {f['stale_409']:,}" for n, w in summary["workloads"].items()
             for p, f in w["proxies"].items() if f["stale_409"]]
    if stale:
        lines += ["", "Stale 409s (a later token of the same key reached the fence first, so "
                  "the earlier write is stale by the rules; counted by lua/put_hot.lua, not "
                  "errors): " + "; ".join(stale) + "."]
    return lines


def _peer_notes(proxies):
    return ["", "Peers: " + "; ".join(f"`{p}` = {PEER_NOTES[p]}" for p in proxies
                                      if p in PEER_NOTES) + "."]


def _instructions_table(summary, proxies, bases):
    """Instructions per request under callgrind, a row per counted workload."""
    counted = {n: w for n, w in summary["workloads"].items()
               if any(f["instructions_per_req"] for f in w["proxies"].values())}
    if not counted:
        return []
    shown = [p for p in proxies if p != "direct"]
    ratio_bases = [b for b in bases if b != "direct"]
    lines = ["", "Instructions per request (callgrind; the most repeatable figure):", "",
             "| workload | " + " | ".join(shown) + "".join(f" | fencegate/{b}" for b in ratio_bases)
             + " |", "|---|" + "---:|" * (len(shown) + len(ratio_bases))]
    for name, workload in counted.items():
        values = [_fmt(workload["proxies"][p]["instructions_per_req"], 0) for p in shown]
        ratios = [_fmt(workload["fencegate_over"]["instructions_per_req"].get(b), 2)
                  for b in ratio_bases]
        lines.append(f"| {name} | " + " | ".join(values + ratios) + " |")
    return lines


def _advances_table(summary):
    """Durable advances of fencegate next to the disk's raw sync rate, and the CPU per advance
    of fencegate and of the in-memory nginx_lua fence."""
    advancing = {n: w for n, w in summary["workloads"].items()
                 if w["advances"] and "fencegate" in w["proxies"]}
    if not advancing:
        return []
    lua = "nginx_lua" in next(iter(advancing.values()))["proxies"]
    lines = ["", "| durable advances | fencegate advances/s | raw fdatasync/s (4 KiB overwrite "
             "of a preallocated file, same disk, around each run) | raw fdatasync µs (p50) | "
             "advances / fdatasync | advances per synced write (group commit, from /metrics) | "
             "fencegate's own synced writes µs (mean, from /metrics) | fencegate CPU µs/advance" + (" | nginx_lua CPU µs/advance (in memory)" if lua else "")
             + " |", "|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if lua else "")]
    for name, workload in advancing.items():
        figures = workload["proxies"]["fencegate"]
        cells = [_fmt(figures.get("advances_per_s"), 0), _fmt(figures.get("fsync_per_s"), 0),
                 _fmt(figures.get("fsync_p50_us"), 0), _fmt(figures.get("advances_per_fsync"), 2),
                 _fmt(figures.get("advances_per_sync_write"), 1),
                 _fmt(figures.get("store_sync_us"), 0), _fmt(figures.get("cpu_us_per_advance"), 1)]
        if lua:
            cells.append(_fmt(workload["proxies"]["nginx_lua"].get("cpu_us_per_advance"), 1))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "Advances per synced write and CPU per advance do not move with the disk; "
              "advances / fdatasync does (a slow disk moment inflates it). Advances count 2xx "
              "answers only (a stale 409 advances nothing)."]
    return lines


def _floor_table(summary):
    rows = {n: w["floor"] for n, w in summary["workloads"].items() if w.get("floor")}
    if not rows:
        return []
    lines = ["", "**One connection advancing one key**: floor = raw fdatasync p50 + direct p50 of "
             "the same request, both in the same repetition (target: fencegate p50 ≤ floor + "
             "60 µs); medians over the repetitions, the difference taken within each:", "",
             "| workload | raw fdatasync µs | direct p50 µs | floor µs | fencegate p50 µs | "
             "fencegate − floor µs (lowest–highest) | ≤ 60 µs | for reference: fencegate's own "
             "synced writes µs (mean) | nginx p50 µs (plain proxying) |",
             "|---|---:|---:|---:|---:|---:|---|---:|---:|"]
    for name, floor in rows.items():
        lines.append(f"| {name} | {_fmt(floor['sync_us'], 0)} | {_fmt(floor['direct_us'], 0)} | "
                     f"{_fmt(floor['floor_us'], 0)} | {_fmt(floor['fencegate_us'], 0)} | "
                     f"{_fmt(floor['over_floor_us'], 0)} ({_fmt(floor['over_floor_min_us'], 0)}"
                     f"–{_fmt(floor['over_floor_max_us'], 0)}) | "
                     + ("yes" if floor["over_floor_us"] <= 60 else "no")
                     + f" | {_fmt(floor.get('store_sync_us'), 0)}"
                     + f" | {_fmt(floor.get('nginx_us'), 0)} |")
    return lines


def _paired_ratios(fencegate_runs, peer_runs, key):
    """Median, lowest and highest of fencegate/peer within each repetition (None without any)."""
    values = [_ratio(f.get(key), p.get(key)) for f, p in zip(fencegate_runs, peer_runs)]
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def _paired_table(summary):
    workloads = {n: w for n, w in summary["workloads"].items() if w.get("paired")}
    if not workloads:
        return []
    bases = [b for b in BASELINES if b in next(iter(workloads.values()))["proxies"]]
    lines = ["", "Ratios within each repetition (fencegate and the peer measured within seconds "
             "of each other): median, and lowest–highest over the repetitions:", "",
             "| workload | figure | " + " | ".join(f"fencegate/{b}" for b in bases) + " |",
             "|---|---|" + "---:|" * len(bases)]
    for name, workload in workloads.items():
        for key, label in PAIRED_FIGURES:
            cells = []
            for base in bases:
                r = workload["paired"].get(key, {}).get(base)
                cells.append("—" if r is None else
                             f"{r['median']:.2f} ({r['min']:.2f}–{r['max']:.2f})")
            if all(c == "—" for c in cells):
                continue
            lines.append(f"| {name} | {label} | " + " | ".join(cells) + " |")
    return lines


def _median(values):
    return statistics.median(values) if values else None


def _ratio(a, b):
    return a / b if a is not None and b else None


def _fmt(value, decimals):
    if value is None:
        return "—"
    return f"{value:,.{decimals}f}"
