"""A Redis lock (SET NX PX) with its token (INCR of a counter next to it) taken in the same Lua
script, with redis-py (Debian: python3-redis): no holder ever runs with a token lower than its
predecessor's. Keys: lock:NAME (the owner's random id), fence:NAME (the last token)."""

from __future__ import annotations

import time
import uuid
from typing import Any, Callable, Optional, Union

import redis

from ..errors import LeaseLost, NotAcquired
from ..lease import Lease, Renewal

ACQUIRE = """if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  return redis.call("INCR", KEYS[2]) end return false"""
# Renew and release touch the lock only while it still holds our owner id.
RENEW = """if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0"""
RELEASE = """if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1]) end return 0"""


class RedisLocks:
    """`server`: a redis:// URL or a redis.Redis client. Keep the fence:NAME counter durable
    (appendonly, one primary): a counter that resets stalls every holder."""

    def __init__(self, server: Union[str, "redis.Redis[Any]"] = "redis://127.0.0.1:6379",
                 poll: float = 0.1):
        self.client = redis.Redis.from_url(server) if isinstance(server, str) else server
        self.poll = poll
        self.acquire_script, self.renew_script, self.release_script = (
            self.client.register_script(s) for s in (ACQUIRE, RENEW, RELEASE))

    def acquire(self, name: str, ttl: float = 10.0, wait: float = 30.0,
                on_lost: Optional[Callable[[Lease], None]] = None,
                raise_in_worker: bool = False) -> "RedisLease":
        keys = [f"lock:{name}", f"fence:{name}"]
        owner = uuid.uuid4().hex
        deadline = time.monotonic() + wait
        while True:
            sent = time.monotonic()
            token = self.acquire_script(keys=keys, args=[owner, round(ttl * 1000)])
            if token is not None:
                return RedisLease(self, keys, owner, name, int(token), ttl, sent, on_lost,
                                  raise_in_worker)
            if time.monotonic() > deadline:
                raise NotAcquired(f"{name} within {wait}s")
            time.sleep(self.poll)


class RedisLease(Lease):
    """`owner` is the random id stored in lock:NAME."""

    def __init__(self, locks: RedisLocks, keys: list[str], owner: str, name: str, token: int,
                 ttl: float, sent_at: float, on_lost: Optional[Callable[[Lease], None]],
                 raise_in_worker: bool):
        self.locks = locks
        self.keys = keys
        self.owner = owner
        super().__init__(name, token, ttl, sent_at, None, on_lost, raise_in_worker)

    def _renew(self, timeout: float) -> Renewal:
        if self.locks.renew_script(keys=self.keys, args=[self.owner, round(self.ttl * 1000)]) != 1:
            raise LeaseLost(f"{self.keys[0]} expired or taken over")
        return Renewal(self.ttl)

    def _release(self) -> None:
        self.locks.release_script(keys=self.keys, args=[self.owner])
