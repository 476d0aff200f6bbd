"""The shape every lock in this package has: a held lease with a fencing token, kept alive by a
background thread, which notices when the lease is lost and stops the work."""

from __future__ import annotations

import ctypes
import threading
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Callable, Optional, Type

from .errors import LeaseLost


@dataclass
class Renewal:
    """What a successful renewal tells: the lease's TTL counted from when the renewal was sent,
    and, for signed built-in locks, the fresh signature."""

    ttl: float
    signature: Optional[str] = None


class Lease:
    """A held lock. `token` is the fencing token; `lost` is set once the lease is gone.

    A subclass supplies `_renew(timeout)` (returns a Renewal, raises LeaseLost when the lock
    service says the lease is gone, any other exception for a failure worth retrying) and
    `_release()`. The keeper renews when a third of the TTL has passed since the last renewal;
    a lease counts as lost at its deadline, `ttl` after the last successful renewal was *sent*
    (so the client's view of the lease never outlasts the server's), if no renewal got through.

    On loss: `lost` is set, `check()` and fenced writes raise LeaseLost, `on_lost(lease)` is
    called on the keeper thread, and with `raise_in_worker` the thread that entered the `with`
    block gets LeaseLost raised asynchronously (at its next Python instruction; a call blocked
    in C, such as a socket read, finishes first)."""

    def __init__(self, name: str, token: int, ttl: float, sent_at: float,
                 signature: Optional[str] = None,
                 on_lost: Optional[Callable[["Lease"], None]] = None,
                 raise_in_worker: bool = False):
        self.name = name
        self.token = token
        self.signature = signature
        self.ttl = ttl
        self.lost = threading.Event()
        self.lost_reason: Optional[str] = None
        self._deadline = sent_at + ttl
        self._on_lost = on_lost
        self._raise_in_worker = raise_in_worker
        self._worker: Optional[int] = None
        self._state = threading.Lock()
        self._stop = threading.Event()
        self._released = False
        self._keeper = threading.Thread(target=self._keep, name=f"fencegate-lease-{name}",
                                        daemon=True)
        self._keeper.start()

    # --- what subclasses provide -------------------------------------------------------------

    def _renew(self, timeout: float) -> Renewal:
        raise NotImplementedError

    def _release(self) -> None:
        raise NotImplementedError

    # --- the holder's side -------------------------------------------------------------------

    def remaining(self) -> float:
        """Seconds until the lease ends in the client's view (0 once lost)."""
        if self.lost.is_set():
            return 0.0
        return max(0.0, self._deadline - time.monotonic())

    def check(self) -> None:
        """Raises LeaseLost if the lease is lost or its deadline has passed."""
        if not self.lost.is_set() and time.monotonic() >= self._deadline:
            self._lose("not renewed before the lease ended")
        if self.lost.is_set():
            raise LeaseLost(f"lock {self.name} (token {self.token}): {self.lost_reason}")

    def fencing_headers(self) -> dict[str, str]:
        """Fencing-Token, and Fencing-Token-Signature when the grant carried one."""
        headers = {"Fencing-Token": str(self.token)}
        if self.signature:
            headers["Fencing-Token-Signature"] = self.signature
        return headers

    def release(self) -> None:
        """Stops renewing and releases the lock (a lease already lost releases nothing, and a
        release never frees a successor's lock). Idempotent."""
        with self._state:
            if self._released:
                return
            self._released = True
            self._worker = None
        self._stop.set()
        if self._keeper is not threading.current_thread():
            self._keeper.join()
        self._release()

    def __enter__(self) -> "Lease":
        with self._state:
            self._worker = threading.get_ident()
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        try:
            self.release()
        except Exception:
            # A lease that cannot be released ends with its TTL anyway; the block's own
            # exception (a FencedOut, say) is the one worth seeing.
            if kind is None:
                raise
        # An asynchronous LeaseLost scheduled just as the block ended but not yet delivered
        # would surface after the block; cancel it.
        if self._raise_in_worker:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(threading.get_ident()),
                                                       None)

    # --- the keeper ----------------------------------------------------------------------------

    def _lose(self, reason: str) -> None:
        with self._state:
            if self.lost.is_set():
                return
            self.lost_reason = reason
            self.lost.set()
            worker = self._worker if self._raise_in_worker else None
        # check() on the worker itself raises LeaseLost anyway.
        if worker is not None and worker != threading.get_ident():
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker),
                                                       ctypes.py_object(LeaseLost))
        if self._on_lost is not None:
            self._on_lost(self)

    def _keep(self) -> None:
        failure: Optional[BaseException] = None
        while True:
            now = time.monotonic()
            if now >= self._deadline:
                self._lose(f"not renewed before the lease ended (last error: {failure!r})"
                           if failure else "not renewed before the lease ended")
                return
            # Renew once a third of the TTL has passed; after a failure, retry soon.
            due = self._deadline - self.ttl * 2 / 3 if failure is None else now + self.ttl / 10
            if self._stop.wait(max(0.0, min(due, self._deadline) - now)):
                return
            if time.monotonic() >= self._deadline:
                continue
            sent = time.monotonic()
            try:
                renewal = self._renew(max(0.05, self._deadline - sent))
            except LeaseLost as error:
                if not self._stop.is_set():
                    self._lose(str(error))
                return
            except Exception as error:  # a failure worth retrying until the deadline
                failure = error
                continue
            failure = None
            with self._state:
                self.ttl = renewal.ttl
                self._deadline = sent + renewal.ttl
                if renewal.signature:
                    self.signature = renewal.signature
