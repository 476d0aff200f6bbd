#!/usr/bin/python3
"""Takes a PostgreSQL advisory lock (pg_try_advisory_lock) and, in the same statement, the
fencing token (nextval of a sequence with CACHE 1) with psycopg2 (Debian: python3-psycopg2),
then writes through fencegate: one PUT of RESOURCE_PATH per line of standard input.

    printf 'v1\\nv2\\n' | examples/postgresql/lock_and_write.py LOCK_NAME RESOURCE_PATH

An advisory lock lives as long as its session, and a stalled client's session can live on
forever; idle_session_timeout (the lease) turns it into a lease: the server ends a session that
stays silent that long, and the lock goes with it. The library's lease keeper keeps a live
client's session busy (clients/python: fencegate.sources.postgresql).
Exit codes: 0 written, 3 refused by fencegate (the lock was lost), 4 lock not acquired in time,
1 other failure, 2 usage.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import example  # noqa: E402
from fencegate.sources.postgresql import PostgresLocks  # noqa: E402


def main():
    args = example.arguments(__doc__, "--dsn", "PG_DSN", "",
                             "libpq connection string; empty: PGHOST, PGPORT, PGUSER, PGDATABASE")
    return example.lock_and_write(args, PostgresLocks(args.dsn))


if __name__ == "__main__":
    sys.exit(main())
