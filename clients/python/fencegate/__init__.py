"""fencegate client: built-in locks, fencing tokens from etcd, ZooKeeper, Redis and PostgreSQL,
and an HTTP session that writes through fencegate with the current token.

    locks = fencegate.LockClient("http://127.0.0.1:8080")
    with locks.acquire("orders-42", ttl=30) as lease:
        session = fencegate.FencedSession("http://127.0.0.1:8080", lease)
        session.put("/kv/orders-42/state", b"...")    # FencedOut once a newer holder wrote
"""

from ._http import Response
from .errors import (FencedOut, FencegateError, LeaseLost, LockHeld, NotAcquired,
                     OutcomeUnknown, ProblemError)
from .lease import Lease, Renewal
from .locks import BuiltinLease, LockClient
from .session import FencedSession

__version__ = "0.1.0"

__all__ = ["BuiltinLease", "FencedOut", "FencedSession", "FencegateError", "Lease", "LeaseLost",
           "LockClient", "LockHeld", "NotAcquired", "OutcomeUnknown", "ProblemError", "Renewal",
           "Response", "__version__"]
