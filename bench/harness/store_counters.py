"""fencegate's embedded-store counters, read from its /metrics around a run: how many advances
each synced write (one fsync) carried, i.e. how well the store's group commit batches them, and
how long its own synced writes took."""

import re
import urllib.request

NAMES = ("fencegate_store_advances_total", "fencegate_store_sync_writes_total",
         "fencegate_store_sync_duration_seconds_sum", "fencegate_store_sync_duration_seconds_count")


def read(admin_port):
    """{counter name: value} of the store counters (0 for a counter not exposed)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/metrics", timeout=10) as r:
        text = r.read().decode()
    values = {}
    for name in NAMES:
        match = re.search(rf"^{name}(?:\{{\}})? ([0-9.e+]+)$", text, re.MULTILINE)
        values[name] = float(match.group(1)) if match else 0.0
    return values


def advances_per_sync_write(before, after):
    """Advances / synced writes between two read()s; None when no synced write happened."""
    writes = after[NAMES[1]] - before[NAMES[1]]
    return (after[NAMES[0]] - before[NAMES[0]]) / writes if writes else None


def mean_sync_us(before, after):
    """Mean duration of the store's synced writes between two read()s, in µs; None without any."""
    count = after[NAMES[3]] - before[NAMES[3]]
    return (after[NAMES[2]] - before[NAMES[2]]) * 1e6 / count if count else None
