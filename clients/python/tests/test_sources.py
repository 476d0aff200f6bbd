"""The token sources against real lock services (Debian's etcd, ZooKeeper, Redis, PostgreSQL,
started as tests/lock_services starts them) and the real fencegate binary: the token is what the
service says it is and grows with every holder, a busy lock is not acquired, and a lease the
service takes away is noticed by the keeper and stops fenced writes."""

import threading
import unittest

import support
from support import DEADLINE_SECONDS, WorkDir

import fencegate
from etcd_test import Etcd
from fencegate.sources.etcd import EtcdLocks
from fencegate.sources.postgresql import PostgresLocks
from fencegate.sources.redis import RedisLocks
from fencegate.sources.zookeeper import ZooKeeperLocks
from postgresql_test import PostgreSQL
from redis_test import Redis
from zookeeper_test import ZooKeeper


def setUpModule():
    global workdir, gateway
    workdir = WorkDir("fencegate-client-sources-")
    gateway = support.harness.Fencegate(workdir.sub("gateway"))


def tearDownModule():
    gateway.stop()
    workdir.remove()


class SourceContract:
    """What every source must do; a subclass supplies the service."""

    def locks(self):
        raise NotImplementedError

    def check_token(self, lease):
        raise NotImplementedError

    def take_away(self, lease):
        raise NotImplementedError

    def test_tokens_grow_with_every_holder_and_a_busy_lock_is_not_acquired(self):
        locks, name = self.locks(), f"{self.service}-row"
        path = f"/files/{name}.txt"
        with locks.acquire(name, ttl=2, wait=10) as first:
            self.check_token(first)
            fencegate.FencedSession(gateway.url, first).put(path, b"first\n")
            with self.assertRaises(fencegate.NotAcquired):
                locks.acquire(name, ttl=2, wait=0.5)
        with locks.acquire(name, ttl=2, wait=10) as second:
            self.check_token(second)
            self.assertGreater(second.token, first.token)
            fencegate.FencedSession(gateway.url, second).put(path, b"second\n")
        with self.assertRaises(fencegate.FencedOut):
            fencegate.FencedSession(gateway.url, first, stop_on_lost=False).put(path, b"late\n")
        self.assertEqual(gateway.read(path), "second\n")

    def test_a_lease_the_service_takes_away_is_noticed(self):
        called = threading.Event()
        name = f"{self.service}-taken"
        with self.locks().acquire(name, ttl=2, wait=10, on_lost=lambda _: called.set()) as lease:
            session = fencegate.FencedSession(gateway.url, lease)
            session.put(f"/files/{name}.txt", b"mine\n")
            self.take_away(lease)
            self.assertTrue(lease.lost.wait(DEADLINE_SECONDS))
            self.assertTrue(called.is_set())
            with self.assertRaises(fencegate.LeaseLost):
                session.put(f"/files/{name}.txt", b"late\n")


class EtcdSourceTest(SourceContract, unittest.TestCase):
    service = "etcd"

    @classmethod
    def setUpClass(cls):
        cls.dir = WorkDir("fencegate-client-etcd-")
        cls.etcd = Etcd(cls.dir)

    @classmethod
    def tearDownClass(cls):
        cls.etcd.process.stop()
        cls.dir.remove()

    def locks(self):
        return EtcdLocks(self.etcd.url)

    def check_token(self, lease):
        self.assertEqual(int(self.etcd.key(lease.key)["create_revision"]), lease.token)

    def take_away(self, lease):
        self.etcd.call("lease/revoke", {"ID": lease.lease_id})


class ZooKeeperSourceTest(SourceContract, unittest.TestCase):
    service = "zookeeper"

    @classmethod
    def setUpClass(cls):
        cls.dir = WorkDir("fencegate-client-zookeeper-")
        cls.zookeeper = ZooKeeper(cls.dir)

    @classmethod
    def tearDownClass(cls):
        cls.zookeeper.stop()
        cls.dir.remove()

    def locks(self):
        return ZooKeeperLocks(self.zookeeper.address)

    def check_token(self, lease):
        self.assertEqual(self.zookeeper.client.exists(lease.node).czxid, lease.token)

    def take_away(self, lease):
        self.zookeeper.client.delete(lease.node)


class RedisSourceTest(SourceContract, unittest.TestCase):
    service = "redis"

    @classmethod
    def setUpClass(cls):
        cls.dir = WorkDir("fencegate-client-redis-")
        cls.redis = Redis(cls.dir)

    @classmethod
    def tearDownClass(cls):
        cls.redis.client.close()
        cls.redis.process.stop()
        cls.dir.remove()

    def locks(self):
        return RedisLocks(self.redis.url)

    def check_token(self, lease):
        self.assertEqual(int(self.redis.client.get(f"fence:{lease.name}")), lease.token)
        self.assertEqual(self.redis.client.get(f"lock:{lease.name}").decode(), lease.owner)

    def take_away(self, lease):
        self.redis.client.delete(f"lock:{lease.name}")


class PostgresSourceTest(SourceContract, unittest.TestCase):
    service = "postgresql"

    @classmethod
    def setUpClass(cls):
        cls.dir = WorkDir("fencegate-client-pg-")
        cls.postgresql = PostgreSQL(cls.dir)

    @classmethod
    def tearDownClass(cls):
        cls.postgresql.stop()
        cls.dir.remove()

    def locks(self):
        return PostgresLocks(self.postgresql.dsn)

    def check_token(self, lease):
        last = self.postgresql.query(f'SELECT last_value FROM "fence:{lease.name}"')[0][0]
        self.assertEqual(last, lease.token)

    def take_away(self, lease):
        self.postgresql.query("SELECT pg_terminate_backend(%s)",
                              (lease.connection.get_backend_pid(),))


if __name__ == "__main__":
    unittest.main(verbosity=2)
