"""The package installs into a virtual environment with nothing but Debian's packages
(python3-venv, python3-pip, python3-setuptools; no package index), imports from there with its
optional clients (Debian's python3-kazoo, -redis, -psycopg2 through --system-site-packages),
and the zombie scenario passes against the installed copy."""

import os
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)


class InstallTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="fencegate-client-venv-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def run_checked(self, argv, **kwargs):
        result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                timeout=120, **kwargs)
        self.assertEqual(result.returncode, 0, f"{argv}:\n{result.stdout.decode()}")
        return result.stdout.decode()

    def test_installs_from_the_checkout_into_a_venv(self):
        venv = os.path.join(self.dir, "venv")
        # setuptools builds in the source tree (build/, *.egg-info): build from a copy of the
        # checkout's package so a test run never writes into the checkout.
        source = os.path.join(self.dir, "python")
        shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns(
            "build", "*.egg-info", "__pycache__", "tests"))
        self.run_checked(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv])
        python = os.path.join(venv, "bin", "python")
        self.run_checked([python, "-m", "pip", "install", "--no-index", "--no-build-isolation",
                          "--no-cache-dir", "--quiet", source])
        shutil.rmtree(source)  # what is imported below comes from the venv alone
        where = self.run_checked([python, "-c", """if True:
            import os, fencegate
            import fencegate.sources.etcd, fencegate.sources.zookeeper
            import fencegate.sources.redis, fencegate.sources.postgresql
            here = os.path.dirname(fencegate.__file__)
            assert os.path.exists(os.path.join(here, "py.typed")), "py.typed not installed"
            print(here)"""], cwd=self.dir)
        self.assertTrue(where.strip().startswith(venv), where)
        if "FENCEGATE_BINARY" in os.environ:
            self.run_checked([python, "-m", "unittest",
                              "test_builtin_locks.BuiltinLockTest.test_zombie_write_is_fenced_out"],
                             cwd=HERE, env={**os.environ, "FENCEGATE_CLIENT_INSTALLED": "1"})


if __name__ == "__main__":
    unittest.main(verbosity=2)
