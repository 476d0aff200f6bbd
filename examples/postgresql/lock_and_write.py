#!/usr/bin/python3
"""Takes a PostgreSQL advisory lock (pg_try_advisory_lock) and, in the same statement, the
fencing token (nextval of a sequence with CACHE 1) with psycopg2 (Debian: python3-psycopg2),
then writes through fencegate: one PUT of RESOURCE_PATH per line of standard input.

    printf 'v1\\nv2\\n' | examples/postgresql/lock_and_write.py LOCK_NAME RESOURCE_PATH

An advisory lock lives as long as its session, and a stalled client's session can live on
forever; idle_session_timeout (the lease) turns it into a lease: the server ends a session that
stays silent that long, and the lock goes with it. A thread keeps a live client's session busy.
Exit codes: 0 written, 3 refused by fencegate (the lock was lost), 4 lock not acquired in time,
1 other failure, 2 usage.
"""

import argparse
import os
import sys
import threading
import time

import psycopg2
from psycopg2 import sql

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import fencegate  # noqa: E402

# nextval runs only once the lock is ours (CASE evaluates its branches in order), so a holder's
# token is always higher than every earlier holder's.
ACQUIRE = """SELECT CASE WHEN pg_try_advisory_lock(hashtext(%(lock)s))
             THEN nextval(quote_ident(%(sequence)s)::regclass) END"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lock_name")
    parser.add_argument("resource_path")
    parser.add_argument("--fencegate", default=fencegate.DEFAULT_URL)
    parser.add_argument("--dsn", default=os.environ.get("PG_DSN", ""),
                        help="libpq connection string; empty: PGHOST, PGPORT, PGUSER, PGDATABASE")
    parser.add_argument("--lease-seconds", type=int, default=int(os.environ.get("LEASE_SECONDS", 10)))
    parser.add_argument("--wait-seconds", type=float, default=float(os.environ.get("WAIT_SECONDS", 30)))
    args = parser.parse_args()
    names = {"lock": args.lock_name, "sequence": f"fence:{args.lock_name}"}

    def keep_alive(connection, stop):
        while not stop.wait(args.lease_seconds / 3):
            try:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT 1")
            except psycopg2.Error as error:
                fencegate.report(f"session ended ({str(error).strip()}): the lock is lost")
                return

    def acquire_and_write():
        connection = psycopg2.connect(
            args.dsn,
            options=f"-c idle_session_timeout={args.lease_seconds}s -c client_min_messages=warning")
        connection.autocommit = True
        stop = threading.Event()
        try:
            with connection.cursor() as cursor:
                # CACHE 1: every nextval comes from the shared sequence, in order. With a larger
                # cache each session hands out numbers from its own pre-allocated block, and a
                # later holder could get a lower number than an earlier one.
                cursor.execute(sql.SQL("CREATE SEQUENCE IF NOT EXISTS {} CACHE 1").format(
                    sql.Identifier(names["sequence"])))
                deadline = time.monotonic() + args.wait_seconds
                while True:
                    cursor.execute(ACQUIRE, names)
                    token = cursor.fetchone()[0]
                    if token is not None:
                        break
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"{args.lock_name} within {args.wait_seconds}s")
                    time.sleep(0.2)
            threading.Thread(target=keep_alive, args=(connection, stop), daemon=True).start()
            fencegate.report(f"acquired lock={args.lock_name} token={token}")
            fencegate.write_lines(args.fencegate, args.resource_path, token)
        finally:
            stop.set()
            # Closing the session releases its advisory lock; a session that already ended has
            # none left, and it can never release another session's.
            connection.close()

    return fencegate.run_worker(acquire_and_write)


if __name__ == "__main__":
    sys.exit(main())
