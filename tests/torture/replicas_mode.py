"""The `replicas` torture mode's parts (issue 7): a real 3-member etcd cluster on loopback, N
fencegate replicas with `store: {kind: etcd}` in front of one recording http backend (it checks
no tokens, so only the gateways can keep writes in order), and a fault schedule:

  kill-replica      kill -9 one replica mid-load, start a new one in its place later;
  kill-etcd-leader  kill -9 the etcd leader (found with `etcdctl endpoint status`), restart it;
  cut-replica       one replica loses etcd (every connection to every member goes through a
                    pausable relay that then black-holes traffic) while it still reaches the
                    backend; reconnected later.
  join-replica      one more replica (listed in every peers block from the start) is started
                    mid-load; rebalancing hands it its share of the shards. The run fails
                    unless it owns some at the end.
  busy-etcd         etcd healthy but busy, on top of the load (run it with many workers and
                    resources): for the fault's length a separate process (etcd_load.py) puts
                    into etcd as fast as it answers, and each replica's relays hold every kv
                    request (range, txn, put, delete) 0.5-0.95 s before passing it on, as a
                    saturated etcd answers late, within the replicas' request_timeout (1 s)
                    so nothing fails over; lease calls pass at once. A replica whose renewals
                    waited behind its reads let its lease lapse; the run fails if any replica
                    self-fenced (fencegate_cluster_self_fence_events).

Layouts (how writes reach replicas):
  shared       every resource through every replica: a lock holder writes through replica
               token % N (so a zombie and its successor always go through different replicas)
               and moves to the next replica when a write fails (as behind a load balancer).
               Needs shard ownership (docs/ARCHITECTURE.md "Several replicas") to be safe;
               without it this is the control that must find violations.
  partitioned  each resource through one replica only (resource index % N), what "one active
               gateway per prefix" (docs/REPLICAS.md) does today.
With --cluster each replica's config gets a `cluster:` block (shard ownership, forwarding,
self-fencing, quarantine), under which the shared layout must be safe.

Availability, per fault, on the resources it touches: the longest stretch without an
acknowledged write that overlaps the fault (from its start to its repair; the same figure
outside faults is printed as the baseline), and how long writes were refused: from the first
to the last fencegate 503 or unanswered copy, up to 10 s after the repair (a shard that moved
stays refused for the lease TTL plus its quarantine).
"""

import asyncio
import json
import os
import random
import sys
import signal
import time

import checker
from gateway import CONFIG_HEAD, HTTP_BACKEND, Gateway
from lock_issuer import LockIssuer
from loopback import LoopbackServer
from recording_backend import AppliedLog, RecordingBackend
from relays import BackendRelay, ClientRelay
from workers import Workload

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from free_port import free_port  # noqa: E402

FAULTS = ("none", "kill-replica", "kill-etcd-leader", "cut-replica", "join-replica", "busy-etcd")
LAYOUTS = ("partitioned", "shared")

# busy-etcd: how long a relay holds a kv request (seconds), below the replicas' request_timeout
# (1 s) so it is answered late rather than failed over; two such reads in a row take longer
# than a third of the lease TTL (2 s in the ctest).
BUSY_HOLD = (0.5, 0.95)

# The http torture config with the fences in etcd. request_timeout / operation_timeout are short
# (300ms / 1500ms) so an unreachable member is left quickly and a replica without etcd answers
# 503 within 1.5 s; busy-etcd uses the defaults (1s / 3s) and holds requests below them.
REPLICA_CONFIG = CONFIG_HEAD + """\
store:
  kind: etcd
  prefix: /torture/
  request_timeout: {request_timeout}
  operation_timeout: {operation_timeout}
  endpoints:
{endpoints}
locks:
  enabled: false
""" + HTTP_BACKEND

# Shard ownership (docs/ARCHITECTURE.md "Several replicas"): every replica knows every other's
# traffic address, so each listens on a port fixed before the start (kept across a restart).
CLUSTER_BLOCK = """\
cluster:
  name: {name}
  shards: 16
  lease_ttl: {lease_ttl}s
  peers:
{peers}
"""



class EtcdMember:
    def __init__(self, name, data_dir):
        self.name = name
        self.data_dir = data_dir
        self.client_port = free_port()
        self.peer_port = free_port()
        self.process = None


