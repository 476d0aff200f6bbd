"""Starts and stops the real fencegate binary, and reads its metrics."""

import asyncio
import os
import re
import signal

LISTENING = re.compile(r"^fencegate listening traffic=\S+:(\d+) admin=\S+:(\d+)$")

# The start of every mode's config (str.format templates, as the whole config is).
CONFIG_HEAD = """\
threads: 2
access_log:
  path: "{access_log}"
timeouts:
  barrier_wait: 6s
  shutdown_drain: 5s
"""

# response_timeout stays well above what the backend relay holds a piece back (0.2 s): a request
# fencegate has given up on must not reach the backend afterwards (see recording_backend.py).
HTTP_BACKEND = """\
backends:
  api:
    kind: http
    url: http://127.0.0.1:{backend_port}
    connect_timeout: 2s
    response_timeout: 4s
    forward_token_header: Fencing-Token
routes:
  - name: kv
    prefix: /kv/
    backend: api
    fence_key: "kv:{{segment:2}}"
"""

HTTP_CONFIG = CONFIG_HEAD + HTTP_BACKEND

FILESYSTEM_CONFIG = """\
threads: 2
access_log:
  path: "{access_log}"
timeouts:
  barrier_wait: 5s
  shutdown_drain: 5s
backends:
  files:
    kind: filesystem
    root: "{root}"
    io_threads: 2
    sync_writes: true
routes:
  - name: files
    prefix: /files/
    backend: files
    fence_key: "files:{{path}}"
"""


class Gateway:
    def __init__(self, binary, run_dir, name, config_text, listen="127.0.0.1:0"):
        self.binary = binary
        self.listen = listen
        self.name = name
        run_files = os.path.join(run_dir, name)
        os.makedirs(run_files)
        # A data dir of its own: the first start creates the fence store only in an empty one.
        self.data_dir = os.path.join(run_files, "data")
        self.config_path = os.path.join(run_files, "fencegate.yaml")
        with open(self.config_path, "w", encoding="utf-8") as f:
            f.write(config_text)
        self.stderr_path = os.path.join(run_files, "stderr.log")
        self.process = None
        self.port = None
        self.admin_port = None

    async def start(self, timeout=30):
        with open(self.stderr_path, "wb") as stderr:
            self.process = await asyncio.create_subprocess_exec(
                self.binary, "--config", self.config_path, "--listen", self.listen,
                "--admin-listen", "127.0.0.1:0", "--data-dir", self.data_dir,
                stdout=asyncio.subprocess.PIPE, stderr=stderr)

        async def wait_listening():
            while True:
                line = await self.process.stdout.readline()
                if not line:
                    raise RuntimeError(f"{self.name} exited before listening; see "
                                       f"{self.stderr_path}")
                match = LISTENING.match(line.decode().strip())
                if match:
                    return int(match.group(1)), int(match.group(2))

        self.port, self.admin_port = await asyncio.wait_for(wait_listening(), timeout)
        # Nothing else is printed on stdout; keep the pipe from filling anyway.
        self._stdout_drain = asyncio.ensure_future(self.process.stdout.read())

    async def metrics(self):
        """Sums of fencegate_writes_admitted_total, fencegate_writes_rejected_total{reason} and the
        backend failover counters (fencegate_backend_retries_total{reason},
        fencegate_backend_no_healthy_total)."""
        reader, writer = await asyncio.open_connection("127.0.0.1", self.admin_port)
        writer.write(b"GET /metrics HTTP/1.1\r\nHost: admin\r\nConnection: close\r\n\r\n")
        text = (await reader.read(-1)).decode()
        writer.close()
        figures = {"admitted": 0.0}
        for line in text.splitlines():
            if line.startswith("fencegate_writes_admitted_total"):
                figures["admitted"] += float(line.rsplit(" ", 1)[1])
            elif line.startswith("fencegate_writes_rejected_total"):
                reason = re.search(r'reason="([^"]+)"', line).group(1)
                figures["rejected_" + reason] = (figures.get("rejected_" + reason, 0.0)
                                                 + float(line.rsplit(" ", 1)[1]))
            elif line.startswith("fencegate_backend_retries_total"):
                reason = re.search(r'reason="([^"]+)"', line).group(1)
                figures["backend_retries_" + reason] = (
                    figures.get("backend_retries_" + reason, 0.0) + float(line.rsplit(" ", 1)[1]))
            elif line.startswith("fencegate_backend_no_healthy_total"):
                figures["backend_no_healthy"] = (figures.get("backend_no_healthy", 0.0)
                                                 + float(line.rsplit(" ", 1)[1]))
        return figures

    async def stop(self):
        """SIGTERM, then the exit status (0 = drained cleanly)."""
        if self.process is None or self.process.returncode is not None:
            return self.process.returncode if self.process else None
        self.process.send_signal(signal.SIGTERM)
        try:
            return await asyncio.wait_for(self.process.wait(), 30)
        except asyncio.TimeoutError:
            self.process.kill()
            return await self.process.wait()
