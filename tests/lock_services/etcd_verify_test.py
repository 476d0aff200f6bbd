"""A route's live check of inflated tokens against a real etcd (Debian etcd-server) on loopback
(docs/LOCKS_AND_TOKENS.md "Token inflation", verify_tokens): an unsigned token more than max_token_advance above the fence
is admitted only while etcd's lock API shows a holder whose lock key was created at exactly that
revision. A forged token, a released holder's token and an unreachable etcd leave the fence as
it was."""

import json
import statistics
import time
import unittest
import urllib.parse

import harness
from etcd_test import Etcd, b64

MAX_ADVANCE = 5

ROUTE = """  - name: jobs
    prefix: /jobs/
    backend: files
    fence_key: "jobs:{path}"
    max_token_advance: %d
    verify_tokens:
      etcd:
        endpoints: ["{endpoint}"]
        lock_name: "verify/{segment:2}"
        timeout: 500ms
""" % MAX_ADVANCE


class Setup:
    """A real etcd, whose revision is pushed well past MAX_ADVANCE, and fencegate asking it."""

    def __init__(self, prefix):
        self.workdir = harness.WorkDir(prefix)
        self.etcd = Etcd(self.workdir)
        for i in range(3 * MAX_ADVANCE):
            self.etcd.call("kv/put", {"key": b64(f"filler/{i}"), "value": b64("x")})
        endpoint = self.etcd.url.removeprefix("http://")
        self.fencegate = harness.Fencegate(self.workdir.sub("fencegate"),
                                           ROUTE.replace("{endpoint}", endpoint))

    def stop(self):
        self.fencegate.stop()
        self.etcd.process.stop()
        self.workdir.remove()

    def lock(self, name):
        """Takes etcd lock `name` the way etcdctl lock does; returns (lease, token)."""
        lease = self.etcd.call("lease/grant", {"TTL": 60})["ID"]
        key = self.etcd.call("lock/lock", {"name": b64(name), "lease": lease})["key"]
        kvs = self.etcd.call("kv/range", {"key": key})["kvs"]
        return lease, int(kvs[0]["create_revision"])

    def unlock(self, lease):
        self.etcd.call("lease/revoke", {"ID": lease})

    def put(self, path, token, body=b"data"):
        return harness.http("PUT", self.fencegate.url + path, body,
                            {"Fencing-Token": str(token)})

    def highest(self, path):
        """The fence's durable highest token (admin API); 0 for a key never fenced."""
        key = urllib.parse.quote("jobs:" + path, safe="")
        status, body, _ = harness.http("GET", f"{self.fencegate.admin_url}/admin/fences/{key}")
        if status == 404:
            return 0
        assert status == 200, (status, body)
        return json.loads(body)["highest_token"]

    def metric(self, result):
        _, body, _ = harness.http("GET", self.fencegate.admin_url + "/metrics")
        series = f'fencegate_token_verifications_total{{result="{result}",route="jobs"}}'
        for line in body.decode().splitlines():
            if line.startswith(series + " "):
                return float(line.split(" ")[1])
        raise AssertionError(f"no {series} in /metrics")


class EtcdVerifyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = Setup("fencegate-etcd-verify-")

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def assert_refused_not_held(self, status, body, highest):
        self.assertEqual(status, 403, body)
        problem = json.loads(body)
        self.assertEqual(problem["type"], "https://fencegate.dev/problems/token-advance-too-large")
        self.assertIn("live check found no such lock holder", problem["detail"])
        self.assertEqual(problem["highest_token"], highest)

    def test_held_token_is_admitted_and_forged_one_refused(self):
        s = self.s
        self.assertEqual(s.put("/jobs/a.txt", 1)[0], 201)
        lease, token = s.lock("verify/a.txt")
        self.assertGreater(token, 1 + MAX_ADVANCE)
        held_before = s.metric("held")

        # No key under verify/a.txt/ was created at token + 1: a forged, inflated token.
        status, body, _ = s.put("/jobs/a.txt", token + 1, b"forged")
        self.assert_refused_not_held(status, body, 1)
        self.assertEqual(s.highest("/jobs/a.txt"), 1)
        self.assertEqual(s.fencegate.read("/jobs/a.txt"), "data")

        status, body, _ = s.put("/jobs/a.txt", token, b"holder")
        self.assertIn(status, (200, 204), body)
        self.assertEqual(s.highest("/jobs/a.txt"), token)
        self.assertEqual(s.fencegate.read("/jobs/a.txt"), "holder")
        self.assertEqual(s.metric("held"), held_before + 1)
        s.unlock(lease)

    def test_waiter_and_released_holder_are_refused(self):
        s = self.s
        holder_lease, _ = s.lock("verify/b.txt")
        # A second client queued behind the holder: its key exists, but it does not hold the lock.
        waiter_lease = s.etcd.call("lease/grant", {"TTL": 60})["ID"]
        waiter_key = "verify/b.txt/%x" % int(waiter_lease)
        s.etcd.call("kv/put", {"key": b64(waiter_key), "value": "", "lease": waiter_lease})
        waiter_token = int(s.etcd.key(waiter_key)["create_revision"])
        status, body, _ = s.put("/jobs/b.txt", waiter_token)
        self.assert_refused_not_held(status, body, 0)

        s.unlock(holder_lease)
        s.unlock(waiter_lease)
        # A holder that wrote nothing yet and released: its token no longer holds anything.
        lease, token = s.lock("verify/c.txt")
        s.unlock(lease)
        not_held_before = s.metric("not_held")
        status, body, _ = s.put("/jobs/c.txt", token)
        self.assert_refused_not_held(status, body, 0)
        self.assertEqual(s.highest("/jobs/c.txt"), 0)
        self.assertEqual(s.metric("not_held"), not_held_before + 1)

    def test_added_latency_of_a_verified_advance(self):
        # Each round writes two new fence keys, both raising their fence from 0 (a durable
        # advance and a new file each): one within max_token_advance (no check), one jumping to
        # a held etcd token (one linearizable range on the way). Medians printed, not asserted.
        s = self.s
        verified, plain = [], []
        for i in range(15):
            lease, token = s.lock(f"verify/m{i}.txt")
            start = time.monotonic()
            status, body, _ = s.put(f"/jobs/p{i}.txt", 1)
            plain.append(time.monotonic() - start)
            self.assertEqual(status, 201, body)
            start = time.monotonic()
            status, body, _ = s.put(f"/jobs/m{i}.txt", token)
            verified.append(time.monotonic() - start)
            self.assertEqual(status, 201, body)
            s.unlock(lease)
        print(f"\nnew fence, verified advance: median {statistics.median(verified) * 1000:.2f} ms; "
              f"new fence within the bound: median {statistics.median(plain) * 1000:.2f} ms "
              f"({len(verified)} rounds)")


class EtcdDownTest(unittest.TestCase):
    def test_unreachable_etcd_fails_closed_with_503(self):
        s = Setup("fencegate-etcd-verify-down-")
        try:
            self.assertEqual(s.put("/jobs/d.txt", 1)[0], 201)
            _, token = s.lock("verify/d.txt")
            s.etcd.process.stop()
            start = time.monotonic()
            status, body, headers = s.put("/jobs/d.txt", token)
            elapsed = time.monotonic() - start
            self.assertEqual(status, 503, body)
            self.assertIsNotNone(headers["Retry-After"])
            self.assertEqual(headers["Content-Type"], "application/problem+json")
            problem = json.loads(body)
            self.assertEqual(problem["type"],
                             "https://fencegate.dev/problems/token-verification-unavailable")
            self.assertEqual(problem["highest_token"], 1)
            self.assertEqual(s.highest("/jobs/d.txt"), 1)
            self.assertEqual(s.metric("unavailable"), 1)
            self.assertLess(elapsed, 5, "the check's timeout (500ms) bounds the wait")
            # Within the bound no check is needed, etcd or not.
            self.assertIn(s.put("/jobs/d.txt", 1 + MAX_ADVANCE)[0], (200, 204))
        finally:
            s.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