class EtcdCluster:
    """The real etcd (Debian etcd-server) on loopback, ephemeral ports, data in the run dir."""

    def __init__(self, run_dir, members=3):
        self.dir = os.path.join(run_dir, "etcd")
        os.makedirs(self.dir)
        self.members = [EtcdMember(f"m{i}", os.path.join(self.dir, f"m{i}"))
                        for i in range(members)]
        self.initial = ",".join(f"{m.name}=http://127.0.0.1:{m.peer_port}" for m in self.members)

    def endpoints(self):
        return [f"127.0.0.1:{m.client_port}" for m in self.members]

    async def _spawn(self, member, state):
        client = f"http://127.0.0.1:{member.client_port}"
        peer = f"http://127.0.0.1:{member.peer_port}"
        log = open(os.path.join(self.dir, f"{member.name}.log"), "ab")
        member.process = await asyncio.create_subprocess_exec(
            "etcd", "--name", member.name, "--data-dir", member.data_dir,
            "--listen-client-urls", client, "--advertise-client-urls", client,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", self.initial, "--initial-cluster-state", state,
            "--initial-cluster-token", "fencegate-torture", "--heartbeat-interval", "50",
            "--election-timeout", "500", "--log-level", "warn",
            stdout=log, stderr=log)
        log.close()

    async def _healthy(self, member):
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", member.client_port), 2)
        except (OSError, asyncio.TimeoutError):
            return False
        try:
            writer.write(b"GET /health HTTP/1.1\r\nHost: etcd\r\nConnection: close\r\n\r\n")
            text = (await asyncio.wait_for(reader.read(-1), 5)).decode("latin-1")
            return " 200 " in text.split("\r\n", 1)[0] and '"true"' in text
        except (OSError, asyncio.TimeoutError):
            return False
        finally:
            writer.transport.abort()

    async def _wait_healthy(self, members, timeout=60):
        end = time.monotonic() + timeout
        for member in members:
            while not await self._healthy(member):
                if member.process.returncode is not None:
                    raise RuntimeError(f"etcd {member.name} exited; see {self.dir}")
                if time.monotonic() > end:
                    raise RuntimeError(f"etcd {member.name} not healthy after {timeout} s")
                await asyncio.sleep(0.1)

    async def start(self):
        for member in self.members:
            await self._spawn(member, "new")
        await self._wait_healthy(self.members)

    async def leader(self):
        """Index of the member that is leader now (etcdctl endpoint status)."""
        process = await asyncio.create_subprocess_exec(
            "etcdctl", "--endpoints", ",".join(self.endpoints()), "--command-timeout", "5s",
            "endpoint", "status", "-w", "json", stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=dict(os.environ, ETCDCTL_API="3"))
        out, err = await asyncio.wait_for(process.communicate(), 30)
        for entry in json.loads(out or b"[]"):
            status = entry["Status"]
            if status["header"]["member_id"] == status["leader"]:
                return self.endpoints().index(entry["Endpoint"])
        raise RuntimeError(f"etcdctl endpoint status found no leader: {err.decode()[-500:]}")

    def kill(self, index):
        self.members[index].process.send_signal(signal.SIGKILL)

    async def restart(self, index):
        member = self.members[index]
        await member.process.wait()
        await self._spawn(member, "existing")
        await self._wait_healthy([member])

    async def stop(self):
        for member in self.members:
            if member.process and member.process.returncode is None:
                member.process.terminate()
        for member in self.members:
            if member.process:
                try:
                    await asyncio.wait_for(member.process.wait(), 20)
                except asyncio.TimeoutError:
                    member.process.kill()
                    await member.process.wait()


