"""One HTTP exchange over http.client, telling apart a request that never left from one whose
answer was lost (the difference decides whether a retry can apply a write twice)."""

from __future__ import annotations

import http.client
import json
import ssl
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from .errors import FencedOut, ProblemError

FENCED_OUT_TYPES = ("stale-token", "stale-token-at-backend")


@dataclass
class Response:
    """A complete answer: status, header fields (names lower-cased) and body."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body)

    def text(self) -> str:
        return self.body.decode(errors="replace")


class NotSent(OSError):
    """The connection failed before any byte of the request was sent: retrying is safe."""


class AnswerLost(OSError):
    """The request was (maybe partly) sent and no complete answer came back."""


class Endpoint:
    """A base URL (http:// or https://) that requests are made against."""

    def __init__(self, base_url: str, timeout: float = 30.0,
                 ssl_context: Optional[ssl.SSLContext] = None):
        parts = urllib.parse.urlsplit(base_url if "://" in base_url else "http://" + base_url)
        if parts.scheme not in ("http", "https"):
            raise ValueError(f"not an http:// or https:// URL: {base_url}")
        self.scheme = parts.scheme
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port
        self.base_path = parts.path.rstrip("/")
        self.timeout = timeout
        self.ssl_context = ssl_context

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout,
                                               context=self.ssl_context)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def exchange(self, method: str, path: str, body: Optional[bytes] = None,
                 headers: Optional[Mapping[str, str]] = None,
                 timeout: Optional[float] = None) -> Response:
        """Raises NotSent or AnswerLost for transport failures; any status is returned."""
        connection = self._connection(self.timeout if timeout is None else timeout)
        try:
            try:
                connection.connect()
            except OSError as error:
                raise NotSent(f"{method} {path}: cannot connect: {error}") from error
            try:
                connection.request(method, self.base_path + path, body=body,
                                   headers=dict(headers or {}))
                answer = connection.getresponse()
                return Response(answer.status,
                                {name.lower(): value for name, value in answer.getheaders()},
                                answer.read())
            except (OSError, http.client.HTTPException) as error:
                raise AnswerLost(f"{method} {path}: no answer: {error!r}") from error
        finally:
            connection.close()


def retry_after(response: Response) -> Optional[float]:
    value = response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fencegate never sends one


def problem_of(response: Response) -> ProblemError:
    """The exception for an error answer: FencedOut for a stale token, else ProblemError."""
    problem: dict[str, Any] = {}
    if response.headers.get("content-type", "").startswith(("application/problem+json",
                                                             "application/json")):
        try:
            parsed = response.json()
            if isinstance(parsed, dict):
                problem = parsed
        except ValueError:
            pass
    if not problem:
        problem = {"type": "about:blank", "status": response.status,
                   "detail": response.text()[:1000]}
    error = ProblemError(response.status, problem, retry_after(response))
    if response.status == 409 and error.slug in FENCED_OUT_TYPES:
        return FencedOut(response.status, problem, error.retry_after)
    return error
