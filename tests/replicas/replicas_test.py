"""Three real fencegate replicas (cluster: block, store kind etcd) on a real 3-member etcd cluster
(Debian etcd-server), all on loopback, with a recording HTTP backend written here (it keeps every
applied write and every truncated upload; no real server records that).

Each replica reaches every etcd member through its own TCP relay (written here), so one replica
can be cut off from etcd while it still reaches the backend.

The tests run in order on one cluster (docs/ARCHITECTURE.md "Several replicas"):
  a: writes through every replica for keys of every shard land; stale tokens are refused (409)
     whichever replica they hit.
  b: forwarding relays large Content-Length and chunked bodies unchanged (and measures the
     forwarding overhead).
  c: kill -9 of a shard's owner: the shard's writes are refused (503) until another replica owns
     it, which /admin/cluster shows going through quarantine; the new owner refuses a stale token
     it never saw (read from etcd) and admits the current one.
  d: a replica cut off from etcd self-fences: an upload in progress is cut off (the backend never
     applies it), its writes are refused with 503 problem+json although the backend is up, and
     the other replica takes over its shards.
  e: rebalancing: the cut-off replica reconnects and gets its share back from the other, then a
     third replica joins the running pair while writes go on; the shards spread as rendezvous
     hashing says, each moved shard handed over by its owner, and every write lands.
ReplicasTlsTest, on its own two replicas and one etcd member, with tls.traffic and cluster.tls:
  a write sent to a non-owner reaches the owner over HTTPS on pooled keep-alive connections (a
  handful of handshakes on the owner for many writes); the owner authorizes it again with the
  client's key, and neither the Fencegate-Forwarded-By field nor a replica's certificate grants
  anything.
Every wait is a bounded poll; nothing asserts on elapsed time except that a takeover cannot be
faster than the quarantine (a lower bound, which slowness cannot break)."""

import hashlib
import http.client
import http.server
import json
import os
import sys
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from free_port import free_port  # noqa: E402
from wait_until import wait_until as shared_wait_until  # noqa: E402

BINARY = os.environ.get("FENCEGATE_BINARY", "build/gateway/fencegate")
SHARDS = 8
LEASE_TTL_S = 2
RESPONSE_TIMEOUT_S = 2
QUARANTINE_S = LEASE_TTL_S + RESPONSE_TIMEOUT_S  # the default: lease_ttl + longest response_timeout
DEADLINE = 60
NAMES = ["r0", "r1", "r2"]



def wait_until(predicate, what, deadline=DEADLINE):
    return shared_wait_until(predicate, what, deadline, interval=0.05)


def request(port, method, path, headers=None, body=b"", timeout=20):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type", ""), response.read()
    finally:
        conn.close()


def fnv1a(text):
    h = 1469598103934665603
    for c in text.encode():
        h ^= c
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def shard_of(key):
    return fnv1a(key) % SHARDS


def mix(h):
    h ^= h >> 33
    h = (h * 0xff51afd7ed558ccd) & 0xFFFFFFFFFFFFFFFF
    h ^= h >> 33
    h = (h * 0xc4ceb9fe1a85ec53) & 0xFFFFFFFFFFFFFFFF
    h ^= h >> 33
    return h


def rendezvous(names):
    """shard -> the replica that should own it (lockstore/etcd/shard_ownership RendezvousOwner):
    what the cluster settles on once every member has been live for a lease TTL."""
    return {shard: max(sorted(names), key=lambda n: mix(fnv1a(f"{n}/{shard}")))
            for shard in range(SHARDS)}


def keys_per_shard(template="kv:k{}"):
    """One fence key (kv:kN, path /kv/kN/...) per shard."""
    found = {}
    n = 0
    while len(found) < SHARDS:
        found.setdefault(shard_of(template.format(n)), n)
        n += 1
    return found  # shard -> N