class PausableRelay(LoopbackServer):
    """A TCP relay from one replica to one etcd member. Paused, it black-holes: bytes are dropped
    both ways and new connections are accepted but never connected through, as a partition does
    (the replica sees timeouts, not resets). Resumed, every connection that lived through the
    pause is closed (its stream lost bytes) and new ones pass again."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.paused = False
        self._connections = set()  # (down_writer, up_writer or None)

    def pause(self):
        self.paused = True

    def resume(self):
        self.paused = False
        for connection in list(self._connections):
            for w in connection:
                if w is not None:
                    w.transport.abort()

    async def stop(self):
        await super().stop()
        for connection in list(self._connections):
            for w in connection:
                if w is not None:
                    w.transport.abort()

    async def _serve(self, down_reader, down_writer):
        if self.paused:
            connection = (down_writer, None)
            self._connections.add(connection)
            try:
                while await down_reader.read(65536):
                    pass  # black hole
            except OSError:
                pass
            self._connections.discard(connection)
            down_writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            down_writer.transport.abort()
            return
        connection = (down_writer, up_writer)
        self._connections.add(connection)
        await asyncio.gather(self._pump(down_reader, up_writer, connection),
                             self._pump(up_reader, down_writer, connection))
        self._connections.discard(connection)

    async def _pump(self, reader, writer, connection):
        try:
            while True:
                chunk = await reader.read(65536)
                if not chunk:
                    break
                if not self.paused:
                    writer.write(chunk)
        except OSError:
            pass
        for w in connection:
            if w is not None:
                w.transport.abort()


class BusyRelay(LoopbackServer):
    """A TCP relay from one replica to one etcd member that, while `busy`, holds each kv request
    (etcd's JSON gateway: one request at a time per connection, Content-Length bodies) for
    `hold` seconds before passing it on; /v3/lease/ calls pass at once."""

    def __init__(self, upstream_port, seed, hold):
        self.upstream_port = upstream_port
        self.seed = seed
        self.hold = hold
        self.busy = False
        self.held = 0
        self._connections = 0

    async def _serve(self, down_reader, down_writer):
        rng = random.Random(f"{self.seed}/busy-relay/{self.upstream_port}/{self._connections}")
        self._connections += 1
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            down_writer.transport.abort()
            return

        async def requests():
            try:
                while True:
                    head = await down_reader.readuntil(b"\r\n\r\n")
                    length = 0
                    for line in head.split(b"\r\n"):
                        name, _, value = line.partition(b":")
                        if name.strip().lower() == b"content-length":
                            length = int(value)
                    body = await down_reader.readexactly(length)
                    if self.busy and not head.split(b" ", 2)[1].startswith(b"/v3/lease/"):
                        self.held += 1
                        await asyncio.sleep(rng.uniform(*self.hold))
                    up_writer.write(head + body)
            except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                pass  # the replica closed the connection (or sent what this does not parse)

        async def responses():
            try:
                while True:
                    chunk = await up_reader.read(65536)
                    if not chunk:
                        return
                    down_writer.write(chunk)
            except OSError:
                pass

        pumps = [asyncio.ensure_future(requests()), asyncio.ensure_future(responses())]
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pump in pumps:
                pump.cancel()
            down_writer.transport.abort()
            up_writer.transport.abort()


class Replicas:
    """N fencegate processes on one etcd cluster and one backend, each reaching etcd through its
    own pausable relays (or busy ones). `replace` starts a new process in a dead one's place;
    `join` starts one of the `spare` replicas every peers block lists."""

    def __init__(self, binary, run_dir, count, etcd, backend_port, cluster, lease_ttl, spare=0,
                 busy_seed=None):
        self.binary = binary
        self.cluster = cluster
        self.lease_ttl = lease_ttl
        self.run_dir = run_dir
        self.etcd = etcd
        self.backend_port = backend_port
        self.count = count
        self.busy_seed = busy_seed  # set: BusyRelays to etcd (busy-etcd) instead of pausable
        self.names = [f"g{i + 1}" for i in range(count + spare)]
        self.gateways = []
        self.etcd_relays = []  # per replica: one relay per etcd member (none: direct)
        self.restarts = 0
        self.ports = [free_port() if cluster else 0 for _ in self.names]

    def _gateway(self, index, name):
        endpoints = "\n".join(f"    - 127.0.0.1:{relay.port}" for relay in self.etcd_relays[index])
        busy = self.busy_seed is not None
        config = REPLICA_CONFIG.format(
            access_log=os.path.join(self.run_dir, f"access-{name}.log"), endpoints=endpoints,
            backend_port=self.backend_port, request_timeout="1s" if busy else "300ms",
            operation_timeout="3s" if busy else "1500ms")
        if self.cluster:
            config += CLUSTER_BLOCK.format(name=self.names[index], lease_ttl=self.lease_ttl,
                                           peers="\n".join(
                f"    {n}: 127.0.0.1:{p}" for n, p in zip(self.names, self.ports)))
        return Gateway(self.binary, self.run_dir, name, config,
                       listen=f"127.0.0.1:{self.ports[index]}")

    async def start(self):
        for _ in range(self.count):
            await self.join()

    async def join(self):
        """Starts the next replica; returns it."""
        index = len(self.gateways)
        relays = ([PausableRelay(m.client_port) for m in self.etcd.members]
                  if self.busy_seed is None else
                  [BusyRelay(m.client_port, self.busy_seed, BUSY_HOLD) for m in self.etcd.members])
        for relay in relays:
            await relay.start()
        self.etcd_relays.append(relays)
        gateway = self._gateway(index, self.names[index])
        await gateway.start()
        self.gateways.append(gateway)
        return gateway

    def kill(self, index):
        self.gateways[index].process.send_signal(signal.SIGKILL)

    async def settle(self, timeout=60):
        """With shard ownership: waits until every replica sees every shard owned and out of
        quarantine (GET /admin/cluster), so the load starts on a settled cluster; seconds."""
        started = time.monotonic()
        while True:
            views = [await admin_json(g.admin_port, "/admin/cluster") for g in self.gateways]
            if all(v is not None and v.get("shards") and all(
                    shard["state"] in ("owned", "peer") for shard in v["shards"]) for v in views):
                return time.monotonic() - started
            if time.monotonic() - started > timeout:
                raise RuntimeError(f"the cluster did not settle within {timeout} s: {views}")
            await asyncio.sleep(0.2)

    async def replace(self, index):
        await self.gateways[index].process.wait()
        self.restarts += 1
        name = f"{self.names[index]}-restart{self.restarts}"
        gateway = self._gateway(index, name)
        await gateway.start()
        self.gateways[index] = gateway
        return gateway

    def make_busy(self, busy):
        for relays in self.etcd_relays:
            for relay in relays:
                relay.busy = busy

    def held(self):
        return sum(relay.held for relays in self.etcd_relays for relay in relays)

    def cut(self, index, cut):
        for relay in self.etcd_relays[index]:
            relay.pause() if cut else relay.resume()

    async def stop(self):
        for gateway in self.gateways:
            await gateway.stop()
        for relays in self.etcd_relays:
            for relay in relays:
                await relay.stop()


async def admin_json(port, path):
    """The JSON body of GET `path` on an admin listener, or None if it did not answer 200."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
    except (OSError, asyncio.TimeoutError):
        return None
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: admin\r\nConnection: close\r\n\r\n"
                     .encode())
        text = (await asyncio.wait_for(reader.read(-1), 10)).decode()
    except (OSError, asyncio.TimeoutError):
        return None
    finally:
        writer.transport.abort()
    head, _, body = text.partition("\r\n\r\n")
    if " 200 " not in head.split("\r\n", 1)[0]:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


