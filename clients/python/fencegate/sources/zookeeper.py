"""ZooKeeper's lock recipe with kazoo (Debian: python3-kazoo): an ephemeral sequential node
under /locks/NAME, named as kazoo names it so other kazoo clients contend for the same lock.
The token is the node's czxid, ZooKeeper's global transaction counter: a later holder's node
always has a higher one (the sequence suffix restarts if the parent is recreated)."""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import LockTimeout

from ..errors import LeaseLost, NotAcquired
from ..lease import Lease, Renewal


class ZooKeeperLocks:
    """`hosts`: kazoo's "HOST:PORT[,HOST:PORT...]"; locks live under `root`; a session must be
    established within `connect_timeout` seconds."""

    def __init__(self, hosts: str = "127.0.0.1:2181", root: str = "/locks",
                 connect_timeout: float = 10.0):
        self.hosts = hosts
        self.root = root.rstrip("/")
        self.connect_timeout = connect_timeout

    def acquire(self, name: str, ttl: float = 10.0, wait: float = 30.0,
                on_lost: Optional[Callable[[Lease], None]] = None,
                raise_in_worker: bool = False) -> "ZooKeeperLease":
        """Opens a session whose timeout is `ttl` (the node dies that long after the client
        stalls) and takes the lock, waiting up to `wait` seconds."""
        zk = KazooClient(hosts=self.hosts, timeout=ttl)
        sent = time.monotonic()
        lock = zk.Lock(f"{self.root}/{name}")
        try:
            zk.start(timeout=self.connect_timeout)
            try:
                lock.acquire(timeout=wait)
            except LockTimeout as error:
                raise NotAcquired(f"{name} within {wait}s") from error
            node = f"{lock.path}/{lock.node}"
            return ZooKeeperLease(zk, lock, node, name, zk.exists(node).czxid, ttl, sent,
                                  on_lost, raise_in_worker)
        except BaseException:
            lock.release()
            zk.stop()
            zk.close()
            raise


class ZooKeeperLease(Lease):
    """`node` is the lock node; `sequence` its sequence number."""

    def __init__(self, zk: KazooClient, lock: Any, node: str, name: str, token: int, ttl: float,
                 sent_at: float, on_lost: Optional[Callable[[Lease], None]],
                 raise_in_worker: bool):
        self.zk = zk
        self.lock = lock
        self.node = node
        self.sequence = int(node.rsplit("__lock__", 1)[1])
        super().__init__(name, token, ttl, sent_at, None, on_lost, raise_in_worker)
        zk.add_listener(self._session_changed)

    def _session_changed(self, state: str) -> None:
        if state == KazooState.LOST:
            self._lose("ZooKeeper session lost")

    def _renew(self, timeout: float) -> Renewal:
        # kazoo keeps the session alive by itself; the keeper makes sure the node is still there.
        if self.zk.state == KazooState.LOST:
            raise LeaseLost("ZooKeeper session lost")
        if self.zk.state != KazooState.CONNECTED:
            raise ConnectionError(f"ZooKeeper session {self.zk.state}")
        if self.zk.exists_async(self.node).get(timeout=timeout) is None:
            raise LeaseLost(f"lock node {self.node} is gone")
        return Renewal(self.ttl)

    def _release(self) -> None:
        # Deletes our own node only (its name carries our uuid), never a successor's.
        try:
            self.lock.release()
        finally:
            self.zk.stop()
            self.zk.close()
