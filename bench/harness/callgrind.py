"""Instructions per request: the proxy runs under callgrind, a fixed number of requests is
sent after a warm-up on the same keep-alive connections, and the instructions (Ir) counted
between a zero and a dump are divided by that number. Repeats to ~0.2% on these machines."""

import re
import subprocess
from pathlib import Path

from . import fixed_client, servers


def _control(action, pid):
    subprocess.run(["callgrind_control", action, str(pid)], check=True, capture_output=True,
                   timeout=120)


def _instructions_in_new_dump(prefix, pid, before):
    dumps = set(Path(prefix).parent.glob(f"{Path(prefix).name}.{pid}.*")) - before
    if len(dumps) != 1:
        raise RuntimeError(f"callgrind: expected one new dump for pid {pid}, found {sorted(dumps)}")
    match = re.search(r"^summary:\s*(\d+)", dumps.pop().read_text(), re.M)
    if not match:
        raise RuntimeError("callgrind: dump has no summary line")
    return int(match.group(1))


def instructions_per_request(name, workloads, workdir, cpu, backend_port, fencegate_bin,
                             requests, warmup, connections):
    """{workload name: Ir per request} for proxy `name`, one callgrind process for all."""
    prefix = Path(workdir) / f"callgrind-{name}"
    wrapper = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={prefix}.%p"]
    endpoint = servers.start_proxy(name, workdir, cpu, backend_port, fencegate_bin,
                                   wrapper=wrapper, tag="-callgrind")
    pid = endpoint.process.pid
    results = {}
    try:
        for workload in workloads:
            rotation = fixed_client.request_bytes(workload, endpoint.port)
            client = fixed_client.Client(endpoint.port, connections)
            try:
                # The warm-up covers the whole rotation: each key's first write (an advance
                # from no fence) is not counted.
                client.send(rotation, max(warmup, len(rotation)))
                before = set(prefix.parent.glob(f"{prefix.name}.{pid}.*"))
                _control("-z", pid)
                statuses = client.send(rotation, requests)
                _control("-d", pid)
            finally:
                client.close()
            if any(status >= 300 for status in statuses):
                raise RuntimeError(f"callgrind {name}/{workload.name}: statuses {statuses}")
            results[workload.name] = _instructions_in_new_dump(prefix, pid, before) / requests
    finally:
        endpoint.process.stop()
    return results
