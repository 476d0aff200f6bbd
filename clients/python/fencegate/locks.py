"""fencegate's built-in locks: the lock API under `locks.prefix` on the traffic listener."""

from __future__ import annotations

import json
import ssl
import time
import urllib.parse
from typing import Any, Callable, Optional

from ._http import Endpoint, problem_of
from .errors import LeaseLost, LockHeld, ProblemError
from .lease import Lease, Renewal


class LockClient:
    """Acquires fencegate's built-in locks.

    `url` is the traffic listener (http:// or https://, with `ssl_context` for a CA file or a
    client certificate), `prefix` its `locks.prefix`; `api_key` goes with every call as
    `Authorization: Bearer` (routes under `locks.policy`)."""

    def __init__(self, url: str = "http://127.0.0.1:8080", prefix: str = "/locks/",
                 api_key: Optional[str] = None, ssl_context: Optional[ssl.SSLContext] = None,
                 timeout: float = 30.0):
        self.endpoint = Endpoint(url, timeout, ssl_context)
        self.prefix = "/" + prefix.strip("/") + "/"
        self.api_key = api_key
        self.timeout = timeout

    def _call(self, method: str, name: str, action: str = "",
              body: Optional[dict[str, Any]] = None, timeout: Optional[float] = None) -> Any:
        path = self.prefix + urllib.parse.quote(name, safe="") + (f"/{action}" if action else "")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        response = self.endpoint.exchange(method, path,
                                          json.dumps(body).encode() if body is not None else None,
                                          headers, timeout)
        if response.status != 200:
            error = problem_of(response)
            if error.slug in ("lock-held", "lock-quarantined"):
                raise LockHeld(error.status, error.problem, error.retry_after)
            raise error
        return response.json()

    def acquire(self, name: str, ttl: float = 30.0, wait: float = 0.0,
                on_lost: Optional[Callable[[Lease], None]] = None,
                raise_in_worker: bool = False) -> "BuiltinLease":
        """Takes the lock `name` for `ttl` seconds, waiting up to `wait` seconds (long-poll,
        first come first served). Raises LockHeld if it stays held, ProblemError otherwise."""
        body: dict[str, Any] = {"ttl_ms": round(ttl * 1000)}
        if wait > 0:
            body["wait_ms"] = round(wait * 1000)
        sent = time.monotonic()
        grant = self._call("POST", name, body=body, timeout=self.timeout + wait)
        return BuiltinLease(self, grant, sent, on_lost, raise_in_worker)

    def status(self, name: str) -> dict[str, Any]:
        """`GET` of the lock: held, last_token, holder_token, expires_in_ms, waiters."""
        result: dict[str, Any] = self._call("GET", name)
        return result


class BuiltinLease(Lease):
    """A built-in lock's lease. `grant` is the acquire's answer (owner_token, fencing_token,
    ttl_ms, waited_ms, fences, and fencing_token_signature when signing is configured)."""

    def __init__(self, client: LockClient, grant: dict[str, Any], sent_at: float,
                 on_lost: Optional[Callable[[Lease], None]], raise_in_worker: bool):
        self.client = client
        self.grant = grant
        self.owner_token: str = grant["owner_token"]
        self.fences: list[dict[str, Any]] = grant.get("fences", [])
        # fencegate's lease starts when it answers; counting from the send, plus the time spent
        # waiting in its queue, keeps ours from outlasting it.
        super().__init__(grant["lock"], int(grant["fencing_token"]), grant["ttl_ms"] / 1000,
                         sent_at + grant.get("waited_ms", 0) / 1000,
                         grant.get("fencing_token_signature"), on_lost, raise_in_worker)

    def _renew(self, timeout: float) -> Renewal:
        try:
            answer = self.client._call("POST", self.name, "renew",
                                       {"owner_token": self.owner_token}, timeout)
        except ProblemError as error:
            if error.slug == "lock-lost":
                raise LeaseLost(f"lock {self.name}: {error}") from error
            raise
        return Renewal(answer["ttl_ms"] / 1000, answer.get("fencing_token_signature"))

    def _release(self) -> None:
        """Releases the lock; `released` false (it was no longer ours) is not an error."""
        self.client._call("POST", self.name, "release", {"owner_token": self.owner_token})
