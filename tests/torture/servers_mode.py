"""The http-servers mode (issue 27): one fencegate in front of three servers of one http backend
(three recording backends that append to one applied log, as three front ends of one store,
each behind its own fault-injecting relay), balanced round robin, with health checks and
outlier ejection. One server is killed (its port refuses, its connections are reset) at 30% of
the load and started again on the same port at 60%. The checker's invariant must hold
throughout; the mode also reports the failover figures: writes that failed while the server was
down, retries onto another server, and how long the gateway took to see the server back."""

import asyncio
import json
import time

from recording_backend import RecordingBackend
from relays import BackendRelay

MODE = "http-servers"
SERVERS = 3

CONFIG = """\
threads: 2
access_log:
  path: "{access_log}"
timeouts:
  barrier_wait: 6s
  shutdown_drain: 5s
backends:
  api:
    kind: http
    servers:
{servers}
    policy: round_robin
    connect_timeout: 2s
    response_timeout: 4s
    forward_token_header: Fencing-Token
    health_check:
      path: /health
      interval: 200ms
      timeout: 1s
      healthy_threshold: 2
      unhealthy_threshold: 3
    outlier:
      consecutive_failures: 5
      base_ejection_time: 1s
      max_ejection_time: 5s
routes:
  - name: kv
    prefix: /kv/
    backend: api
    fence_key: "kv:{{segment:2}}"
"""


class Servers:
    """The three servers: a recording backend each, all appending to `applied`, each reached
    through a relay whose port is the server's url."""

    def __init__(self, seed, applied):
        self.backends = [RecordingBackend(f"{seed}/server{i}", applied, "Fencing-Token")
                         for i in range(SERVERS)]
        self.relays = []

    async def start(self, seed):
        for i, backend in enumerate(self.backends):
            await backend.start()
            relay = BackendRelay(backend.port, f"{seed}/server{i}")
            await relay.start()
            self.relays.append(relay)

    def config(self, access_log):
        servers = "\n".join(f"      - http://127.0.0.1:{relay.port}" for relay in self.relays)
        return CONFIG.format(access_log=access_log, servers=servers)

    def url(self, i):
        return f"http://127.0.0.1:{self.relays[i].port}"

    def faults(self):
        total = {}
        for backend in self.backends:
            for fault, n in backend.faults.items():
                total[fault] = total.get(fault, 0) + n
        return dict(sorted(total.items()))

    async def stop(self):
        for relay in self.relays:
            if relay.port:
                await relay.stop()
        for backend in self.backends:
            if backend.port:
                await backend.stop()


async def admin_get(port, target):
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
    try:
        writer.write(f"GET {target} HTTP/1.1\r\nHost: admin\r\nConnection: close\r\n\r\n"
                     .encode())
        text = (await asyncio.wait_for(reader.read(-1), 10)).decode()
    finally:
        writer.transport.abort()
    head, _, body = text.partition("\r\n\r\n")
    return int(head.split(" ", 2)[1]), body


async def server_state(admin_port, url):
    """What /admin/backends says of the server `url` of backend api: (usable, ejections)."""
    status, body = await admin_get(admin_port, "/admin/backends")
    if status != 200:
        raise RuntimeError(f"/admin/backends answered {status}: {body[:200]}")
    for backend in json.loads(body)["backends"]:
        if backend["name"] != "api":
            continue
        for server in backend["servers"]:
            if server["url"] == url:
                return server["usable"], server["ejections"]
    raise RuntimeError(f"/admin/backends does not list {url}")


class ServerKill:
    """Kills server `victim` at `start` seconds into the load and starts it again `length`
    seconds later, noting when the gateway saw it go and come back."""

    def __init__(self, servers, gateway, start, length, victim=1):
        self.servers = servers
        self.gateway = gateway
        self.start = start
        self.length = length
        self.victim = victim
        self.killed_at = self.restarted_at = None
        self.figures = {}

    async def _until(self, usable, deadline):
        """Seconds until the gateway reports the victim `usable` (polled every 50 ms)."""
        began = time.monotonic()
        url = self.servers.url(self.victim)
        while time.monotonic() < deadline:
            state, _ = await server_state(self.gateway.admin_port, url)
            if state == usable:
                return time.monotonic() - began
            await asyncio.sleep(0.05)
        return None

    async def run(self, load_started):
        await asyncio.sleep(max(0.0, load_started + self.start - time.monotonic()))
        relay = self.servers.relays[self.victim]
        await relay.kill()
        self.killed_at = time.monotonic()
        seen_down = await self._until(False, self.killed_at + self.length)
        self.figures["seconds from kill to ejection"] = (
            round(seen_down, 3) if seen_down is not None else "not seen")
        await asyncio.sleep(max(0.0, self.killed_at + self.length - time.monotonic()))
        await relay.start()
        self.restarted_at = time.monotonic()
        back = await self._until(True, self.restarted_at + 30)
        self.figures["seconds from restart to back in the pool"] = (
            round(back, 3) if back is not None else "not back within 30 s")


def check(report, kill, answers, gateway_metrics):
    """The mode's own figures, and failures: a server that never left the pool, or never came
    back, fails the run."""
    report.figures.update(kill.figures)
    if kill.killed_at is not None and kill.restarted_at is not None:
        report.figures["copies failed (5xx/none) while the server was down"] = sum(
            1 for a in answers.values()
            if (a[0] is None or a[0] >= 500) and kill.killed_at <= a[1] <= kill.restarted_at)
    for name in ("backend_retries_connect_failed", "backend_no_healthy"):
        report.figures[f"gateway {name}"] = int(gateway_metrics.get(name, 0))
    if kill.figures.get("seconds from kill to ejection") == "not seen":
        report.violate("server-not-ejected", "the killed server stayed usable while it was down")
    back = kill.figures.get("seconds from restart to back in the pool")
    if not isinstance(back, float):
        report.violate("server-not-back", f"the restarted server: {back}")
