"""Fencing tokens from lock services you already run, with the same Lease shape as the built-in
locks. Each module imports its service's client only when used: `etcd` needs nothing (etcd's v3
JSON gateway over urllib), `zookeeper` needs kazoo, `redis` redis-py, `postgresql` psycopg2
(Debian: python3-kazoo, python3-redis, python3-psycopg2)."""
