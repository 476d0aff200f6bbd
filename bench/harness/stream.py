"""The 1 GiB streamed PUT: one request with a Content-Length body sent from one reused 1 MiB
buffer, so the sender never holds the body, timed from connect to the end of the response.
The backend answers only after it has read the whole body (bench/conf/backend-nginx.conf),
so the time covers every byte passing through the proxy."""

import socket
import time

_CHUNK = memoryview(bytes(1 << 20))
_TIMEOUT_S = 120


def put(port, path, size, token=1):
    """Sends one PUT of `size` zero bytes; returns (status, seconds)."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=_TIMEOUT_S) as sock:
        head = (f"PUT {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Content-Length: {size}\r\nFencing-Token: {token}\r\n"
                "Content-Type: application/octet-stream\r\n\r\n")
        sock.sendall(head.encode())
        left = size
        while left > 0:
            sent = sock.send(_CHUNK[:min(left, len(_CHUNK))])
            left -= sent
        response = b""
        while b"\r\n" not in response:
            data = sock.recv(4096)
            if not data:
                raise ConnectionError(f"port {port}: connection closed before a response")
            response += data
    status = int(response.split(b" ", 2)[1])
    return status, time.monotonic() - start


def measure(endpoint, size):
    """One streamed PUT through `endpoint`: throughput, and the proxy's peak RSS and CPU."""
    process = endpoint.process
    if process:
        process.reset_peak_rss()
        cpu_before = process.cpu_seconds()
    status, seconds = put(endpoint.port, "/stream/1g", size)
    if not 200 <= status < 300:
        raise RuntimeError(f"{endpoint.name}: streamed PUT answered {status}")
    figures = {"mb_per_s": size / seconds / 1e6, "seconds": seconds}
    if process:
        figures["peak_rss_mib"] = process.peak_rss_kib() / 1024
        figures["cpu_s_per_gib"] = (process.cpu_seconds() - cpu_before) * (1 << 30) / size
    return figures
