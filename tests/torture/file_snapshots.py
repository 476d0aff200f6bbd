"""Snapshots of the files a filesystem-mode run writes, read straight from the root (not through
a gateway): content (the JSON record of the write that made the file) and the token the adapter
stored with it (xattr user.fencegate.token). A snapshot is kept when the file changed, and at
least every `keep_every` seconds per file otherwise, which bounds memory on long runs."""

import asyncio
import os
import time

from snapshots import ThinnedSnapshots, empty_snapshot, set_body

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
    snapshot = empty_snapshot(resource, time.monotonic())
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
    set_body(snapshot, data)
    if not xattrs:
        snapshot["stored_token"] = snapshot["token"]
    return snapshot


class SnapshotTaker(ThinnedSnapshots):
    def __init__(self, root, resources, keep_every=0.1):
        super().__init__(keep_every)
        self.root = root
        self.xattrs = supports_user_xattrs(root)
        self.resources = resources

    async def run(self, stop):
        while not stop.is_set():
            for resource in self.resources:
                self.keep(read_snapshot(self.root, resource, self.xattrs))
            await asyncio.sleep(0.005)

    def final(self):
        return [read_snapshot(self.root, resource, self.xattrs) for resource in self.resources]
