"""Loopback ports for the servers a test starts (etcd, replicas, fixtures)."""
import random
import socket

_issued = set()
_random = random.SystemRandom()  # not the seeded `random` of the torture harness


def free_port():
    """A loopback port that is free now and lies below the kernel's ephemeral range. A port
    taken from that range (bind to 0) is free only at that instant: before the server binds it,
    it can become the local port of one of the many outgoing connections the test makes, and the
    server then fails with "address already in use"."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        ephemeral_low = int(f.read().split()[0])
    for _ in range(500):
        port = _random.randint(10000, ephemeral_low - 1)
        if port in _issued:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _issued.add(port)
        return port
    raise RuntimeError("no free loopback port below the ephemeral range")
