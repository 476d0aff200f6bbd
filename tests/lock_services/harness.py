"""Shared pieces of the lock-service tests: real processes on loopback, the fencegate binary,
the examples under examples/, and the zombie scenario every lock service is put through."""

import json
import os
import sys
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from free_port import free_port  # noqa: E402
from wait_until import wait_until as shared_wait_until  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLES = os.path.join(REPO, "examples")
# A bound on every wait, so a broken server fails the test instead of hanging it.
DEADLINE_SECONDS = 60
# The lease (etcd TTL, ZooKeeper session timeout, Redis PX, PostgreSQL idle_session_timeout)
# the examples take in these tests: short, so the zombie loses its lock quickly.
LEASE_SECONDS = 2



def wait_until(predicate, what, deadline=DEADLINE_SECONDS):
    return shared_wait_until(predicate, what, deadline)


def http(method, url, body=None, headers=None):
    """Returns (status, body bytes, headers) without raising on HTTP error statuses."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=DEADLINE_SECONDS) as response:
            return response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.read(), error.headers


class Process:
    """A child in its own process group, stopped (group and all) by its PID."""

    def __init__(self, argv, log_path, stop_signal=signal.SIGTERM, **popen_args):
        self.argv = argv
        self.stop_signal = stop_signal
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log,
                                      stderr=subprocess.STDOUT, start_new_session=True,
                                      **popen_args)

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def stop(self):
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, self.stop_signal)
            try:
                self.popen.wait(DEADLINE_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait()
        self.log.close()


class Fencegate:
    """The real binary (FENCEGATE_BINARY) serving <data_dir>/files as a fenced file store."""

    CONFIG = """access_log:
  path: "{log}"
backends:
  files:
    kind: filesystem
    root: "{{data_dir}}/files"
routes:
  - name: files
    prefix: /files/
    backend: files
    fence_key: "files:{{path}}"