class Backend:
    """Applies complete writes in arrival order; records truncated uploads separately."""

    def __init__(self):
        self.lock = threading.Lock()
        self.applied = []    # (path, token, sha256 of the body)
        self.truncated = []  # paths whose body never arrived whole
        self.credentials = []  # paths that arrived with an Authorization field (never should)
        backend = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _body(self):
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    parts = []
                    while True:
                        line = self.rfile.readline()
                        if not line.endswith(b"\r\n"):
                            return None
                        size = int(line.split(b";")[0], 16)
                        chunk = self.rfile.read(size + 2)
                        if len(chunk) != size + 2:
                            return None
                        if size == 0:
                            return b"".join(parts)
                        parts.append(chunk[:-2])
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                return body if len(body) == length else None

            def do_PUT(self):
                body = self._body()
                token = int(self.headers.get("Fencing-Token", "-1"))
                with backend.lock:
                    if self.headers.get("Authorization") is not None:
                        backend.credentials.append(self.path)
                    if body is None:
                        backend.truncated.append(self.path)
                    else:
                        backend.applied.append((self.path, token, hashlib.sha256(body).hexdigest()))
                if body is None:
                    self.close_connection = True
                    return
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def last(self, path):
        with self.lock:
            for entry in reversed(self.applied):
                if entry[0] == path:
                    return entry
        return None

    def stop(self):
        self.server.shutdown()


class Relay:
    """A TCP relay to one etcd member that the test can cut (every connection closed, new ones
    closed at once)."""

    def __init__(self, target_port):
        self.target = target_port
        self.cut_off = False
        self.lock = threading.Lock()
        self.sockets = []
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.cut_off:
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target), timeout=2)
            except OSError:
                client.close()
                continue
            with self.lock:
                # Checked again under the lock: a cut() that ran while this connection was being
                # made did not see it, and must not leave it open.
                if self.cut_off:
                    client.close()
                    upstream.close()
                    continue
                self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source, sink):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        with self.lock:
            self.cut_off = True
            for s in self.sockets:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.sockets = []

    def reconnect(self):
        with self.lock:
            self.cut_off = False

    def close(self):
        self.cut()
        self.listener.close()


