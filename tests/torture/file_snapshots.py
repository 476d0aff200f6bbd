"""Snapshots of the files a filesystem-mode run writes, read straight from the root (not through
a gateway): content (the JSON record of the write that made the file) and the token the adapter
stored with it (xattr user.fencegate.token). A snapshot is kept when the file changed, and at
least every `keep_every` seconds per file otherwise, which bounds memory on long runs."""

import asyncio
import json
import os
import time

TOKEN_XATTR = "user.fencegate.token"


def supports_user_xattrs(root):
    """Whether the adapter keeps tokens in xattrs here (else in sidecar files, which are renamed
    separately from the content and so cannot be compared with it in one snapshot)."""
    probe = os.path.join(root, "xattr-probe")
    with open(probe, "w", encoding="utf-8"):
        pass
    try:
        os.setxattr(probe, TOKEN_XATTR, b"0")
        return True
    except OSError:
        return False
    finally:
        os.unlink(probe)


def read_snapshot(root, resource, xattrs=True):
    """`token` is the token in the content (what was applied); `stored_token` the one the adapter
    kept with the file, when it uses xattrs."""
    start = time.monotonic()
    snapshot = {"start": start, "resource": resource, "token": None, "stored_token": None,
                "body": None}
    try:
        fd = os.open(os.path.join(root, resource), os.O_RDONLY)
    except FileNotFoundError:
        return snapshot
    try:
        # One descriptor: content and xattr of the same inode, whatever is renamed meanwhile.
        data = os.read(fd, 1 << 16)
        if xattrs:
            try:
                snapshot["stored_token"] = int(os.getxattr(fd, TOKEN_XATTR))
            except OSError:
                pass
    finally:
        os.close(fd)
    try:
        snapshot["body"] = json.loads(data)
    except ValueError:
        snapshot["body"] = {"attempt": "?", "copy": -1, "token": None, "raw": data[:80].decode(
            "latin-1")}
    snapshot["token"] = snapshot["body"].get("token")
    if not xattrs:
        snapshot["stored_token"] = snapshot["token"]
    return snapshot


class SnapshotTaker:
    def __init__(self, root, resources, keep_every=0.1):
        self.root = root
        self.xattrs = supports_user_xattrs(root)
        self.resources = resources
        self.keep_every = keep_every
        self.snapshots = []
        self._last = {}

    def _keep(self, snapshot):
        previous = self._last.get(snapshot["resource"])
        body = snapshot["body"] or {}
        identity = (snapshot["token"], body.get("attempt"), body.get("copy"))
        if (previous is None or previous[0] != identity
                or snapshot["start"] - previous[1] >= self.keep_every):
            self.snapshots.append(snapshot)
            self._last[snapshot["resource"]] = (identity, snapshot["start"])

    async def run(self, stop):
        while not stop.is_set():
            for resource in self.resources:
                self._keep(read_snapshot(self.root, resource, self.xattrs))
            await asyncio.sleep(0.005)

    def final(self):
        return [read_snapshot(self.root, resource, self.xattrs) for resource in self.resources]
