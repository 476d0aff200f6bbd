"""What the client library's tests share: the real fencegate binary with built-in locks, a
fenced file store, idempotency and signed tokens, and a TCP link a test can stall or cut.

Imports the package from the checkout (clients/python) unless FENCEGATE_CLIENT_INSTALLED is
set (then the installed one is tested), and the lock-service tests' harness for processes."""

import os
import socket
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
if not os.environ.get("FENCEGATE_CLIENT_INSTALLED"):
    sys.path.insert(0, os.path.join(REPO, "clients", "python"))
sys.path.insert(0, os.path.join(REPO, "tests", "lock_services"))

import harness  # noqa: E402
from harness import DEADLINE_SECONDS, WorkDir, http  # noqa: E402,F401
from wait_until import wait_until  # noqa: E402,F401  (tests/support, on the path harness set)

SECRET = "a-test-signing-secret-of-at-least-32-bytes"

CONFIG = """access_log:
  path: "{workdir}/access.log"
locks:
  rules:
    - match: "*"
      fence_keys: ["files:{{name}}"]
{signing}backends:
  files:
    kind: filesystem
    root: "{{data_dir}}/files"
routes:
  - name: files
    prefix: /files/
    backend: files
    fence_key: "files:{{segment:2}}"
    idempotency:
      methods: [PUT, POST, PATCH, DELETE]
"""

# Once signing is configured, every signature sent is checked, expiry first: a zombie's write
# then gets 403 expired-token. Only the signature test's gateway signs.
SIGNING = """  signing:
    key_id: k1
    keys:
      - id: k1
        secret: "{secret}"
""".replace("{secret}", SECRET)

SIGNED_ROUTE = """  - name: signed
    prefix: /signed/
    backend: files
    fence_key: "files:{segment:2}"
    require_signed_tokens: true
"""


class Gateway(harness.Fencegate):
    """The real binary (FENCEGATE_BINARY). Files written under /files/NAME are fenced by the key
    files:NAME, which granting the built-in lock NAME raises. With `signed`, grants carry
    signatures and /signed/NAME (same fence key) admits signed tokens only."""

    def __init__(self, workdir, signed=False):
        self.CONFIG = CONFIG.replace("{workdir}/access.log", "{log}").replace(
            "{signing}", SIGNING if signed else "")
        super().__init__(workdir, SIGNED_ROUTE if signed else "")


class Link:
    """A TCP relay to `port` that a test can hold (nothing passes either way, as when the
    client is paused) or make drop the next answer (the request arrives, the connection breaks
    before the response: the outcome is unknown to the client)."""

    def __init__(self, port):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.target = port
        self.open = threading.Event()
        self.open.set()
        self.drop_answers = 0
        self.guard = threading.Lock()
        self.held_requests = []  # the first line of each request that arrived while held
        self.arrived = threading.Condition(self.guard)
        threading.Thread(target=self._accept, daemon=True).start()

    def hold(self):
        self.open.clear()

    def release(self):
        self.open.set()

    def wait_held(self, start, timeout):
        """Waits until a request whose first line starts with `start` (bytes) reached the held
        link: the client sent it (its own checks are behind it) and it waits here."""
        with self.arrived:
            return self.arrived.wait_for(
                lambda: any(line.startswith(start) for line in self.held_requests), timeout)

    def drop_next_answer(self):
        with self.guard:
            self.drop_answers += 1

    def _accept(self):
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _pump(self, source, sink, answers):
        try:
            while data := source.recv(65536):
                if not answers and not self.open.is_set():
                    with self.arrived:
                        self.held_requests.append(data.split(b"\r\n", 1)[0])
                        self.arrived.notify_all()
                if not self.open.wait(DEADLINE_SECONDS):
                    break
                if answers:
                    with self.guard:
                        dropping, self.drop_answers = self.drop_answers > 0, max(0, self.drop_answers - 1)
                    if dropping:
                        # The client sees the connection break; the gateway still gets its
                        # answer read in full, so it is not "client gone" there.
                        sink.shutdown(socket.SHUT_RDWR)
                        while source.recv(65536):
                            pass
                        break
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self):
        self.server.close()


def port_of(url):
    return int(url.rsplit(":", 1)[1])
