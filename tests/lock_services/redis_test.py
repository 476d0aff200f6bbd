"""Redis 7 (Debian redis-server) started for real on loopback: the examples take the lock with
SET NX PX and the token with INCR in the same Lua script, and a client whose lease expired is
fenced off by fencegate once the next holder has written."""

import os
import unittest

import redis

import harness


class Redis:
    def __init__(self, workdir):
        port = harness.free_port()
        self.url = f"redis://127.0.0.1:{port}"
        self.process = harness.Process(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--dir",
             workdir.sub("redis"), "--save", "", "--appendonly", "no"],
            os.path.join(workdir.path, "redis.log"))
        self.client = redis.Redis.from_url(self.url)
        harness.wait_until(self._ready, "redis-server to answer PING")

    def _ready(self):
        if self.process.popen.poll() is not None:
            raise AssertionError("redis-server exited:\n" + self.process.log_text())
        try:
            return self.client.ping()
        except redis.ConnectionError:
            return False


class RedisLocks:
    """What the zombie scenario needs to know about Redis."""

    def __init__(self, test, server, fencegate):
        self.test = test
        self.client = server.client
        self.fencegate = fencegate
        self.env = {"FENCEGATE_URL": fencegate.url, "REDIS_URL": server.url}

    def check_holder(self, acquired):
        # The lock key holds this holder's owner id with a lease on it, and the counter next to
        # it is at this holder's token: the token was taken together with the lock.
        lock = acquired["lock"]
        self.test.assertEqual(self.client.get(f"lock:{lock}").decode(), acquired["owner"])
        self.test.assertGreater(self.client.pttl(f"lock:{lock}"), 0)
        self.test.assertEqual(int(self.client.get(f"fence:{lock}")), int(acquired["token"]))

    def wait_lock_free(self, acquired):
        harness.wait_until(lambda: not self.client.exists(f"lock:{acquired['lock']}"),
                           "the frozen holder's lock key to expire")


class RedisTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.workdir = harness.WorkDir("fencegate-redis-")
        cls.redis = Redis(cls.workdir)
        cls.fencegate = harness.Fencegate(cls.workdir.sub("fencegate"))

    @classmethod
    def tearDownClass(cls):
        cls.fencegate.stop()
        cls.redis.client.close()
        cls.redis.process.stop()
        cls.workdir.remove()

    def scenario(self, first, second, name):
        locks = RedisLocks(self, self.redis, self.fencegate)
        harness.zombie_takeover(self, locks, harness.example("redis", first),
                                harness.example("redis", second), name, f"/files/{name}.txt")
        # The successor released its lock on exit.
        self.assertFalse(self.redis.client.exists(f"lock:{name}"))

    def test_redis_cli_holder_is_fenced_after_its_lease_expires(self):
        self.scenario("shell", "python", "cli-first")

    def test_redis_py_holder_is_fenced_after_its_lease_expires(self):
        self.scenario("python", "shell", "py-first")

    def test_a_waiting_client_gets_the_lock_and_a_higher_token_on_release(self):
        # The first holder stays alive; the second waits (polls) and gets the lock once the first
        # released it, with the next token.
        locks = RedisLocks(self, self.redis, self.fencegate)
        env = {**locks.env, "LEASE_SECONDS": str(harness.LEASE_SECONDS), "WAIT_SECONDS": "30"}
        first = harness.Example(harness.example("redis", "shell") + ["queue", "/files/queue.txt"], env)
        first.send("first")
        first_lock = first.expect("acquired")
        first.expect("wrote")
        second = harness.Example(harness.example("redis", "python") + ["queue", "/files/queue.txt"],
                                 env)
        second.send("second")
        second.close_input()
        first.close_input()
        self.assertEqual(first.wait(), 0, first.output)
        second_lock = second.expect("acquired")
        self.assertEqual(int(second_lock["token"]), int(first_lock["token"]) + 1)
        self.assertEqual(second.wait(), 0, second.output)
        self.assertEqual(self.fencegate.read("/files/queue.txt"), "second\n")

    def test_a_client_gives_up_on_a_busy_lock_after_its_wait(self):
        locks = RedisLocks(self, self.redis, self.fencegate)
        for holder, waiter in (("shell", "python"), ("python", "shell")):
            harness.busy_lock_times_out(self, locks, harness.example("redis", holder),
                                        harness.example("redis", waiter), f"busy-{holder}",
                                        f"/files/busy-{holder}.txt")


if __name__ == "__main__":
    unittest.main(verbosity=2)
