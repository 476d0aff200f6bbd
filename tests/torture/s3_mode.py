"""The `s3` torture mode's parts: a real Ceph radosgw (tests/support/radosgw.sh), the gateways'
configuration for the s3 adapter, and snapshots of the objects read straight from radosgw (not
through a gateway), each request signed with AWS SigV4 here.

A snapshot holds the object's body (the JSON record of the write that made it) and the token the
adapter stored with it (x-amz-meta-fencing-token), both from one GET, so the checker's
filesystem rules apply unchanged (checker.check_files)."""

import asyncio
import datetime
import hashlib
import hmac
import os
import re
import time

import httpwire
from gateway import CONFIG_HEAD
from snapshots import ThinnedSnapshots, empty_snapshot, set_body

RADOSGW_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support",
                              "radosgw.sh")
BUCKET = "torture"
REGION = "us-east-1"

# Two gateways, each with its own fence store, before one bucket: only the adapter's conditional
# writes at radosgw keep their writes in token order. response_timeout as in the http mode.
S3_CONFIG = CONFIG_HEAD + """\
backends:
  rgw:
    kind: s3
    endpoint: http://127.0.0.1:{backend_port}
    access_key: {access_key}
    secret_key: {secret_key}
    etag_quoting: unquoted
    connect_timeout: 2s
    response_timeout: 4s
routes:
  - name: objects
    prefix: /{bucket}/
    backend: rgw
    fence_key: "s3:{{path}}"
"""


class Radosgw:
    """A throwaway single-host Ceph cluster with radosgw on loopback, started and stopped by the
    project's script (ports 6789 and 6800-6807 are fixed: one at a time per host)."""

    def __init__(self, run_dir):
        self.dir = os.path.join(run_dir, "ceph")
        self.port = self.access_key = self.secret_key = None

    async def start(self):
        process = await asyncio.create_subprocess_exec(
            "bash", RADOSGW_SCRIPT, "start", self.dir, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT)
        output = (await asyncio.wait_for(process.communicate(), 300))[0].decode()
        match = re.search(r"radosgw ready port=(\d+) access=(\S+) secret=(\S+)", output)
        if process.returncode != 0 or not match:
            raise RuntimeError(f"radosgw did not start: {output[-2000:]}")
        self.port = int(match.group(1))
        self.access_key, self.secret_key = match.group(2), match.group(3)

    async def stop(self):
        process = await asyncio.create_subprocess_exec("bash", RADOSGW_SCRIPT, "stop", self.dir)
        await asyncio.wait_for(process.wait(), 120)

    def config(self, access_log, backend_port):
        return S3_CONFIG.format(access_log=access_log, backend_port=backend_port,
                                access_key=self.access_key, secret_key=self.secret_key,
                                bucket=BUCKET)

    def signed_request(self, method, path, body=b""):
        """A raw HTTP/1.1 request to radosgw signed with SigV4 (UNSIGNED-PAYLOAD); `path` is
        already in canonical form (the harness's names need no escaping)."""
        now = datetime.datetime.now(datetime.timezone.utc)
        amz_date = now.strftime("%Y%m%dT%H%M%SZ")
        day = amz_date[:8]
        host = f"127.0.0.1:{self.port}"
        headers = {"host": host, "x-amz-content-sha256": "UNSIGNED-PAYLOAD",
                   "x-amz-date": amz_date}
        signed = ";".join(sorted(headers))
        canonical = "\n".join([method, path, "",
                               "".join(f"{k}:{headers[k]}\n" for k in sorted(headers)), signed,
                               "UNSIGNED-PAYLOAD"])
        scope = f"{day}/{REGION}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                             hashlib.sha256(canonical.encode()).hexdigest()])
        key = ("AWS4" + self.secret_key).encode()
        for part in (day, REGION, "s3", "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        head = (f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n"
                f"x-amz-content-sha256: UNSIGNED-PAYLOAD\r\nx-amz-date: {amz_date}\r\n"
                f"Authorization: AWS4-HMAC-SHA256 Credential={self.access_key}/{scope}, "
                f"SignedHeaders={signed}, Signature={signature}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n")
        return head.encode() + body

    async def request(self, method, path, body=b""):
        """(status, headers, body) of one request straight to radosgw."""
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection("127.0.0.1", self.port), 10)
        try:
            writer.write(self.signed_request(method, path, body))
            message = await asyncio.wait_for(httpwire.read_message(reader), 10)
        finally:
            writer.transport.abort()
        start_line, headers, _, payload = message
        return int(start_line.split(" ", 2)[1]), headers, payload

    async def create_bucket(self):
        status, _, payload = await self.request("PUT", f"/{BUCKET}")
        if status != 200:
            raise RuntimeError(f"bucket creation answered {status}: {payload[:200]!r}")


class S3SnapshotTaker(ThinnedSnapshots):
    """Snapshots of the torture's objects read from radosgw while the run goes on, kept when an
    object changed and at least every `keep_every` seconds otherwise (bounded memory), and a
    final round once stopped."""

    def __init__(self, radosgw, resources, keep_every=0.1):
        super().__init__(keep_every)
        self.radosgw = radosgw
        self.resources = resources
        self.reads = 0
        self._final = []

    async def read(self, resource):
        snapshot = empty_snapshot(resource, time.monotonic())
        status, headers, payload = await self.radosgw.request("GET", f"/{BUCKET}/{resource}")
        self.reads += 1
        if status == 404:
            return snapshot
        if status != 200:
            raise RuntimeError(f"GET {resource} from radosgw answered {status}")
        if "x-amz-meta-fencing-token" in headers:
            snapshot["stored_token"] = int(headers["x-amz-meta-fencing-token"])
        set_body(snapshot, payload)
        return snapshot

    async def run(self, stop):
        while not stop.is_set():
            for resource in self.resources:
                self.keep(await self.read(resource))
            await asyncio.sleep(0.005)
        self._final = [await self.read(resource) for resource in self.resources]

    def final(self):
        return self._final
