"""A PostgreSQL advisory lock (pg_try_advisory_lock on hashtext(NAME)) with its token (nextval
of a CACHE 1 sequence "fence:NAME") taken in the same statement, with psycopg2 (Debian:
python3-psycopg2). idle_session_timeout turns the session-long lock into a lease: the server
ends a session that stays silent for the TTL, and the lock goes with it."""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

import psycopg2
from psycopg2 import sql

from ..errors import LeaseLost, NotAcquired
from ..lease import Lease, Renewal

# nextval runs only once the lock is ours (CASE evaluates its branches in order), so a holder's
# token is always higher than every earlier holder's.
ACQUIRE = """SELECT CASE WHEN pg_try_advisory_lock(hashtext(%(lock)s))
             THEN nextval(quote_ident(%(sequence)s)::regclass) END"""


class PostgresLocks:
    """`dsn`: a libpq connection string (empty: PGHOST, PGPORT, PGUSER, PGDATABASE)."""

    def __init__(self, dsn: str = "", poll: float = 0.2):
        self.dsn = dsn
        self.poll = poll

    def acquire(self, name: str, ttl: float = 10.0, wait: float = 30.0,
                on_lost: Optional[Callable[[Lease], None]] = None,
                raise_in_worker: bool = False) -> "PostgresLease":
        names = {"lock": name, "sequence": f"fence:{name}"}
        connection = psycopg2.connect(
            self.dsn,
            options=f"-c idle_session_timeout={max(1, round(ttl * 1000))}ms "
                    "-c client_min_messages=warning")
        connection.autocommit = True
        try:
            with connection.cursor() as cursor:
                # CACHE 1: every nextval comes from the shared sequence, in order; with a larger
                # cache a later holder could get a lower number from its session's block.
                cursor.execute(sql.SQL("CREATE SEQUENCE IF NOT EXISTS {} CACHE 1").format(
                    sql.Identifier(names["sequence"])))
                deadline = time.monotonic() + wait
                while True:
                    sent = time.monotonic()
                    cursor.execute(ACQUIRE, names)
                    row: Any = cursor.fetchone()
                    if row[0] is not None:
                        return PostgresLease(connection, name, int(row[0]), ttl, sent, on_lost,
                                             raise_in_worker)
                    if time.monotonic() > deadline:
                        raise NotAcquired(f"{name} within {wait}s")
                    time.sleep(self.poll)
        except BaseException:
            connection.close()
            raise


class PostgresLease(Lease):
    """`connection` is the session holding the advisory lock."""

    def __init__(self, connection: Any, name: str, token: int, ttl: float, sent_at: float,
                 on_lost: Optional[Callable[[Lease], None]], raise_in_worker: bool):
        self.connection = connection
        super().__init__(name, token, ttl, sent_at, None, on_lost, raise_in_worker)

    def _renew(self, timeout: float) -> Renewal:
        # Any statement resets idle_session_timeout; a session that ended took the lock along.
        try:
            with self.connection.cursor() as cursor:
                cursor.execute("SELECT 1")
        except psycopg2.Error as error:
            raise LeaseLost(f"session ended ({str(error).strip()})") from error
        return Renewal(self.ttl)

    def _release(self) -> None:
        # Closing the session releases its advisory lock, and only its own.
        self.connection.close()
