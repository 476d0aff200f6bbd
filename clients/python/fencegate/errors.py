"""Exceptions of the fencegate client. Every one derives from FencegateError."""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional

PROBLEM_BASE = "https://fencegate.dev/problems/"


class FencegateError(Exception):
    """Base of every exception this package raises."""


class ProblemError(FencegateError):
    """An answer with an error status. fencegate's own answers are RFC 9457 problem documents
    (application/problem+json); a backend's error without one is kept as `detail`."""

    def __init__(self, status: int, problem: Mapping[str, Any], retry_after: Optional[float] = None):
        self.status = status
        self.problem: dict[str, Any] = dict(problem)
        self.type: str = str(problem.get("type", "about:blank"))
        self.title: Optional[str] = problem.get("title")
        self.detail: Optional[str] = problem.get("detail")
        self.retry_after = retry_after
        super().__init__(f"{status} {self.slug or self.type}: {self.detail or self.title or ''}".rstrip(": "))

    @property
    def slug(self) -> Optional[str]:
        """The last part of fencegate's problem type ("stale-token"), None for other types."""
        return self.type[len(PROBLEM_BASE):] if self.type.startswith(PROBLEM_BASE) else None

    def body(self) -> str:
        """The problem document as JSON text."""
        return json.dumps(self.problem, separators=(",", ":"))


class FencedOut(ProblemError):
    """409: the token is below its fence (a newer holder has written, or the backend keeps a
    higher token). The lock is lost for good; stop working on the resource."""

    def __init__(self, status: int, problem: Mapping[str, Any], retry_after: Optional[float] = None):
        super().__init__(status, problem, retry_after)
        self.fence_key: Optional[str] = problem.get("fence_key")
        self.presented_token: Optional[int] = problem.get("presented_token")
        # Absent where the route does not disclose it (disclose_highest_token).
        self.highest_token: Optional[int] = problem.get("highest_token")
        self.reason: Optional[str] = problem.get("reason")
        # lease-expired, released, force-released (with audit_id) or superseded.
        self.stale_reason: Optional[str] = problem.get("stale_reason")
        self.audit_id: Optional[int] = problem.get("audit_id")


class OutcomeUnknown(FencegateError):
    """A write may or may not have been applied: the connection broke after the request was
    sent and retries with the same Idempotency-Key did not settle it, or fencegate answered
    409 idempotency-outcome-unknown. Read the resource to find out."""

    def __init__(self, message: str, idempotency_key: Optional[str]):
        super().__init__(message)
        self.idempotency_key = idempotency_key


class NotAcquired(FencegateError):
    """The lock was not acquired within the wait."""


class LockHeld(ProblemError, NotAcquired):
    """Built-in locks: 409 lock-held or lock-quarantined (`retry_after`: seconds until the
    lease or delay ends at the earliest)."""


class LeaseLost(FencegateError):
    """The lease is gone (the lock service says so, or it could not be renewed before its TTL
    ended): whatever the holder does now may race a newer holder."""
