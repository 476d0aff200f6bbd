"""ZooKeeper 3.8 (Debian zookeeperd) started for real on loopback: the examples take the lock
(ephemeral sequential node under /locks/NAME), use the node's czxid as the token, and a client
whose session expired is fenced off by fencegate once the next holder has written."""

import os
import socket
import unittest

from kazoo.client import KazooClient

import harness

ZKSERVER = "/usr/share/zookeeper/bin/zkServer.sh"


class ZooKeeper:
    def __init__(self, workdir):
        self.port = harness.free_port()
        self.address = f"127.0.0.1:{self.port}"
        config = os.path.join(workdir.path, "zoo.cfg")
        with open(config, "w") as f:
            # tickTime 200ms lets sessions time out after 2s (the minimum is two ticks).
            # No admin server (it would take port 8080) and no JMX port.
            f.write(f"tickTime=200\ndataDir={workdir.sub('zookeeper')}\n"
                    f"clientPort={self.port}\nclientPortAddress=127.0.0.1\n"
                    "admin.enableServer=false\n4lw.commands.whitelist=srvr\n")
        self.process = harness.Process(
            [ZKSERVER, "start-foreground", config], os.path.join(workdir.path, "zookeeper.log"),
            env={**os.environ, "JMXDISABLE": "true", "SERVER_JVMFLAGS": "-Xmx256m"})
        harness.wait_until(self._serving, "ZooKeeper to serve clients")
        self.client = KazooClient(hosts=self.address)
        self.client.start(timeout=harness.DEADLINE_SECONDS)

    def _serving(self):
        # "ruok" says imok before sessions are accepted; "srvr" reports a mode only once the
        # server really serves.
        if self.process.popen.poll() is not None:
            raise AssertionError("ZooKeeper exited:\n" + self.process.log_text())
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
                s.sendall(b"srvr")
                return b"Mode: standalone" in s.makefile("rb").read()
        except OSError:
            return False

    def stop(self):
        self.client.stop()
        self.client.close()
        self.process.stop()


class ZooKeeperLocks:
    """What the zombie scenario needs to know about ZooKeeper."""

    def __init__(self, test, zookeeper, fencegate):
        self.test = test
        self.zk = zookeeper.client
        self.fencegate = fencegate
        self.env = {"FENCEGATE_URL": fencegate.url, "ZK_SERVER": zookeeper.address}

    def check_holder(self, acquired):
        # The token is the czxid of the holder's own node, which is ephemeral and the lowest
        # contender under the lock's directory.
        stat = self.zk.exists(acquired["node"])
        self.test.assertIsNotNone(stat, acquired)
        self.test.assertEqual(stat.czxid, int(acquired["token"]))
        self.test.assertNotEqual(stat.ephemeralOwner, 0)
        directory, name = acquired["node"].rsplit("/", 1)
        contenders = sorted(self.zk.get_children(directory), key=lambda c: c[-10:])
        self.test.assertEqual(contenders[0], name)
        self.test.assertEqual(int(name[-10:]), int(acquired["sequence"]))

    def wait_lock_free(self, acquired):
        harness.wait_until(lambda: self.zk.exists(acquired["node"]) is None,
                           f"the frozen holder's session to expire and {acquired['node']} to go")


class ZooKeeperTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.workdir = harness.WorkDir("fencegate-zookeeper-")
        cls.zookeeper = ZooKeeper(cls.workdir)
        cls.fencegate = harness.Fencegate(cls.workdir.sub("fencegate"))

    @classmethod
    def tearDownClass(cls):
        cls.fencegate.stop()
        cls.zookeeper.stop()
        cls.workdir.remove()

    def scenario(self, first, second, name):
        locks = ZooKeeperLocks(self, self.zookeeper, self.fencegate)
        first_lock, second_lock = harness.zombie_takeover(
            self, locks, harness.example("zookeeper", first), harness.example("zookeeper", second),
            name, f"/files/{name}.txt")
        # The node died with the frozen holder's session, and the sequence number handed out
        # afterwards is still higher: the counter belongs to the parent, not to the node.
        self.assertGreater(int(second_lock["sequence"]), int(first_lock["sequence"]))

    def test_zkcli_holder_is_fenced_after_its_session_expires(self):
        self.scenario("shell", "python", "zkcli-first")

    def test_kazoo_holder_is_fenced_after_its_session_expires(self):
        self.scenario("python", "shell", "kazoo-first")

    def test_a_client_gives_up_on_a_busy_lock_after_its_wait(self):
        locks = ZooKeeperLocks(self, self.zookeeper, self.fencegate)
        for holder, waiter in (("shell", "python"), ("python", "shell")):
            harness.busy_lock_times_out(self, locks, harness.example("zookeeper", holder),
                                        harness.example("zookeeper", waiter), f"busy-{holder}",
                                        f"/files/busy-{holder}.txt")


if __name__ == "__main__":
    unittest.main(verbosity=2)