"""

    def __init__(self, workdir, extra_routes=""):
        """`extra_routes`: YAML route items appended to the files route (same backend)."""
        binary = os.environ["FENCEGATE_BINARY"]
        config = os.path.join(workdir, "fencegate.yaml")
        with open(config, "w") as f:
            f.write(self.CONFIG.format(log=os.path.join(workdir, "access.log")) + extra_routes)
        self.process = Process([binary, "--config", config, "--listen", "127.0.0.1:0",
                                "--admin-listen", "127.0.0.1:0", "--data-dir",
                                os.path.join(workdir, "data")],
                               os.path.join(workdir, "fencegate.out"))
        line = wait_until(self._listening_line, "fencegate to report its ports")
        fields = dict(part.split("=", 1) for part in line.split()[2:])
        self.url = "http://" + fields["traffic"]
        self.admin_url = "http://" + fields["admin"]

    def _listening_line(self):
        if self.process.popen.poll() is not None:
            raise AssertionError("fencegate exited:\n" + self.process.log_text())
        for line in self.process.log_text().splitlines():
            if line.startswith("fencegate listening "):
                return line
        return None

    def read(self, path):
        status, body, _ = http("GET", self.url + path)
        assert status == 200, (status, body)
        return body.decode()

    def stop(self):
        self.process.stop()


class Example:
    """One run of an example: lines go to its standard input, its output is read line by line.

    It runs in its own process group so freeze() can stop it whole, lock client included, the
    way a long GC pause or a stalled VM would."""

    def __init__(self, argv, env):
        self.argv = argv
        self.popen = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, start_new_session=True,
                                      env={**os.environ, **env})
        self.lines = queue.Queue()
        self.output = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.popen.stdout:
            self.lines.put(raw.decode(errors="replace").rstrip("\n"))
        self.lines.put(None)

    def send(self, line):
        self.popen.stdin.write(line.encode() + b"\n")
        self.popen.stdin.flush()

    def close_input(self):
        self.popen.stdin.close()

    def expect(self, word):
        """Returns the fields (k=v) of the next output line starting with `word`."""
        end = time.monotonic() + DEADLINE_SECONDS
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                raise AssertionError(f"{self.argv}: no '{word}' line; output so far:\n"
                                     + "\n".join(self.output))
            self.output.append(line)
            if line.split(" ", 1)[0] == word:
                return fields(line)

    def freeze(self):
        os.killpg(self.popen.pid, signal.SIGSTOP)

    def thaw(self):
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, signal.SIGCONT)

    def wait(self):
        code = self.popen.wait(DEADLINE_SECONDS)
        while (line := self.lines.get(timeout=DEADLINE_SECONDS)) is not None:
            self.output.append(line)
        self.popen.stdout.close()
        return code

    def kill(self):
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, signal.SIGKILL)
            os.killpg(self.popen.pid, signal.SIGCONT)
            self.popen.wait()
        for stream in (self.popen.stdin, self.popen.stdout):
            if not stream.closed:
                stream.close()


def fields(line):
    """'wrote /files/x token=7 status=201 ...' -> {'word': 'wrote', 'token': '7', ...}."""
    words = line.split(" ")
    out = {"word": words[0], "line": line}
    for word in words[1:]:
        if "=" in word:
            key, value = word.split("=", 1)
            out.setdefault(key, value)
    return out


def example(service, language):
    """argv prefix of the example for `service` in "shell" or "python"."""
    name = "lock-and-write.sh" if language == "shell" else "lock_and_write.py"
    return [os.path.join(EXAMPLES, service, name)]


class WorkDir:
    def __init__(self, prefix):
        self.path = tempfile.mkdtemp(prefix=prefix)

    def sub(self, name):
        path = os.path.join(self.path, name)
        os.makedirs(path, exist_ok=True)
        return path

    def remove(self):
        shutil.rmtree(self.path, ignore_errors=True)


def zombie_takeover(test, service, first, second, lock, path):
    """The scenario every lock service goes through, driven by the examples themselves.

    `first` takes the lock and writes; then it is frozen (its lock client too) until its lease
    lapses; `second` takes the lock over and writes with its newer token; `first` is thawed and
    writes again with its old token. fencegate must refuse that late write with 409, the
    zombie's release on exit must leave the successor's lock alone, and the resource must hold
    the second client's data.

    `service` supplies: env (for the examples), check_holder(acquired) (the token is what the
    service says it is), wait_lock_free(acquired) (the lease really lapsed).
    Returns the two `acquired` lines' fields for service-specific checks."""
    env = {**service.env, "LEASE_SECONDS": str(LEASE_SECONDS), "WAIT_SECONDS": "30"}
    zombie = Example(first + [lock, path], env)
    successor = None
    try:
        zombie.send("first holder, before its pause")
        first_lock = zombie.expect("acquired")
        test.assertEqual(zombie.expect("wrote")["token"], first_lock["token"])
        service.check_holder(first_lock)

        zombie.freeze()
        service.wait_lock_free(first_lock)

        successor = Example(second + [lock, path], env)
        successor.send("second holder")
        second_lock = successor.expect("acquired")
        service.check_holder(second_lock)
        test.assertGreater(int(second_lock["token"]), int(first_lock["token"]))
        test.assertEqual(successor.expect("wrote")["token"], second_lock["token"])

        zombie.thaw()
        zombie.send("first holder, after its lease lapsed")
        zombie.close_input()
        refused = zombie.expect("refused")
        test.assertEqual(refused["status"], "409")
        test.assertEqual(refused["token"], first_lock["token"])
        problem = json.loads(refused["line"].split(" ", 4)[4])
        test.assertEqual(problem["type"], "https://fencegate.dev/problems/stale-token")
        test.assertEqual(problem["presented_token"], int(first_lock["token"]))
        test.assertEqual(problem["highest_token"], int(second_lock["token"]))
        test.assertEqual(zombie.wait(), 3, zombie.output)
        # The zombie released "its" lock on the way out; that must not free the successor's.
        service.check_holder(second_lock)

        successor.close_input()
        test.assertEqual(successor.wait(), 0, successor.output)
        test.assertEqual(service.fencegate.read(path), "second holder\n")
        return first_lock, second_lock
    finally:
        zombie.thaw()
        zombie.kill()
        if successor:
            successor.kill()


def busy_lock_times_out(test, service, holder, waiter, lock, path):
    """While `holder` holds the lock, `waiter` (allowed to wait 1s) gives up with exit status 4
    and writes nothing; the holder, undisturbed, finishes with exit status 0."""
    # Only the waiter gets the short wait: on a loaded machine the holder's own lock client can
    # take longer than a second to start and acquire the free lock.
    env = {**service.env, "LEASE_SECONDS": "10", "WAIT_SECONDS": "1"}
    first = Example(holder + [lock, path], {**env, "WAIT_SECONDS": "30"})
    second = None
    try:
        first.send("holder")
        held = first.expect("acquired")
        first.expect("wrote")
        second = Example(waiter + [lock, path], env)
        second.send("waiter")
        second.close_input()
        test.assertEqual(second.wait(), 4, second.output)
        test.assertFalse([line for line in second.output if line.startswith("wrote")])
        service.check_holder(held)
        first.close_input()
        test.assertEqual(first.wait(), 0, first.output)
        test.assertEqual(service.fencegate.read(path), "holder\n")
    finally:
        first.kill()
        if second:
            second.kill()
