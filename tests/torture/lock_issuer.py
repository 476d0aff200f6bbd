"""A lease-based lock service inside the harness: one lock per resource, a token that grows with
every acquisition (like an etcd revision or a Redis INCR), a time-to-live and renewal. It runs in
the harness's event loop, so it needs no locking of its own."""

import time


class Lease:
    def __init__(self, holder, token, expires):
        self.holder = holder
        self.token = token
        self.expires = expires


class LockIssuer:
    def __init__(self, ttl):
        self.ttl = ttl
        self._leases = {}  # resource -> Lease
        self._last_token = {}  # resource -> last token handed out
        self.acquisitions = 0
        self.expiries = 0  # locks taken over from a holder whose lease had run out

    def try_acquire(self, resource, client):
        """The new token, or None while someone else holds a live lease."""
        now = time.monotonic()
        lease = self._leases.get(resource)
        if lease is not None and lease.expires > now:
            return None
        if lease is not None:
            self.expiries += 1
        token = self._last_token.get(resource, 0) + 1
        self._last_token[resource] = token
        self._leases[resource] = Lease(client, token, now + self.ttl)
        self.acquisitions += 1
        return token

    def holds(self, resource, client, token):
        lease = self._leases.get(resource)
        return (lease is not None and lease.holder == client and lease.token == token
                and lease.expires > time.monotonic())

    def renew(self, resource, client, token):
        """Extends a live lease; False when it has run out (the holder must stop)."""
        if not self.holds(resource, client, token):
            return False
        self._leases[resource].expires = time.monotonic() + self.ttl
        return True

    def release(self, resource, client, token):
        if self.holds(resource, client, token):
            del self._leases[resource]
