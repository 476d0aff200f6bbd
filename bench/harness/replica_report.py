"""The replica rows' report (bench/replicas.py): medians of the interleaved repetitions, issue
29's targets marked met or not, as Markdown and JSON."""

import json
import statistics

# Figures of the setups' table, (key, label, format); a figure no run of a row has is "-".
FIGURES = [
    ("req_per_s", "req/s", "{:,.0f}"),
    ("p50_ms", "p50 latency ms", "{:.2f}"),
    ("p99_ms", "p99 latency ms", "{:.2f}"),
    ("advances_per_write", "advances per store write (synced write / etcd txn)", "{:.1f}"),
    ("round_trips_per_txn", "etcd round trips per advance txn", "{:.2f}"),
]
FORWARD_FIGURES = [
    ("req_per_s", "req/s", "{:,.0f}"),
    ("p50_ms", "p50 latency ms", "{:.3f}"),
    ("p99_ms", "p99 latency ms", "{:.3f}"),
    ("cpu_us_per_req", "replicas' CPU µs/req (sum of the 3, idle taken off)", "{:.1f}"),
    ("idle_cpu_ms_per_s", "replicas' idle CPU ms/s (taken off)", "{:.1f}"),
    ("forwards_per_req", "forwards per request", "{:.2f}"),
]
# Forwarding figures that are not a cost, so no forwarded/direct ratio.
NO_RATIO = ("idle_cpu_ms_per_s", "forwards_per_req")
# (what, (row, column) measured, (row, column) it is divided by or None, figure, sense, bound)
TARGETS = [
    ("First writes of fresh keys, 64 connections: etcd-3 / rocksdb-1 req/s",
     ("put_fresh_64", "etcd-3"), ("put_fresh_64", "rocksdb-1"), "req_per_s", ">=", 0.5),
    ("Advances of existing keys, 64 connections: etcd-3 / rocksdb-1 req/s",
     ("put_advance_64", "etcd-3"), ("put_advance_64", "rocksdb-1"), "req_per_s", ">=", 0.5),
    ("etcd round trips per advance txn, first writes (etcd-3, 64 connections)",
     ("put_fresh_64", "etcd-3"), None, "round_trips_per_txn", "<=", 1.05),
    ("etcd round trips per advance txn, advances (etcd-3, 64 connections)",
     ("put_advance_64", "etcd-3"), None, "round_trips_per_txn", "<=", 1.05),
    ("Advances on one connection: etcd-3 / raw etcd txn client req/s",
     ("put_advance_1", "etcd-3"), ("etcd_txn_1", "etcd-raw"), "req_per_s", ">=", 0.8),
    ("Forwarded / direct fenced PUT: replicas' CPU per request",
     ("put_current_1", "forwarded"), ("put_current_1", "direct"), "cpu_us_per_req", "<=", 1.3),
    ("Forwarded / direct fenced PUT: p50 latency, 1 connection",
     ("put_current_1", "forwarded"), ("put_current_1", "direct"), "p50_ms", "<=", 1.2),
    ("Forwarded / direct fenced PUT: p99 latency, 1 connection",
     ("put_current_1", "forwarded"), ("put_current_1", "direct"), "p99_ms", "<=", 1.2),
]


def medians(samples):
    """{(row, column): {figure: median over the runs that have it}}."""
    out = {}
    for cell, runs in samples.items():
        keys = {key for run in runs for key, value in run.items() if value is not None}
        out[cell] = {key: statistics.median(run[key] for run in runs
                                            if run.get(key) is not None) for key in keys}
    return out


def targets(samples, median):
    """Each target with its measured figure and met or not. A ratio is the median of the
    ratios within each repetition (the two runs seconds apart, so most of the host's drift
    between repetitions cancels), listed per repetition too; a plain figure is the median."""
    out = []
    for what, cell, base, figure, sense, bound in TARGETS:
        per_rep = []
        if base is None:
            value = median.get(cell, {}).get(figure)
        else:
            per_rep = [top[figure] / bottom[figure]
                       for top, bottom in zip(samples.get(cell, []), samples.get(base, []))
                       if top.get(figure) is not None and bottom.get(figure)]
            value = statistics.median(per_rep) if per_rep else None
        met = None if value is None else (value >= bound if sense == ">=" else value <= bound)
        out.append({"target": what, "measured": value, "per_rep": per_rep,
                    "bound": f"{sense} {bound}", "met": met})
    return out


