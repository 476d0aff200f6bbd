"""Writes through fencegate with the current fencing token, an Idempotency-Key per logical
write, and typed refusals."""

from __future__ import annotations

import ssl
import time
import uuid
from typing import Mapping, Optional

from ._http import AnswerLost, Endpoint, NotSent, Response, problem_of
from .errors import OutcomeUnknown
from .lease import Lease

WRITE_METHODS = frozenset({"PUT", "POST", "PATCH", "DELETE"})


class FencedSession:
    """HTTP requests to fencegate's traffic listener on behalf of a lease holder.

    Every write (PUT, POST, PATCH, DELETE) carries `Fencing-Token` (and
    `Fencing-Token-Signature` when the lease has one) read from `lease` at the time of the
    request, so a renewed signature is used as soon as it arrives, and an `Idempotency-Key`
    (generated per call unless one is given). Before a write the lease is checked: a lost
    lease raises LeaseLost without sending anything, unless `stop_on_lost` is false (the
    write is then sent and fencegate decides).

    A write whose outcome is unknown (the connection broke after it was sent) is sent again
    with the same key up to `retries` times; 409 idempotency-request-in-flight is retried after
    its Retry-After, for at most `in_flight_wait` seconds in all. Give the route an
    `idempotency:` block for POST and PATCH, or such a retry may apply them twice (PUT and
    DELETE are idempotent by themselves).

    Error answers raise: FencedOut for 409 stale-token and stale-token-at-backend, ProblemError
    for the rest, OutcomeUnknown when retries could not settle a write. 2xx and 3xx answers
    are returned as Response."""

    def __init__(self, url: str, lease: Optional[Lease] = None, *, stop_on_lost: bool = True,
                 retries: int = 3, in_flight_wait: float = 10.0, timeout: float = 30.0,
                 ssl_context: Optional[ssl.SSLContext] = None,
                 headers: Optional[Mapping[str, str]] = None):
        self.endpoint = Endpoint(url, timeout, ssl_context)
        self.lease = lease
        self.stop_on_lost = stop_on_lost
        self.retries = retries
        self.in_flight_wait = in_flight_wait
        self.headers = dict(headers or {})

    def request(self, method: str, path: str, body: Optional[bytes] = None,
                headers: Optional[Mapping[str, str]] = None,
                idempotency_key: Optional[str] = None) -> Response:
        method = method.upper()
        fields = {**self.headers, **(headers or {})}
        write = method in WRITE_METHODS
        if write and idempotency_key is None:
            idempotency_key = uuid.uuid4().hex
        if write:
            fields["Idempotency-Key"] = idempotency_key  # type: ignore[assignment]
        attempts = 0
        in_flight_until: Optional[float] = None
        while True:
            if write and self.lease is not None:
                if self.stop_on_lost:
                    self.lease.check()
                fields.update(self.lease.fencing_headers())
            try:
                response = self.endpoint.exchange(method, path, body, fields)
            except (NotSent, AnswerLost) as error:
                # A read, or a write that never left, is safe to send again; a write that did
                # leave is safe with the same key (the gateway applies a key once).
                attempts += 1
                if attempts > self.retries:
                    if write and isinstance(error, AnswerLost):
                        raise OutcomeUnknown(str(error), idempotency_key) from error
                    raise
                time.sleep(min(0.1 * 2 ** attempts, 2.0))
                continue
            if response.status < 400:
                return response
            problem = problem_of(response)
            if problem.slug == "idempotency-request-in-flight":
                now = time.monotonic()
                if in_flight_until is None:
                    in_flight_until = now + self.in_flight_wait
                pause = problem.retry_after if problem.retry_after is not None else 1.0
                if now + pause <= in_flight_until:
                    time.sleep(pause)
                    continue
            if problem.slug == "idempotency-outcome-unknown":
                raise OutcomeUnknown(str(problem), idempotency_key) from problem
            raise problem

    def get(self, path: str, headers: Optional[Mapping[str, str]] = None) -> Response:
        return self.request("GET", path, headers=headers)

    def put(self, path: str, body: bytes, headers: Optional[Mapping[str, str]] = None,
            idempotency_key: Optional[str] = None) -> Response:
        return self.request("PUT", path, body, headers, idempotency_key)

    def post(self, path: str, body: bytes, headers: Optional[Mapping[str, str]] = None,
             idempotency_key: Optional[str] = None) -> Response:
        return self.request("POST", path, body, headers, idempotency_key)

    def patch(self, path: str, body: bytes, headers: Optional[Mapping[str, str]] = None,
              idempotency_key: Optional[str] = None) -> Response:
        return self.request("PATCH", path, body, headers, idempotency_key)

    def delete(self, path: str, headers: Optional[Mapping[str, str]] = None,
               idempotency_key: Optional[str] = None) -> Response:
        return self.request("DELETE", path, None, headers, idempotency_key)