class FaultSchedule:
    """One fault at `start` seconds into the load, repaired `length` seconds later."""

    def __init__(self, kind, start, length, replicas, etcd, client_relays):
        self.kind = kind
        self.start = start
        self.length = length
        self.replicas = replicas
        self.etcd = etcd
        self.client_relays = client_relays
        self.victim = 0  # the replica killed or cut
        self.events = []  # (kind, begin, end) in monotonic time
        self.details = {}

    async def run(self, load_started):
        if self.kind == "none":
            return
        await asyncio.sleep(max(0.0, load_started + self.start - time.monotonic()))
        begin = time.monotonic()
        if self.kind == "kill-replica":
            self.replicas.kill(self.victim)
            await asyncio.sleep(self.length)
            gateway = await self.replicas.replace(self.victim)
            self.client_relays[self.victim].upstream_port = gateway.port
        elif self.kind == "kill-etcd-leader":
            leader = await self.etcd.leader()
            self.details["etcd leader killed"] = self.etcd.members[leader].name
            begin = time.monotonic()
            self.etcd.kill(leader)
            await asyncio.sleep(self.length)
            await self.etcd.restart(leader)
            self.details["etcd leader after"] = self.etcd.members[await self.etcd.leader()].name
        elif self.kind == "cut-replica":
            self.replicas.cut(self.victim, True)
            await asyncio.sleep(self.length)
            self.replicas.cut(self.victim, False)
        elif self.kind == "join-replica":
            gateway = await self.replicas.join()
            self.details["replica joined"] = gateway.name
            await asyncio.sleep(self.length)
        elif self.kind == "busy-etcd":
            self.replicas.make_busy(True)
            load = await asyncio.create_subprocess_exec(
                sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                             "etcd_load.py"),
                "--endpoints", ",".join(self.etcd.endpoints()), "--seconds", str(self.length),

                stdout=asyncio.subprocess.PIPE)
            out, _ = await load.communicate()
            self.replicas.make_busy(False)
            self.details["etcd load (puts besides the replicas')"] = json.loads(out or b"{}")
            self.details["kv requests held by the relays"] = self.replicas.held()
        self.events.append((self.kind, begin, time.monotonic()))


