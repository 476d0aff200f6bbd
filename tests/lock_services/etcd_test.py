"""etcd 3.4 (Debian etcd-server + etcd-client) started for real on loopback: the examples take the
lock, use the lock key's create_revision as the token, and a client whose lease lapsed is fenced
off by fencegate once the next holder has written."""

import base64
import json
import os
import unittest
import urllib.request

import harness


def b64(text):
    return base64.b64encode(text.encode()).decode()


class Etcd:
    def __init__(self, workdir):
        client, peer = harness.free_port(), harness.free_port()
        self.url = f"http://127.0.0.1:{client}"
        peer_url = f"http://127.0.0.1:{peer}"
        self.process = harness.Process(
            ["etcd", "--name", "test", "--data-dir", workdir.sub("etcd"),
             "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
             "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
             "--initial-cluster", f"test={peer_url}", "--initial-cluster-state", "new"],
            os.path.join(workdir.path, "etcd.log"))
        harness.wait_until(self._healthy, "etcd /health")

    def _healthy(self):
        if self.process.popen.poll() is not None:
            raise AssertionError("etcd exited:\n" + self.process.log_text())
        try:
            return harness.http("GET", self.url + "/health")[0] == 200
        except OSError:
            return False

    def call(self, method, body):
        request = urllib.request.Request(f"{self.url}/v3/{method}", data=json.dumps(body).encode())
        with urllib.request.urlopen(request, timeout=harness.DEADLINE_SECONDS) as response:
            return json.load(response)

    def key(self, key):
        kvs = self.call("kv/range", {"key": b64(key)}).get("kvs", [])
        return kvs[0] if kvs else None


class EtcdLocks:
    """What the zombie scenario needs to know about etcd."""

    def __init__(self, test, etcd, fencegate):
        self.test = test
        self.etcd = etcd
        self.fencegate = fencegate
        self.env = {"FENCEGATE_URL": fencegate.url, "ETCD_ENDPOINT": etcd.url}

    def check_holder(self, acquired):
        # The token is the lock key's create_revision, read back from etcd, and not its lease.
        kv = self.etcd.key(acquired["key"])
        self.test.assertIsNotNone(kv, acquired)
        self.test.assertEqual(int(kv["create_revision"]), int(acquired["token"]))
        self.test.assertNotEqual(kv["lease"], acquired["token"])

    def wait_lock_free(self, acquired):
        harness.wait_until(lambda: self.etcd.key(acquired["key"]) is None,
                           f"the frozen holder's lease to expire and {acquired['key']} to go")


class EtcdTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.workdir = harness.WorkDir("fencegate-etcd-")
        cls.etcd = Etcd(cls.workdir)
        cls.fencegate = harness.Fencegate(cls.workdir.sub("fencegate"))

    @classmethod
    def tearDownClass(cls):
        cls.fencegate.stop()
        cls.etcd.process.stop()
        cls.workdir.remove()

    def scenario(self, first, second, name):
        locks = EtcdLocks(self, self.etcd, self.fencegate)
        return harness.zombie_takeover(self, locks, harness.example("etcd", first),
                                       harness.example("etcd", second), f"jobs/{name}",
                                       f"/files/{name}.txt")

    def test_etcdctl_holder_is_fenced_after_its_lease_expires(self):
        self.scenario("shell", "python", "etcdctl-first")

    def test_json_gateway_holder_is_fenced_after_its_lease_expires(self):
        self.scenario("python", "shell", "gateway-first")

    def test_tokens_are_create_revisions_that_grow_with_every_holder(self):
        # Three holders in a row on one lock, each through a fresh lease: every token is the
        # create_revision of that holder's key (check_holder) and exceeds the one before.
        locks = EtcdLocks(self, self.etcd, self.fencegate)
        env = {**locks.env, "LEASE_SECONDS": str(harness.LEASE_SECONDS)}
        tokens = []
        for language in ("shell", "python", "shell"):
            run = harness.Example(harness.example("etcd", language) + ["jobs/row", "/files/row.txt"],
                                  env)
            run.send(f"holder {len(tokens)}")
            acquired = run.expect("acquired")
            run.expect("wrote")
            # The example holds the lock until its input ends: read the key while it is
            # certainly there, then let it release.
            locks.check_holder(acquired)
            run.close_input()
            self.assertEqual(run.wait(), 0, run.output)
            tokens.append(int(acquired["token"]))
        self.assertEqual(tokens, sorted(set(tokens)))
        self.assertEqual(self.fencegate.read("/files/row.txt"), "holder 2\n")

    def test_a_client_gives_up_on_a_busy_lock_after_its_wait(self):
        locks = EtcdLocks(self, self.etcd, self.fencegate)
        for holder, waiter in (("shell", "python"), ("python", "shell")):
            harness.busy_lock_times_out(self, locks, harness.example("etcd", holder),
                                        harness.example("etcd", waiter), f"busy-{holder}",
                                        f"/files/busy-{holder}.txt")


if __name__ == "__main__":
    unittest.main(verbosity=2)
