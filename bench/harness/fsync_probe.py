"""The raw single-writer durable-write rate of the disk under the work directory: append
4 KiB and fsync, in a loop bounded in time and count."""

import os
import time

_BLOCK = b"f" * 4096
_MAX_WRITES = 1_000_000


def fsyncs_per_second(directory, seconds):
    path = os.path.join(directory, "fsync-probe.dat")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        writes = 0
        start = time.monotonic()
        deadline = start + seconds
        while writes < _MAX_WRITES and time.monotonic() < deadline:
            os.write(fd, _BLOCK)
            os.fsync(fd)
            writes += 1
        return writes / (time.monotonic() - start)
    finally:
        os.close(fd)
        os.unlink(path)
