"""The webdav mode: two fencegate processes with separate fence stores, each through a faulty
BackendRelay, in front of one real Apache mod_dav_fs. Neither gateway's own check sees the
other's tokens, so only the webdav adapter's LOCK + stored token can keep the order.

The checker reads from Apache itself: snapshots taken while the run goes on and a final one
(GET of the body, which names the write that made it, then PROPFIND of the fencing-token
property), and the access log, where the successful PUTs appear in the order they were applied
(a PUT reaches Apache only once its LOCK is granted, i.e. after the previous holder's PUT was
answered and unlocked). Violations, besides those of checker.check_files on the snapshots:
  token-not-kept:     the token stored with a resource is lower than its body's (or missing at
                      the end): a lower token could then overwrite it;
  lower-after-higher: in the access log, a PUT applied with a lower token than an earlier one;
  acked-not-applied / refused-applied: per attempt, more copies acknowledged than applied, or
                      more applied than copies not refused.
"""

import asyncio
import re
import time

import checker
import httpwire
from gateway import CONFIG_HEAD
from snapshots import ThinnedSnapshots, empty_snapshot, set_body

# lock_timeout is short so a lock whose UNLOCK the relay lost blocks a resource briefly; the
# LOCK retries outlast it. response_timeout as in the http mode (above the relay's delays).
# Apache serves WebDAV under /dav/ only: the condition probes go there.
WEBDAV_CONFIG = CONFIG_HEAD + """\
backends:
  share:
    kind: webdav
    url: http://127.0.0.1:{backend_port}
    connect_timeout: 2s
    response_timeout: 4s
    lock_timeout: 2s
    lock_attempts: 600
    lock_retry_delay: 5ms
    probe_prefix: dav/.fencegate-probe/
routes:
  - name: dav
    prefix: /dav/
    backend: share
    fence_key: "dav:{{segment:2}}"
    fenced_methods: [PUT, DELETE, MOVE, COPY, MKCOL]
"""

# The control: the same two gateways with the plain http adapter (no LOCK, no stored token) in
# front of the same Apache cannot keep order; run with --expect-violations, it shows that this
# checker catches what they apply out of order.
UNSAFE_MODE = "unsafe-http-before-apache"
UNSAFE_CONFIG = (WEBDAV_CONFIG.replace("kind: webdav", "kind: http")
                 .replace("    lock_timeout: 2s\n    lock_attempts: 600\n    lock_retry_delay: 5ms\n"
                          "    probe_prefix: dav/.fencegate-probe/\n", ""))

PROPFIND = (b'<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop>'
            b'<F:fencing-token xmlns:F="urn:fencegate"/></D:prop></D:propfind>')
STORED = re.compile(rb"fencing-token[^>/]*>\s*([0-9]+)\s*<")


