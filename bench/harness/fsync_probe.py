"""The raw single-writer durable-write rate and latency of the disk under the work directory,
with the sync the fence store uses (it writes RocksDB's log into zeros written ahead of its
records and syncs it with fdatasync): a 1 MiB file is written and synced once, then 4 KiB
blocks are overwritten at successive offsets, wrapping, each followed by os.fdatasync, in a loop bounded in time and count. The file
stays for the whole bench run, so later probes overwrite blocks that already exist (no size or
allocation change for fdatasync to commit). 1 MiB rather than more: writing tens of MiB before
each run is a burst this shared disk answers by slowing every sync for a while."""

import os
import statistics
import time

_BLOCK = b"f" * 4096
_FILE_BYTES = 1 << 20
_MAX_WRITES = 1_000_000


class SyncProbe:
    def __init__(self, directory):
        self._path = os.path.join(directory, "fsync-probe.dat")
        self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        chunk = bytes(1 << 20)
        for _ in range(_FILE_BYTES // len(chunk)):
            os.write(self._fd, chunk)
        os.fsync(self._fd)
        self._offset = 0

    def measure(self, seconds):
        """{"per_s": syncs per second, "p50_us": median write + fdatasync time in µs}."""
        latencies = []
        start = time.monotonic()
        deadline = start + seconds
        while len(latencies) < _MAX_WRITES:
            before = time.monotonic()
            if before >= deadline:
                break
            os.pwrite(self._fd, _BLOCK, self._offset)
            os.fdatasync(self._fd)
            latencies.append(time.monotonic() - before)
            self._offset = (self._offset + len(_BLOCK)) % _FILE_BYTES
        elapsed = time.monotonic() - start
        return {"per_s": len(latencies) / elapsed,
                "p50_us": statistics.median(latencies) * 1e6 if latencies else None}

    def close(self):
        os.close(self._fd)
        os.unlink(self._path)
