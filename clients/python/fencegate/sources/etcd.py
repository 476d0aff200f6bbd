"""etcd's lock API through its v3 JSON gateway (stdlib only). The token is the lock key's
create_revision: etcd's global write counter, so every later holder's key has a higher one
(the lease ID is unique but not ordered by acquisition, so it is no fence)."""

from __future__ import annotations

import base64
import json
import socket
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Optional

from ..errors import LeaseLost, NotAcquired
from ..lease import Lease, Renewal


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class EtcdLocks:
    """`endpoint`: an etcd client URL (http://HOST:PORT). int64s travel as JSON strings."""

    def __init__(self, endpoint: str = "http://127.0.0.1:2379", timeout: float = 10.0):
        self.endpoint = (endpoint if "://" in endpoint else "http://" + endpoint).rstrip("/")
        self.timeout = timeout

    def call(self, method: str, body: dict[str, Any], timeout: Optional[float] = None) -> Any:
        request = urllib.request.Request(f"{self.endpoint}/v3/{method}",
                                         data=json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(request, timeout=timeout or self.timeout) as response:
            return json.load(response)

    def acquire(self, name: str, ttl: float = 10.0, wait: float = 30.0,
                on_lost: Optional[Callable[[Lease], None]] = None,
                raise_in_worker: bool = False) -> "EtcdLease":
        """Grants a lease of `ttl` (whole seconds, at least 1) and takes the lock `name` on it,
        waiting up to `wait` seconds. Raises NotAcquired when the wait runs out."""
        seconds = max(1, round(ttl))
        sent = time.monotonic()
        lease_id = self.call("lease/grant", {"TTL": seconds})["ID"]
        # The lease must outlive the wait: its keeper renews it while etcd queues us.
        held = EtcdLease(self, name, lease_id, "", 0, seconds, sent, on_lost, raise_in_worker)
        try:
            try:
                reply = self.call("lock/lock", {"name": _b64(name), "lease": lease_id}, wait)
            except (socket.timeout, TimeoutError) as error:
                raise NotAcquired(f"{name} within {wait}s") from error
            except urllib.error.URLError as error:
                if isinstance(error.reason, (socket.timeout, TimeoutError)):
                    raise NotAcquired(f"{name} within {wait}s") from error
                raise
            key = base64.b64decode(reply["key"]).decode()
            kvs = self.call("kv/range", {"key": _b64(key)}).get("kvs", [])
            if not kvs:
                raise NotAcquired(f"lock key {key} vanished before its revision was read")
            held.key, held.token = key, int(kvs[0]["create_revision"])
            return held
        except BaseException:
            held.release()
            raise

    def _revoke(self, lease_id: str) -> None:
        # Revoking deletes our lock key and nothing else; 404 means the lease already expired.
        try:
            self.call("lease/revoke", {"ID": lease_id})
        except urllib.error.HTTPError:
            pass


class EtcdLease(Lease):
    """`key` is the lock key (NAME/<lease hex>), `lease_id` etcd's lease."""

    def __init__(self, locks: EtcdLocks, name: str, lease_id: str, key: str, token: int,
                 ttl: float, sent_at: float, on_lost: Optional[Callable[[Lease], None]],
                 raise_in_worker: bool):
        self.locks = locks
        self.lease_id = lease_id
        self.key = key
        super().__init__(name, token, ttl, sent_at, None, on_lost, raise_in_worker)

    def _renew(self, timeout: float) -> Renewal:
        result = self.locks.call("lease/keepalive", {"ID": self.lease_id}, timeout)["result"]
        ttl = int(result.get("TTL", "0"))  # omitted (0) once the lease is gone
        if ttl <= 0:
            raise LeaseLost(f"etcd lease {self.lease_id} of {self.key or self.name} expired")
        return Renewal(float(ttl))

    def _release(self) -> None:
        self.locks._revoke(self.lease_id)