class Etcd:
    def __init__(self, workdir, members=3):
        self.members = []
        initial = []
        for i in range(members):
            m = {"name": f"e{i}", "client": free_port(), "peer": free_port()}
            initial.append(f"{m['name']}=http://127.0.0.1:{m['peer']}")
            self.members.append(m)
        for m in self.members:
            client = f"http://127.0.0.1:{m['client']}"
            peer = f"http://127.0.0.1:{m['peer']}"
            m["log"] = open(os.path.join(workdir, m["name"] + ".log"), "wb")
            m["proc"] = subprocess.Popen(
                ["etcd", "--name", m["name"], "--data-dir", os.path.join(workdir, m["name"]),
                 "--listen-client-urls", client, "--advertise-client-urls", client,
                 "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                 "--initial-cluster", ",".join(initial), "--initial-cluster-state", "new"],
                stdout=m["log"], stderr=subprocess.STDOUT, start_new_session=True)
        for m in self.members:
            wait_until(lambda m=m: self._healthy(m), f"etcd {m['name']} healthy")

    @staticmethod
    def _healthy(m):
        try:
            status, _, body = request(m["client"], "GET", "/health", timeout=2)
            return status == 200 and b'"true"' in body
        except OSError:
            return False

    def stop(self):
        for m in self.members:
            if m["proc"].poll() is None:
                os.killpg(m["proc"].pid, signal.SIGKILL)
                m["proc"].wait()
            m["log"].close()


CONFIG = """listen: 127.0.0.1:{port}
admin_listen: 127.0.0.1:{admin}
data_dir: {data}
threads: 2
access_log:
  path: ""
timeouts:
  barrier_wait: 5s
store:
  kind: etcd
  prefix: /replicas/
  request_timeout: 300ms
  operation_timeout: 1500ms
  endpoints: [{endpoints}]
locks:
  enabled: false
cluster:
  name: {name}
  shards: {shards}
  lease_ttl: {ttl}s
  peers: {{{peers}}}
{cluster_extra}backends:
  api:
    kind: http
    url: http://127.0.0.1:{backend}
    forward_token_header: Fencing-Token
    response_timeout: {response_timeout}s
  files:
    kind: filesystem
    root: {files}
routes:
  - name: files
    prefix: /files/
    backend: files
    fence_key: "fs:{{segment:2}}"
  - name: kv
    prefix: /kv/
    backend: api
    fence_key: "kv:{{segment:2}}"
{extra}"""


class Replica:
    def __init__(self, workdir, name, port, admin, peers, relays, backend_port, extra="",
                 cluster_extra="", peer_host="127.0.0.1"):
        self.name, self.port, self.admin = name, port, admin
        self.relays = relays
        config = os.path.join(workdir, name + ".yaml")
        with open(config, "w") as f:
            f.write(CONFIG.format(
                port=port, admin=admin, data=os.path.join(workdir, name), name=name,
                shards=SHARDS, ttl=LEASE_TTL_S, backend=backend_port,
                response_timeout=RESPONSE_TIMEOUT_S,
                files=os.path.join(workdir, "files"),
                endpoints=", ".join(f'"127.0.0.1:{r.port}"' for r in relays),
                peers=", ".join(f'{n}: "{peer_host}:{p}"' for n, p in peers.items()),
                extra=extra, cluster_extra=cluster_extra))
        self.log_path = os.path.join(workdir, name + ".out")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([BINARY, "--config", config], stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        wait_until(self._listening, f"replica {name} listening")

    def _listening(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"replica {self.name} exited:\n" + open(self.log_path).read())
        return b"fencegate listening" in open(self.log_path, "rb").read()

    def cluster(self):
        status, _, body = request(self.admin, "GET", "/admin/cluster", timeout=5)
        assert status == 200, body
        return json.loads(body)

    def metric(self, line_prefix):
        _, _, body = request(self.admin, "GET", "/metrics", timeout=5)
        total = 0.0
        for line in body.decode().splitlines():
            if line.startswith(line_prefix):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def put(self, n, token, body=b"x", suffix="doc", headers=None):
        all_headers = {"Fencing-Token": str(token)}
        all_headers.update(headers or {})
        return request(self.port, "PUT", f"/kv/k{n}/{suffix}", headers=all_headers, body=body)

    def alive(self):
        return self.proc.poll() is None

    def kill(self):
        if self.alive():
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self):
        if self.alive():
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


def owners(replicas):
    """shard -> the replica that reports it as owned (only when exactly one does)."""
    found = {}
    for r in replicas:
        for shard in r.cluster()["owned_shards"]:
            found.setdefault(shard, []).append(r.name)
    return {s: names[0] for s, names in found.items() if len(names) == 1}


class ReplicaClusterCase(unittest.TestCase):
    """What a test class of replicas starts in setUpClass (etcd, the backend, the replicas and
    the relays in front of them, a work directory) and stops once after its tests."""

    @classmethod
    def tearDownClass(cls):
        for r in cls.replicas.values():
            r.stop()
        for relays in cls.relays.values():
            for relay in relays:
                relay.close()
        cls.etcd.stop()
        cls.backend.stop()
        if os.environ.get("KEEP_REPLICAS_WORKDIR") is None:
            shutil.rmtree(cls.workdir, ignore_errors=True)


class ReplicasTest(ReplicaClusterCase):
    @classmethod
    def setUpClass(cls):
        cls.workdir = tempfile.mkdtemp(prefix="fencegate-replicas-")
        cls.etcd = Etcd(cls.workdir)
        cls.backend = Backend()
        ports = {n: free_port() for n in NAMES}
        cls.relays = {n: [Relay(m["client"]) for m in cls.etcd.members] for n in NAMES}
        cls.replicas = {}
        try:
            for n in NAMES:
                cls.replicas[n] = Replica(cls.workdir, n, ports[n], free_port(), ports,
                                          cls.relays[n], cls.backend.port)
            # Balanced, not only owned: a replica started a lease TTL after the first gets its
            # share by rebalancing, through a quarantine the tests would otherwise run into.
            wait_until(lambda: owners(cls.replicas.values()) == rendezvous(NAMES),
                       "every shard owned by the replica rendezvous hashing gives it")
        except BaseException:
            cls.tearDownClass()
            raise
        cls.keys = keys_per_shard()
        cls.token = 100

    def live(self):
        return [r for r in self.replicas.values() if r.alive()]

    def owner_of(self, n):
        return owners(self.live()).get(shard_of(f"kv:k{n}"))

    def test_a_writes_through_every_replica_land_and_stale_tokens_are_refused(self):
        for shard, n in self.keys.items():
            token = 1000
            for r in self.live():
                token += 1
                body = f"{r.name}:{shard}:{token}".encode()
                status, _, reply = r.put(n, token, body)
                self.assertEqual(status, 200, (r.name, shard, reply))
                self.assertEqual(self.backend.last(f"/kv/k{n}/doc"),
                                 (f"/kv/k{n}/doc", token, hashlib.sha256(body).hexdigest()))
            for r in self.live():
                status, content_type, reply = r.put(n, token - 1)
                self.assertEqual(status, 409, (r.name, shard, reply))
                self.assertEqual(content_type, "application/problem+json")
                self.assertEqual(json.loads(reply)["highest_token"], token)
        # The same through the filesystem adapter (one directory shared by the replicas).
        for shard, n in keys_per_shard("fs:fk{}").items():
            token = 1000
            for r in self.live():
                token += 1
                body = f"{r.name}:{shard}:{token}".encode()
                status, _, reply = request(r.port, "PUT", f"/files/fk{n}", body=body,
                                           headers={"Fencing-Token": str(token)})
                self.assertIn(status, (200, 201, 204), (r.name, shard, reply))
                with open(os.path.join(self.workdir, "files", f"fk{n}"), "rb") as f:
                    self.assertEqual(f.read(), body)
            for r in self.live():
                status, _, reply = request(r.port, "PUT", f"/files/fk{n}", body=b"stale",
                                           headers={"Fencing-Token": str(token - 1)})
                self.assertEqual(status, 409, (r.name, shard, reply))
        for r in self.live():
            self.assertGreater(r.metric('fencegate_cluster_forwards_total{result="relayed"}'), 0)

            self.assertEqual(r.metric("fencegate_cluster_shards_owned"),
                             len(r.cluster()["owned_shards"]))
        status, _, body = request(self.replicas["r0"].admin, "GET", "/readyz")
        self.assertEqual(status, 200, body)
        self.assertTrue(json.loads(body)["cluster_lease_valid"])

    def test_b_forwarding_relays_large_and_chunked_bodies(self):
        n = self.keys[0]
        owner = self.owner_of(n)
        other = next(r for r in self.live() if r.name != owner)
        large = os.urandom(3 * 1024 * 1024 + 17)
        status, _, reply = other.put(n, 2000, large, suffix="large")
        self.assertEqual(status, 200, reply)
        self.assertEqual(self.backend.last(f"/kv/k{n}/large"),
                         (f"/kv/k{n}/large", 2000, hashlib.sha256(large).hexdigest()))

        pieces = [os.urandom(100 * 1024 + i) for i in range(12)]
        conn = http.client.HTTPConnection("127.0.0.1", other.port, timeout=20)
        conn.request("PUT", f"/kv/k{n}/chunked", body=iter(pieces),
                     headers={"Fencing-Token": "2000"}, encode_chunked=True)
        response = conn.getresponse()
        self.assertEqual(response.status, 200, response.read())
        conn.close()
        self.assertEqual(self.backend.last(f"/kv/k{n}/chunked"),
                         (f"/kv/k{n}/chunked", 2000, hashlib.sha256(b"".join(pieces)).hexdigest()))

        # A forwarded request is not forwarded again (loop guard): sent to a non-owner with the
        # header, it is refused instead.
        status, content_type, reply = other.put(n, 2000, headers={"Fencegate-Forwarded-By": "x"})
        self.assertEqual(status, 503, reply)
        self.assertEqual(content_type, "application/problem+json")

        # Forward overhead: the same small writes straight to the owner and through another replica.
        figures = {}
        for label, replica in (("direct", self.replicas[owner]), ("forwarded", other)):
            conn = http.client.HTTPConnection("127.0.0.1", replica.port, timeout=20)
            start = time.monotonic()
            for _ in range(200):
                conn.request("PUT", f"/kv/k{n}/doc", body=b"y" * 64, headers={"Fencing-Token": "2000"})
                response = conn.getresponse()
                response.read()
                self.assertEqual(response.status, 200)
            figures[label] = (time.monotonic() - start) / 200 * 1000
            conn.close()
        print(f"FIGURE forward overhead: direct {figures['direct']:.3f} ms/write, "
              f"forwarded {figures['forwarded']:.3f} ms/write (200 sequential 64-byte PUTs)",
              flush=True)

    def test_c_kill9_owner_shard_moves_after_ttl_and_quarantine(self):
        victim = self.replicas["r0"]
        mine = victim.cluster()["owned_shards"]
        self.assertTrue(mine, "r0 owns no shard")
        shard = mine[0]
        n = self.keys[shard]
        survivors = [r for r in self.live() if r is not victim]
        status, _, reply = survivors[0].put(n, 3000)
        self.assertEqual(status, 200, reply)

        victim.kill()
        killed = time.monotonic()
        seen_states = set()
        refused = 0
        end = killed + DEADLINE
        # A stale token (below what r0 admitted) is refused with 503 until a survivor owns the
        # shard, then with 409: the new owner read the fence from etcd.
        while True:
            self.assertLess(time.monotonic(), end, "no survivor took the shard")
            for r in survivors:
                for view in r.cluster()["shards"]:
                    if view["shard"] == shard:
                        seen_states.add(view["state"])
            status, content_type, reply = survivors[1].put(n, 2999)
            if status == 409:
                break
            self.assertEqual(status, 503, reply)
            self.assertEqual(content_type, "application/problem+json")
            refused += 1
            time.sleep(0.05)
        gap = time.monotonic() - killed
        self.assertGreater(refused, 0)
        self.assertIn("quarantine", seen_states)
        self.assertGreaterEqual(gap, QUARANTINE_S)  # a lower bound: claim waits out the lease first
        new_owner = self.owner_of(n)
        self.assertIn(new_owner, [r.name for r in survivors])
        for r in survivors:
            status, _, reply = r.put(n, 3000, b"after")
            self.assertEqual(status, 200, reply)
        print(f"FIGURE kill -9 of the owner: writes to shard {shard} refused for {gap:.2f} s "
              f"(lease_ttl {LEASE_TTL_S} s, quarantine {QUARANTINE_S} s), new owner {new_owner}",
              flush=True)
        changes = sum(r.metric('fencegate_cluster_ownership_changes_total{change="gained"}')
                      for r in survivors)
        self.assertGreater(changes, 0)
        wait_until(lambda: len(owners(survivors)) == SHARDS, "every shard owned by a survivor")

    def test_d_replica_cut_off_from_etcd_self_fences(self):
        victim = self.replicas["r1"]
        other = self.replicas["r2"]
        self.assertTrue(victim.alive() and other.alive())
        mine = victim.cluster()["owned_shards"]
        self.assertTrue(mine, "r1 owns no shard")
        n = self.keys[mine[0]]

        # An upload in progress to the owner, sent slowly.
        total = 4 * 1024 * 1024
        upload = socket.create_connection(("127.0.0.1", victim.port), timeout=20)
        upload.sendall((f"PUT /kv/k{n}/upload HTTP/1.1\r\nHost: test\r\nFencing-Token: 4000\r\n"
                        f"Content-Length: {total}\r\n\r\n").encode())
        piece = b"u" * 16384
        sent = 0
        for _ in range(5):
            upload.sendall(piece)
            sent += len(piece)
            time.sleep(0.05)

        for relay in victim.relays:
            relay.cut()
        cut = time.monotonic()
        # Keep sending until the replica stops reading it (bounded by the body size).
        upload_cut = False
        try:
            while sent < total:
                upload.sendall(piece)
                sent += len(piece)
                time.sleep(0.05)
        except OSError:
            upload_cut = True
        reply = b""
        try:
            upload.shutdown(socket.SHUT_WR)
            while True:
                data = upload.recv(65536)
                if not data:
                    break
                reply += data
        except OSError:
            pass
        upload.close()
        self.assertTrue(upload_cut or reply.startswith(b"HTTP/1.1 503"), (sent, reply[:200]))
        self.assertLess(sent, total)
        self.assertIsNone(self.backend.last(f"/kv/k{n}/upload"))

        # The cut-off replica refuses the shard's writes although the backend is reachable.
        status, content_type, reply = victim.put(n, 4000)
        self.assertEqual(status, 503, reply)
        self.assertEqual(content_type, "application/problem+json")
        view = wait_until(lambda: (lambda v: v if v["self_fence_events"] >= 1 else None)(
            victim.cluster()), "r1 counts its self-fencing")
        self.assertEqual(view["owned_shards"], [], view)
        status, _, body = request(victim.admin, "GET", "/readyz")
        self.assertEqual(status, 503, body)
        self.assertGreaterEqual(victim.metric("fencegate_cluster_self_fence_events_total"), 1)

        # The other replica takes the shards over once the lease ended and the quarantine passed.
        wait_until(lambda: len(other.cluster()["owned_shards"]) == SHARDS, "r2 owns every shard")
        status, _, reply = other.put(n, 4000, b"after cut")
        self.assertEqual(status, 200, reply)
        status, _, reply = other.put(n, 3999)
        self.assertEqual(status, 409, reply)
        print(f"FIGURE cut-off replica: r2 owned all shards {time.monotonic() - cut:.2f} s after "
              f"the cut; the upload was stopped after {sent} of {total} bytes", flush=True)
        status, _, reply = victim.put(n, 4000)
        self.assertEqual(status, 503, reply)

    def test_e_joining_replicas_get_their_share_while_writes_go_on(self):
        r0, r1, r2 = (self.replicas[n] for n in NAMES)
        self.assertFalse(r0.alive())  # killed in c; r1 cut off in d, r2 owns every shard
        handed_before = r2.metric('fencegate_cluster_ownership_changes_total{change="handed_over"}')
        for relay in r1.relays:
            relay.reconnect()
        wait_until(lambda: owners([r1, r2]) == rendezvous(["r1", "r2"]),
                   "r1 back with its share of the shards")
        self.assertGreater(
            r2.metric('fencegate_cluster_ownership_changes_total{change="handed_over"}'),
            handed_before)

        # Writes to every shard through the running pair while r0 joins: a moved shard is
        # refused (503) for its quarantine, then lands on its new owner; nothing else happens.
        token = [5000]
        stop = threading.Event()
        unexpected = []

        def write_on():
            while not stop.is_set():
                for n in self.keys.values():
                    token[0] += 1
                    # A moved shard is refused until its new owner's quarantine ends; the bound
                    # only catches a shard that never comes back.
                    deadline = time.monotonic() + 60
                    attempt = 0
                    while True:
                        status, _, reply = (r1, r2)[attempt % 2].put(n, token[0], b"join")
                        attempt += 1
                        if status == 200:
                            break
                        if status != 503:
                            unexpected.append((n, token[0], status, reply))
                            break
                        if time.monotonic() > deadline:
                            unexpected.append((n, token[0], "never admitted"))
                            break
                        # The client's pause before retrying a 503, as a load balancer's retry
                        # would pace it; what the test waits for is the 200 above.
                        time.sleep(0.02)

        writer = threading.Thread(target=write_on, daemon=True)
        writer.start()
        r0.stop()
        ports = {n: r.port for n, r in self.replicas.items()}
        joined = time.monotonic()
        self.replicas["r0"] = r0 = Replica(self.workdir, "r0", r0.port, r0.admin, ports,
                                           self.relays["r0"], self.backend.port)
        expected = rendezvous(NAMES)
        self.assertIn("r0", expected.values())
        try:
            wait_until(lambda: owners([r0, r1, r2]) == expected,
                       "the shards spread over the three replicas")
        finally:
            stop.set()
            writer.join(60)
        spread = time.monotonic() - joined
        self.assertEqual(unexpected, [])
        # Every shard r0 gained, its previous owner handed over (nobody's lease ended).
        handed = sum(r.metric('fencegate_cluster_ownership_changes_total{change="handed_over"}')
                     for r in (r1, r2))
        self.assertGreaterEqual(handed - handed_before,
                                list(expected.values()).count("r0"))
        self.assertEqual(r0.cluster()["shards_handed_over"], 0)
        for n in self.keys.values():
            token[0] += 1
            for r in (r0, r1, r2):
                status, _, reply = r.put(n, token[0], b"spread")
                self.assertEqual(status, 200, (r.name, n, reply))
        for r in (r0, r2):
            self.assertEqual(r.cluster()["self_fence_events"], 0, r.name)
        print(f"FIGURE a replica joining a running pair: shards spread {spread:.2f} s after "
              f"its start (lease_ttl {LEASE_TTL_S} s, quarantine {QUARANTINE_S} s)", flush=True)


TLS_KEY = "replica-tls-test-key"
TLS_CLUSTER = """  tls:
    ca_file: {certs}/ca.pem
    client_cert_file: {certs}/dual.pem
    client_key_file: {certs}/dual.key
"""
# The kv route is guarded: a bearer-key principal and a certificate principal may write, and so
# may the replicas' own certificate (CN=localhost-dual), which must still grant nothing to a
# request that merely claims to be forwarded.
TLS_EXTRA = """    policy:
      write: [writer, cert-writer, replica-cert]
      advance: {{"*": ["*"]}}
tls:
  traffic:
    cert_file: {certs}/dual.pem
    key_file: {certs}/dual.key
    client_ca_file: {certs}/ca.pem
    client_auth: optional
auth:
  principals:
    - name: writer
      api_key_sha256: ["{key_sha}"]
    - name: cert-writer
      tls_dns_sans: ["writer-1.example"]
    - name: replica-cert
      tls_subjects: ["CN=localhost-dual"]
"""


class ReplicasTlsTest(ReplicaClusterCase):
    NAMES = ["t0", "t1"]

    @classmethod
    def setUpClass(cls):
        cls.workdir = tempfile.mkdtemp(prefix="fencegate-replicas-tls-")
        cls.certs = os.path.join(cls.workdir, "certs")
        source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        subprocess.run(["bash", os.path.join(source, "tests", "support", "make_test_certs.sh"),
                        cls.certs], check=True)
        cls.etcd = Etcd(cls.workdir, members=1)
        cls.backend = Backend()
        ports = {n: free_port() for n in cls.NAMES}
        cls.relays = {n: [Relay(m["client"]) for m in cls.etcd.members] for n in cls.NAMES}
        cls.replicas = {}
        key_sha = hashlib.sha256(TLS_KEY.encode()).hexdigest()
        try:
            for n in cls.NAMES:
                # Peers as localhost: dialled at 127.0.0.1, the certificate checked for the
                # name "localhost" (docs/REPLICAS.md "TLS between replicas").
                cls.replicas[n] = Replica(
                    cls.workdir, n, ports[n], free_port(), ports, cls.relays[n],
                    cls.backend.port, extra=TLS_EXTRA.format(certs=cls.certs, key_sha=key_sha),
                    cluster_extra=TLS_CLUSTER.format(certs=cls.certs), peer_host="localhost")
            wait_until(lambda: len(owners(cls.replicas.values())) == SHARDS,
                       "every shard owned by exactly one replica")
        except BaseException:
            cls.tearDownClass()
            raise

    def https(self, port, path, headers, cert=None, body=b"x"):
        context = ssl.create_default_context(cafile=os.path.join(self.certs, "ca.pem"))
        if cert is not None:
            context.load_cert_chain(os.path.join(self.certs, cert + ".pem"),
                                    os.path.join(self.certs, cert + ".key"))
        conn = http.client.HTTPSConnection("localhost", port, context=context, timeout=20)
        try:
            conn.request("PUT", path, body=body, headers=headers)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def key_owned_by(self, owner):
        shard = next(s for s, name in owners(self.replicas.values()).items() if name == owner)
        return keys_per_shard()[shard]

    def test_a_forwarded_writes_go_over_pooled_tls_connections(self):
        forwarder, owner = self.replicas["t0"], self.replicas["t1"]
        n = self.key_owned_by("t1")
        handshakes = 'fencegate_tls_handshakes_total{listener="traffic",result="ok"}'
        relayed = 'fencegate_cluster_forwards_total{result="relayed"}'
        owner_handshakes, forwards = owner.metric(handshakes), forwarder.metric(relayed)
        writes = 60
        for token in range(1, writes + 1):
            body = f"tls:{token}".encode()
            # A new client connection each time: the forwarder's connections to the owner are
            # its own, pooled.
            status, reply = self.https(forwarder.port, f"/kv/k{n}/doc",
                                       {"Fencing-Token": str(token),
                                        "Authorization": "Bearer " + TLS_KEY}, body=body)
            self.assertEqual(status, 200, reply)
            self.assertEqual(self.backend.last(f"/kv/k{n}/doc"),
                             (f"/kv/k{n}/doc", token, hashlib.sha256(body).hexdigest()))
        self.assertEqual(forwarder.metric(relayed) - forwards, writes)
        # The owner admitted them: a stale token sent to the forwarder is refused there.
        status, reply = self.https(forwarder.port, f"/kv/k{n}/doc",
                                   {"Fencing-Token": "1", "Authorization": "Bearer " + TLS_KEY})
        self.assertEqual(status, 409, reply)
        new_handshakes = owner.metric(handshakes) - owner_handshakes
        print(f"FIGURE TLS forwarding: {writes + 1} forwarded writes, {new_handshakes:.0f} TLS "
              f"handshakes on the owner", flush=True)
        # One pooled connection per forwarding network thread (threads: 2), not one per write.
        self.assertGreaterEqual(new_handshakes, 1)
        self.assertLessEqual(new_handshakes, 4)

    def test_b_the_owner_authorizes_a_forwarded_write_again(self):
        forwarder, owner = self.replicas["t0"], self.replicas["t1"]
        n = self.key_owned_by("t1")
        token = 1000
        # The client's key goes along to the owner, which admits it.
        status, reply = self.https(forwarder.port, f"/kv/k{n}/auth",
                                   {"Fencing-Token": str(token),
                                    "Authorization": "Bearer " + TLS_KEY})
        self.assertEqual(status, 200, reply)
        # A client known by its certificate only: the forwarder admits it to forwarding, the
        # owner sees the forwarder's certificate, which stands for no client: refused (401).
        status, reply = self.https(forwarder.port, f"/kv/k{n}/auth",
                                   {"Fencing-Token": str(token + 1)}, cert="client")
        self.assertEqual(status, 401, reply)
        # ... and written directly to the owner, it is admitted.
        status, reply = self.https(owner.port, f"/kv/k{n}/auth",
                                   {"Fencing-Token": str(token + 1)}, cert="client")
        self.assertEqual(status, 200, reply)
        # Claiming to be forwarded, with a replica's certificate and no key, grants nothing.
        status, reply = self.https(owner.port, f"/kv/k{n}/auth",
                                   {"Fencing-Token": str(token + 2),
                                    "Fencegate-Forwarded-By": "t0"}, cert="dual")
        self.assertEqual(status, 401, reply)
        self.assertEqual(self.backend.last(f"/kv/k{n}/auth")[1], token + 1)
        # The key went to the owner, never on to the backend.
        self.assertEqual(self.backend.credentials, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
