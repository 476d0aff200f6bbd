"""PostgreSQL 15 (Debian postgresql) started for real on loopback: the examples take an advisory
lock and, in the same statement, the token from a CACHE 1 sequence; a client whose session ended
(idle_session_timeout while it was frozen) is fenced off by fencegate once the next holder has
written."""

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import unittest

import psycopg2

import harness

BIN = "/usr/lib/postgresql/15/bin"


class PostgreSQL:
    def __init__(self, workdir):
        # PostgreSQL refuses to run as root: as root, run it as the postgres user, in a
        # directory of its own.
        self.as_user = {"user": "postgres", "group": "postgres", "extra_groups": []} \
            if os.getuid() == 0 else {}
        self.dir = tempfile.mkdtemp(prefix="fencegate-postgresql-")
        if self.as_user:
            account = pwd.getpwnam("postgres")
            os.chown(self.dir, account.pw_uid, account.pw_gid)
        data = os.path.join(self.dir, "data")
        subprocess.run([f"{BIN}/initdb", "--no-sync", "-A", "trust", "-U", "postgres", "-D", data],
                       check=True, stdout=subprocess.DEVNULL, cwd=self.dir, **self.as_user)
        self.port = harness.free_port()
        self.process = harness.Process(
            [f"{BIN}/postgres", "-D", data, "-c", "listen_addresses=127.0.0.1", "-p",
             str(self.port), "-k", self.dir, "-c", "fsync=off"],  # a throwaway server
            os.path.join(workdir.path, "postgresql.log"), stop_signal=signal.SIGINT,  # fast shutdown
            cwd=self.dir, **self.as_user)
        self.dsn = f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"
        self.connection = harness.wait_until(self._connect, "PostgreSQL to accept connections")
        self.connection.autocommit = True

    def _connect(self):
        if self.process.popen.poll() is not None:
            raise AssertionError("postgres exited:\n" + self.process.log_text())
        try:
            return psycopg2.connect(self.dsn)
        except psycopg2.OperationalError:
            return None

    def query(self, statement, params=()):
        with self.connection.cursor() as cursor:
            cursor.execute(statement, params)
            return cursor.fetchall()

    def stop(self):
        self.connection.close()
        self.process.stop()
        shutil.rmtree(self.dir)


# The advisory lock on hashtext(name), as pg_locks shows it: the bigint key split in two halves.
LOCK_HOLDERS = """SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
  AND classid::bigint = (hashtext(%(lock)s)::bigint >> 32) & 4294967295
  AND objid::bigint = hashtext(%(lock)s)::bigint & 4294967295 AND objsubid = 1"""


class PostgreSQLLocks:
    """What the zombie scenario needs to know about PostgreSQL."""

    def __init__(self, test, server, fencegate):
        self.test = test
        self.server = server
        self.fencegate = fencegate
        self.env = {"FENCEGATE_URL": fencegate.url, "PG_DSN": server.dsn}

    def check_holder(self, acquired):
        # One session holds the advisory lock, and the sequence stands at this holder's token:
        # nobody has taken a number since.
        lock = acquired["lock"]
        self.test.assertEqual(len(self.server.query(LOCK_HOLDERS, {"lock": lock})), 1)
        last = self.server.query(f'SELECT last_value FROM "fence:{lock}"')[0][0]
        self.test.assertEqual(last, int(acquired["token"]))

    def wait_lock_free(self, acquired):
        harness.wait_until(lambda: not self.server.query(LOCK_HOLDERS, {"lock": acquired["lock"]}),
                           "the frozen holder's session to time out and its lock to go")


class PostgreSQLTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.workdir = harness.WorkDir("fencegate-pg-")
        cls.postgresql = PostgreSQL(cls.workdir)
        cls.fencegate = harness.Fencegate(cls.workdir.sub("fencegate"))

    @classmethod
    def tearDownClass(cls):
        cls.fencegate.stop()
        cls.postgresql.stop()
        cls.workdir.remove()

    def scenario(self, first, second, name):
        locks = PostgreSQLLocks(self, self.postgresql, self.fencegate)
        harness.zombie_takeover(self, locks, harness.example("postgresql", first),
                                harness.example("postgresql", second), name, f"/files/{name}.txt")

    def test_psql_holder_is_fenced_after_its_session_ends(self):
        self.scenario("shell", "python", "psql-first")

    def test_psycopg2_holder_is_fenced_after_its_session_ends(self):
        self.scenario("python", "shell", "psycopg2-first")

    def test_a_client_gives_up_on_a_busy_lock_after_its_wait(self):
        locks = PostgreSQLLocks(self, self.postgresql, self.fencegate)
        for holder, waiter in (("shell", "python"), ("python", "shell")):
            harness.busy_lock_times_out(self, locks, harness.example("postgresql", holder),
                                        harness.example("postgresql", waiter), f"busy-{holder}",
                                        f"/files/busy-{holder}.txt")


if __name__ == "__main__":
    unittest.main(verbosity=2)