def pick_relay_for(layout, resources, count):
    """How a write reaches a replica (see the layouts above): (resource, token, retry) -> index."""
    if layout == "partitioned":
        return lambda resource, token, retry: resources.index(resource) % count
    return lambda resource, token, retry: (token + retry) % count


def affected_resources(layout, fault, resources, victim, count):
    if layout == "partitioned" and fault in ("kill-replica", "cut-replica"):
        return {r for i, r in enumerate(resources) if i % count == victim}
    return set(resources)


def availability(report, attempts, answers, events, affected, load_window):
    """Per fault, on the `affected` resources: the longest stretch without an acknowledged write
    that overlaps the fault (and the same outside faults, the baseline), and the refusals the
    fault caused: fencegate's own 503s (a problem+json body; the recording backend's injected
    503s have none) and copies no replica answered, from the fault's start to 10 s after its
    repair, with the time from the first of them to the last. Times are those of the answers
    the client relays recorded."""
    resource_of = {a.attempt: a.resource for a in attempts}
    mine = [(when, status, problem) for (attempt, _), (status, when, problem, _) in answers.items()
            if resource_of.get(attempt) in affected]
    acks = sorted(when for when, status, _ in mine
                  if isinstance(status, int) and 200 <= status < 300)
    begin_load, end_load = load_window
    marks = [begin_load] + [t for t in acks if begin_load <= t <= end_load] + [end_load]
    stretches = list(zip(marks, marks[1:]))
    baseline = max((b - a for a, b in stretches
                    if not any(a < end and b > begin for _, begin, end in events)), default=0.0)
    report.figures["longest stretch without an ack outside faults (s)"] = round(baseline, 3)
    for kind, begin, end in events:
        gap = max((b - a for a, b in stretches if a < end and b > begin), default=0.0)
        window = [(when, status, problem) for when, status, problem in mine
                  if begin <= when <= end + 10.0]
        refused = sorted(when for when, status, problem in window
                         if status is None or (status == 503 and problem))
        report.figures[f"{kind}: fault lasted (s)"] = round(end - begin, 3)
        report.figures[f"{kind}: longest stretch without an ack (s)"] = round(gap, 3)
        report.figures[f"{kind}: refused unavailable, first to last (s)"] = round(
            refused[-1] - refused[0], 3) if refused else 0.0
        report.figures[f"{kind}: answers until 10 s after repair"] = {
            "2xx": sum(1 for _, s, _ in window if isinstance(s, int) and 200 <= s < 300),
            "409": sum(1 for _, s, _ in window if s == 409),
            "503 from fencegate": sum(1 for _, s, p in window if s == 503 and p),
            "no answer": sum(1 for _, s, _ in window if s is None),
        }

