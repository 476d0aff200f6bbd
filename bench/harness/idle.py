"""Idle keep-alive connections: opens connections to a proxy in waves, sends one small GET on
each (so the proxy holds a session, not just an accepted socket), reads the response, then
leaves them idle and reads the proxy's RSS. One epoll loop holds every socket."""

import select
import socket
import time

_WAVE = 200
_WAVE_TIMEOUT_S = 5


class _Pending:
    def __init__(self, sock):
        self.sock = sock
        self.sent = False
        self.received = b""


def _response_complete(data):
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return True


def _open_wave(port, count, request, poller):
    """Opens `count` connections and completes one request on each; returns those that did."""
    pending = {}
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))
        pending[sock.fileno()] = _Pending(sock)
        poller.register(sock.fileno(), select.EPOLLOUT)
    done = []
    deadline = time.monotonic() + _WAVE_TIMEOUT_S
    while pending and time.monotonic() < deadline:
        for fd, events in poller.poll(max(0.0, deadline - time.monotonic())):
            entry = pending[fd]
            try:
                if events & (select.EPOLLERR | select.EPOLLHUP):
                    entry.received = None
                elif not entry.sent:
                    entry.sock.send(request)  # a few dozen bytes: one send into an empty buffer
                    entry.sent = True
                    poller.modify(fd, select.EPOLLIN)
                    continue
                else:
                    data = entry.sock.recv(4096)
                    entry.received = entry.received + data if data else None
            except OSError:  # refused or reset: this connection is not held
                entry.received = None
            if entry.received is None or _response_complete(entry.received):
                poller.unregister(fd)
                del pending[fd]
                if entry.received is not None and entry.received.startswith(b"HTTP/1.1 200"):
                    done.append(entry.sock)
                else:
                    entry.sock.close()
    for entry in pending.values():  # not served in time: the proxy is at its limit
        poller.unregister(entry.sock.fileno())
        entry.sock.close()
    return done


def _still_open(socks):
    """How many of `socks` the proxy has not closed (a closed one polls readable: EOF)."""
    poller = select.epoll()
    try:
        for sock in socks:
            poller.register(sock.fileno(), select.EPOLLIN | select.EPOLLRDHUP)
        closed = {fd for fd, _ in poller.poll(0)}
    finally:
        poller.close()
    return sum(1 for sock in socks if sock.fileno() not in closed)


def measure(endpoint, count, settle_s=2.0):
    """RSS of the proxy before and after holding up to `count` idle sessions."""
    request = f"GET /get HTTP/1.1\r\nHost: 127.0.0.1:{endpoint.port}\r\n\r\n".encode()
    process = endpoint.process
    time.sleep(settle_s)
    rss_before = process.rss_kib()
    held = []
    poller = select.epoll()
    start = time.monotonic()
    try:
        while len(held) < count:
            wave = _open_wave(endpoint.port, min(_WAVE, count - len(held)), request, poller)
            held += wave
            if not wave:
                break
        open_s = time.monotonic() - start
        time.sleep(settle_s)
        rss_after = process.rss_kib()
        still_open = _still_open(held)
    finally:
        poller.close()
        for sock in held:
            sock.close()
    return {
        "attempted": count,
        "held": still_open,
        "open_s": open_s,
        "rss_before_mib": rss_before / 1024,
        "rss_after_mib": rss_after / 1024,
        "kib_per_conn": (rss_after - rss_before) / still_open if still_open else None,
    }