def _cell(median, cell, key, fmt):
    value = median.get(cell, {}).get(key)
    return fmt.format(value) if value is not None else "-"


def markdown(median, marked, rows, columns, meta):
    lines = [f"# Replica rows ({meta['date']}, {meta['commit']})", "",
             f"`{meta['command']}`: {meta['reps']} interleaved repetition"
             f"{'s' if meta['reps'] != 1 else ''} of "
             f"{meta['duration_s']} s per run, medians; whole run {meta['elapsed_s']:.0f} s. "
             "Ratios within this run.", "",
             "| workload | figure | " + " | ".join(columns)
             + " | etcd-1/rocksdb-1 | etcd-3/rocksdb-1 |",
             "|---|---|" + "---:|" * (len(columns) + 2)]
    for row in rows:
        for key, label, fmt in FIGURES:
            values = [_cell(median, (row, c), key, fmt) for c in columns]
            if all(v == "-" for v in values):
                continue
            ratios = []
            for column in ("etcd-1", "etcd-3"):
                top = median.get((row, column), {}).get(key)
                base = median.get((row, "rocksdb-1"), {}).get(key)
                ratios.append(f"{top / base:.2f}" if key in ("req_per_s", "p50_ms", "p99_ms")
                              and top is not None and base else "")
            lines.append(f"| {row} | {label} | " + " | ".join(values)
                         + " | " + " | ".join(ratios) + " |")
    raw = ("etcd_txn_1", "etcd-raw")
    lines += ["", "Raw etcd client (wrk, `lua/etcd_txn.lua`, one txn per request to the leader, "
              "1 connection): " + ", ".join(f"{label} {_cell(median, raw, key, fmt)}"
                                            for key, label, fmt in FIGURES[:3]) + ".", "",
              "Forwarding (`put_current_1`: the fenced PUT at the current token on one "
              "connection, straight to its shard's owner or through a replica that forwards it):",
              "", "| figure | direct | forwarded | forwarded/direct |", "|---|---:|---:|---:|"]
    for key, label, fmt in FORWARD_FIGURES:
        direct = median.get(("put_current_1", "direct"), {}).get(key)
        forwarded = median.get(("put_current_1", "forwarded"), {}).get(key)
        ratio = (f"{forwarded / direct:.2f}" if key not in NO_RATIO and direct
                 and forwarded is not None else "")
        lines.append(f"| {label} | {_cell(median, ('put_current_1', 'direct'), key, fmt)} | "
                     f"{_cell(median, ('put_current_1', 'forwarded'), key, fmt)} | {ratio} |")
    lines += ["", "Issue 29's targets (a ratio: the median of the ratios within each repetition):",
              "", "| target | measured | per repetition | bound | met |", "|---|---:|---|---:|---|"]
    for target in marked:
        measured = target["measured"]
        lines.append(f"| {target['target']} | "
                     + (f"{measured:.2f}" if measured is not None else "-") + " | "
                     + ", ".join(f"{r:.2f}" for r in target["per_rep"])
                     + f" | {target['bound']} | "
                     + {True: "met", False: "not met", None: "not measured"}[target["met"]] + " |")
    lines += ["", f"Failed requests: {meta['failed'] or 'none'}."]
    return "\n".join(lines) + "\n"


def write(samples, rows, columns, meta, md_path, json_path):
    """Writes both reports; returns the Markdown."""
    median = medians(samples)
    marked = targets(samples, median)
    text = markdown(median, marked, rows, columns, meta)
    md_path.write_text(text)
    json_path.write_text(json.dumps({
        "meta": meta,
        "medians": {f"{row}|{column}": figures for (row, column), figures in median.items()},
        "targets": marked,
        "runs": {f"{row}|{column}": runs for (row, column), runs in samples.items()},
    }, indent=2) + "\n")
    return text