async def check_cluster(report, fault, replicas):
    """Ownership figures of every live replica (GET /admin/cluster), and what the join-replica
    and busy-etcd faults must show: the joined replica owns shards (handed over to it), and no
    replica self-fenced while etcd was only busy."""
    views = {g.name: await admin_json(g.admin_port, "/admin/cluster") for g in replicas.gateways}
    report.figures["cluster (per replica)"] = {
        name: {key: (len(v[key]) if key == "owned_shards" else v.get(key))
               for key in ("owned_shards", "shards_gained", "shards_lost", "shards_handed_over",
                           "self_fence_events")} if v else None
        for name, v in views.items()}
    if fault == "join-replica":
        joined = replicas.gateways[-1]
        # Its share comes a lease TTL after it registered, then a quarantine later: wait for it
        # (bounded) rather than asking at whatever moment the load ended.
        end = time.monotonic() + 30
        view = views.get(joined.name)
        while not (view and view["owned_shards"]) and time.monotonic() < end:
            await asyncio.sleep(0.2)
            view = await admin_json(joined.admin_port, "/admin/cluster")
        if not (view and view["owned_shards"]):
            report.violate("rebalancing", f"the joined replica {joined.name} owns no shard: "
                           f"{view}")
    if fault == "busy-etcd":
        for name, view in views.items():
            if view is None or view["self_fence_events"]:
                report.violate("self-fenced under load",
                               f"replica {name} self-fenced while etcd was healthy: {view}")


async def run(args, run_dir, seed):
    """One run of the mode: returns the checker's report with the fault figures."""
    resources = [f"r{i}" for i in range(args.resources)]
    answers = {}
    etcd = EtcdCluster(run_dir)
    applied = AppliedLog(os.path.join(run_dir, "applied.jsonl"))
    backend = RecordingBackend(seed, applied, "Fencing-Token")
    backend_relay = BackendRelay(None, seed)
    replicas = None
    client_relays = []
    try:
        await etcd.start()
        await backend.start()
        backend_relay.upstream_port = backend.port
        await backend_relay.start()
        replicas = Replicas(args.fencegate, run_dir, args.replicas, etcd, backend_relay.port,
                            args.cluster, args.lease_ttl,
                            spare=1 if args.fault == "join-replica" else 0,
                            busy_seed=seed if args.fault == "busy-etcd" else None)
        await replicas.start()
        for gateway in replicas.gateways:
            relay = ClientRelay(gateway.name, gateway.port, seed, args.client_timeout, answers)
            await relay.start()
            client_relays.append(relay)

        settled = await replicas.settle() if args.cluster else None
        issuer = LockIssuer(args.lease)
        load_started = time.monotonic()
        workload = Workload(seed, issuer, client_relays, "/kv/", resources,
                            load_started + args.duration, args.max_writes, args.client_timeout,
                            args.pause_probability,
                            pick_relay_for(args.layout, resources, args.replicas))
        schedule = FaultSchedule(args.fault, args.duration * 0.3, args.fault_length, replicas,
                                 etcd, client_relays)
        faulting = asyncio.ensure_future(schedule.run(load_started))
        await workload.run(args.workers)
        await faulting  # a fault outlasting the load is still repaired before the checks
        load_ended = time.monotonic()
        for relay in client_relays:
            await relay.drain(timeout=90)

        report = checker.Report(f"replicas ({args.replicas} replicas, {args.layout}, "
                                f"fault {args.fault}"
                                + (", shard ownership)" if args.cluster else ")"))
        checker.count(report, workload, answers)
        checker.check_log(report, workload.attempts, answers, backend.log)
        report.figures["refused unavailable (503)"] = sum(
            1 for a in answers.values() if a[0] == 503)
        report.figures.update(schedule.details)
        if settled is not None:
            report.figures["cluster settled before the load after (s)"] = round(settled, 3)
        availability(report, workload.attempts, answers, schedule.events,
                     affected_resources(args.layout, args.fault, resources, schedule.victim,
                                        args.replicas),
                     (load_started, load_ended))
        report.figures["backend faults"] = dict(sorted(backend.faults.items()))
        faults = {}
        for relay in client_relays:
            for fault, n in relay.faults.items():
                faults[fault] = faults.get(fault, 0) + n
        report.figures["client relay faults"] = dict(sorted(faults.items()))
        report.figures["locks taken over after expiry"] = issuer.expiries
        metrics = {}
        for gateway in replicas.gateways:
            for name, value in (await gateway.metrics()).items():
                metrics[name] = metrics.get(name, 0) + int(value)
        report.figures["gateway metrics (live replicas)"] = dict(sorted(metrics.items()))
        if args.cluster:
            await check_cluster(report, args.fault, replicas)
        return report
    finally:
        for relay in client_relays:
            await relay.stop()
        if replicas:
            await replicas.stop()
        if backend_relay.port:
            await backend_relay.stop()
        if backend.port:
            await backend.stop()
        applied.close()
        await etcd.stop()
