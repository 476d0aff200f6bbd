"""The client library against the real fencegate binary: built-in locks kept alive in the
background, lost leases stopping the work, fenced writes with typed refusals, signatures,
and Idempotency-Key retries."""

import inspect
import json
import socket
import threading
import time
import unittest
from concurrent.futures import ThreadPoolExecutor

import support
from support import Gateway, Link, WorkDir, http, port_of, wait_until

import fencegate


class BuiltinLockTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.workdir = WorkDir("fencegate-client-")
        cls.gateway = Gateway(cls.workdir.sub("gateway"))
        cls.locks = fencegate.LockClient(cls.gateway.url)

    @classmethod
    def tearDownClass(cls):
        cls.gateway.stop()
        cls.workdir.remove()

    def setUp(self):
        self.link = Link(port_of(self.gateway.url))
        self.addCleanup(self.link.close)

    def force_release(self, name):
        status, body, _ = http("POST", f"{self.gateway.admin_url}/admin/locks/{name}/force-release",
                               json.dumps({"reason": "test", "operator": "test"}).encode())
        self.assertEqual(status, 200, body)

    def test_zombie_write_is_fenced_out(self):
        gw, path = self.gateway, "/files/zombie"
        # A reaches fencegate over a link the test can stall: seen from outside, a paused process.
        a = fencegate.LockClient(self.link.url).acquire("zombie", ttl=1.0)
        self.addCleanup(a.release)
        a_files = fencegate.FencedSession(self.link.url, a)
        a_files.put(path, b"A1\n")
        self.link.hold()                 # A pauses: its renewals and its next write hang
        late = ThreadPoolExecutor(1).submit(a_files.put, path, b"A2\n")
        self.assertTrue(self.link.wait_held(b"PUT /files/zombie", support.DEADLINE_SECONDS))
        with self.locks.acquire("zombie", ttl=5.0, wait=10.0) as b:  # granted once A's lapsed
            fencegate.FencedSession(gw.url, b).put(path, b"B1\n")
            self.link.release()          # A resumes: the write it had started arrives
            with self.assertRaises(fencegate.FencedOut) as refused:
                late.result(support.DEADLINE_SECONDS)
            fenced = refused.exception
            self.assertEqual((fenced.fence_key, fenced.presented_token, fenced.highest_token),
                             ("files:zombie", a.token, b.token))
            self.assertEqual(fenced.stale_reason, "lease-expired")
            self.assertTrue(a.lost.wait(support.DEADLINE_SECONDS))  # its keeper got 410
            with self.assertRaises(fencegate.LeaseLost):
                a_files.put(path, b"A3\n")   # and A stops without sending
        self.assertEqual(gw.read(path), "B1\n")

    def test_the_readme_shows_the_zombie_test_as_it_is(self):
        source = inspect.getsource(BuiltinLockTest.test_zombie_write_is_fenced_out)
        with open(f"{support.HERE}/../README.md") as f:
            self.assertIn(source, f.read())
        self.assertLess(len(source.splitlines()), 30)

    def test_the_lease_is_renewed_in_the_background(self):
        with self.locks.acquire("renewed", ttl=0.75) as lease:
            started = time.monotonic()
            wait_until(lambda: time.monotonic() > started + 2.5, "three TTLs to pass", 5, 0.05)
            self.assertFalse(lease.lost.is_set(), lease.lost_reason)
            status = self.locks.status("renewed")
            self.assertTrue(status["held"])
            self.assertEqual(status["holder_token"], lease.token)
            fencegate.FencedSession(self.gateway.url, lease).put("/files/renewed", b"ok\n")
        self.assertFalse(self.locks.status("renewed")["held"])

    def test_a_lost_lease_sets_lost_calls_back_and_stops_writes(self):
        called = threading.Event()
        with self.locks.acquire("lost", ttl=2.0, on_lost=lambda lease: called.set()) as lease:
            session = fencegate.FencedSession(self.gateway.url, lease)
            session.put("/files/lost", b"mine\n")
            self.force_release("lost")
            self.assertTrue(lease.lost.wait(support.DEADLINE_SECONDS))
            self.assertTrue(called.is_set())
            self.assertIn("lock-lost", lease.lost_reason)
            with self.assertRaises(fencegate.LeaseLost):
                session.put("/files/lost", b"late\n")
            # Sent anyway, fencegate says why: an operator took the lock away.
            with self.assertRaises(fencegate.FencedOut) as refused:
                fencegate.FencedSession(self.gateway.url, lease, stop_on_lost=False).put(
                    "/files/lost", b"late\n")
            self.assertEqual(refused.exception.stale_reason, "force-released")
            self.assertIsNotNone(refused.exception.audit_id)
        self.assertEqual(self.gateway.read("/files/lost"), "mine\n")

    def test_a_lost_lease_raises_in_the_worker(self):
        with self.assertRaises(fencegate.LeaseLost):
            with self.locks.acquire("interrupted", ttl=2.0, raise_in_worker=True):
                self.force_release("interrupted")
                end = time.monotonic() + support.DEADLINE_SECONDS
                while time.monotonic() < end:   # busy work, interrupted when the lease is lost
                    sum(range(1000))

    def test_the_signature_goes_with_every_write(self):
        gateway = support.Gateway(self.workdir.sub("signed"), signed=True)
        self.addCleanup(gateway.stop)
        status, _, _ = http("PUT", gateway.url + "/signed/signed", b"x", {"Fencing-Token": "1"})
        self.assertEqual(status, 403)
        with fencegate.LockClient(gateway.url).acquire("signed", ttl=1.5) as lease:
            first = lease.signature
            self.assertTrue(first.startswith("kid=k1;"))
            session = fencegate.FencedSession(gateway.url, lease)
            session.put("/signed/signed", b"v1\n")
            # Renewals bring fresh signatures (a later expiry), used from then on.
            wait_until(lambda: lease.signature != first, "a renewal's signature", 10, 0.05)
            session.put("/signed/signed", b"v2\n")
        self.assertEqual(gateway.read("/signed/signed"), "v2\n")

    def test_refusals_are_typed(self):
        with self.assertRaises(fencegate.ProblemError) as missing:
            fencegate.FencedSession(self.gateway.url).put("/files/untokened", b"x")
        self.assertEqual((missing.exception.status, missing.exception.slug), (428, "missing-token"))
        with self.locks.acquire("held", ttl=5.0):
            with self.assertRaises(fencegate.LockHeld) as held:
                self.locks.acquire("held", ttl=5.0)
            self.assertIsInstance(held.exception, fencegate.NotAcquired)
            self.assertGreater(held.exception.retry_after, 0)

    def test_a_write_whose_answer_was_lost_is_retried_with_the_same_key(self):
        with self.locks.acquire("retried", ttl=5.0) as lease:
            session = fencegate.FencedSession(self.link.url, lease)
            self.link.drop_next_answer()
            response = session.put("/files/retried", b"once\n")
            # The second send was answered from the record of the first: applied once.
            self.assertEqual(response.headers.get("idempotency-replayed"), "?1")
        self.assertEqual(self.gateway.read("/files/retried"), "once\n")

    def test_a_retry_waits_while_the_first_is_in_flight(self):
        with self.locks.acquire("in-flight", ttl=10.0) as lease:
            body = b"slow body\n"
            first = socket.create_connection(("127.0.0.1", port_of(self.gateway.url)))
            self.addCleanup(first.close)
            first.sendall(b"PUT /files/in-flight HTTP/1.1\r\nHost: x\r\nFencing-Token: %d\r\n"
                          b"Idempotency-Key: k1\r\nContent-Length: %d\r\n\r\n%s"
                          % (lease.token, len(body), body[:4]))
            wait_until(lambda: self.fence("files:in-flight") == lease.token, "the first write admitted", 10)
            done = {}
            retry = threading.Thread(target=lambda: done.update(
                response=fencegate.FencedSession(self.gateway.url, lease).put(
                    "/files/in-flight", body, idempotency_key="k1")))
            retry.start()
            wait_until(lambda: "idempotency-request-in-flight" in self.access_log(), "the retry to be told to wait", 10)
            first.sendall(body[4:])
            retry.join(support.DEADLINE_SECONDS)
            self.assertEqual(done["response"].headers.get("idempotency-replayed"), "?1")
        self.assertEqual(self.gateway.read("/files/in-flight"), "slow body\n")

    def fence(self, key):
        status, body, _ = http("GET", f"{self.gateway.admin_url}/admin/fences/{key}")
        return json.loads(body).get("highest_token") if status == 200 else None

    def access_log(self):
        try:
            with open(f"{self.workdir.path}/gateway/access.log") as f:
                return f.read()
        except FileNotFoundError:
            return ""


if __name__ == "__main__":
    unittest.main(verbosity=2)