async def _request(port, head, body=b""):
    data = (head + f"Host: torture\r\nConnection: close\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode() + body
    response = await httpwire.exchange(port, data, timeout=10)
    status = httpwire.status_of(response)
    return status, response.split(b"\r\n\r\n", 1)[-1]


async def read_snapshot(port, resource, start):
    """Body first, then the stored token: the token is stored before the body is replaced and
    never lowered, so a later read of it is at least the token stored with that body."""
    snapshot = empty_snapshot(resource, start)
    status, body = await _request(port, f"GET /dav/{resource} HTTP/1.1\r\n")
    if status == 200:
        set_body(snapshot, body)
    status, body = await _request(port, f"PROPFIND /dav/{resource} HTTP/1.1\r\nDepth: 0\r\n"
                                  "Content-Type: application/xml\r\n", PROPFIND)
    match = STORED.search(body) if status == 207 else None
    if match:
        snapshot["stored_token"] = int(match.group(1))
    return snapshot


# Apache sizes a GET from a stat taken before it opens the file; a PUT that renames a new file in
# between makes it answer the new file cut, or NUL-padded, to the old one's length (measured:
# 71 of 9206 GETs racing 3000 PUTs). Such a read is taken again, a bounded number of times.
TORN_READ_ATTEMPTS = 5


class DavSnapshots(ThinnedSnapshots):
    def __init__(self, port, resources, keep_every=0.1):
        super().__init__(keep_every, stored_token_counts=True)
        self.port = port
        self.resources = resources
        self.errors = 0
        self.torn_reads = 0

    async def read(self, resource):
        """A snapshot whose body is a write record, read again while it is not (see
        TORN_READ_ATTEMPTS); one that stays so is kept, for the checker to report."""
        for attempt in range(TORN_READ_ATTEMPTS):
            snapshot = await read_snapshot(self.port, resource, time.monotonic())
            if snapshot["body"] is None or snapshot["body"]["attempt"] != "?":
                break
            self.torn_reads += attempt + 1 < TORN_READ_ATTEMPTS
        return snapshot

    async def run(self, stop):
        while not stop.is_set():
            for resource in self.resources:
                try:
                    self.keep(await self.read(resource))
                except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
                    self.errors += 1
            await asyncio.sleep(0.01)

    async def final(self):
        return [await self.read(r) for r in self.resources]


# The gateways' condition probes write scratch resources there (WEBDAV_CONFIG's probe_prefix).
PROBE_PATHS = "/dav/.fencegate-probe/"


def read_access_log(path):
    """(attempt, status, begin µs) of every PUT Apache answered, but the condition probes'."""
    puts = []
    with open(path, encoding="latin-1") as f:
        for line in f:
            fields = line.split()
            if len(fields) == 5 and fields[0] == "PUT" and not fields[1].startswith(PROBE_PATHS):
                puts.append((fields[3], int(fields[2]), int(fields[4])))
    return puts


def check(report, attempts, answers, snapshots, final, puts):
    by_attempt = {a.attempt: a for a in attempts}
    # The stored token never trails the body it is stored with.
    for snap in snapshots + final:
        if snap["body"] is None or snap["token"] is None:
            continue
        stored = snap["stored_token"]
        # A new resource gets its token right after the write (still under the lock): only
        # the final state must have it.
        missing_ok = stored is None and snap not in final
        if not missing_ok and (stored is None or stored < snap["token"]):
            report.violate("token-not-kept", f"{snap['resource']}: body written with token "
                           f"{snap['token']} ({snap['body'].get('attempt')}), stored token "
                           f"{stored}")
    # The snapshot checks of the filesystem mode, on the body's token (the stored one is
    # checked above and may be ahead of the body).
    as_files = [dict(s, stored_token=s["token"]) for s in snapshots]
    checker.check_files(report, attempts, answers, as_files,
                        [dict(s, stored_token=s["token"]) for s in final])
    # Apache's log: the order the PUTs were applied in, and how many copies of each attempt.
    applied = sorted((begin, attempt) for attempt, status, begin in puts if status in (201, 204))
    report.figures["applied (Apache log)"] = len(applied)
    highest = {}
    applied_count = {}
    for begin, attempt in applied:
        sent = by_attempt.get(attempt)
        if sent is None:
            report.violate("token-mismatch", f"Apache applied a PUT of unknown attempt {attempt}")
            continue
        applied_count[attempt] = applied_count.get(attempt, 0) + 1
        top = highest.get(sent.resource)
        if top is not None and sent.token < top[0]:
            report.violate("lower-after-higher", f"{sent.resource}: attempt {attempt} (token "
                           f"{sent.token}) applied at {begin} µs after attempt {top[1]} "
                           f"(token {top[0]})")
        if top is None or sent.token >= top[0]:
            highest[sent.resource] = (sent.token, attempt)
    copies = {}
    for (attempt, _), answer in answers.items():
        acked, refused, other = copies.get(attempt, (0, 0, 0))
        if isinstance(answer[0], int) and 200 <= answer[0] < 300:
            acked += 1
        elif answer[0] in checker.REFUSED:
            refused += 1
        else:
            other += 1
        copies[attempt] = (acked, refused, other)
    for attempt, (acked, refused, other) in copies.items():
        n = applied_count.get(attempt, 0)
        if n < acked:
            report.violate("acked-not-applied", f"attempt {attempt}: {acked} copies acknowledged, "
                           f"{n} applied (Apache log)")
        if n > acked + other:
            report.violate("refused-applied", f"attempt {attempt}: {n} copies applied (Apache "
                           f"log), {acked} acknowledged, {refused} refused")
