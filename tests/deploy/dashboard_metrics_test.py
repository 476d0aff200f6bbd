"""Every metric the Grafana dashboard (deploy/grafana/fencegate.json) and the alert rules
(deploy/prometheus/alerts.yml) use exists in a real gateway's /metrics, with the labels their
selectors name and the label values their exact matchers ask for; so the dashboard and the alerts
cannot drift from the code.

Two real gateways between them export every family: one on the embedded store with TLS on the
traffic listener, the lock API, an http backend with health checks and a webdav backend (store
sync and group commit, TLS expiry, backends and their condition verdicts, locks, process); one
on a real etcd with `cluster:` on (the etcd store's and the cluster's metrics). A fenced write, a refused stale one and a lock grant go
through the first before the scrape, as in production.

Names are found in the PromQL text (string literals removed) as the identifiers that start with
fencegate_ or process_; a histogram is used by its _bucket/_sum/_count series and a counter by
its _total series, which is how they appear in the exposition, so a name must be a sample name
of a scrape. Exits 77 (skipped) only when etcd is not installed."""

import http.client
import http.server
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "tests", "support"))
from free_port import free_port  # noqa: E402
from wait_until import wait_until  # noqa: E402

BINARY = os.environ.get("FENCEGATE_BINARY", os.path.join(SOURCE, "build", "gateway", "fencegate"))
DASHBOARD = os.path.join(SOURCE, "deploy", "grafana", "fencegate.json")
ALERTS = os.path.join(SOURCE, "deploy", "prometheus", "alerts.yml")
DEADLINE = 60
# Labels Prometheus adds to every scraped series; no exporter has them.
TARGET_LABELS = {"instance", "job"}
METRIC_NAME = re.compile(r"\b(?:fencegate|process)_[a-zA-Z0-9_]*\b")
SELECTOR = re.compile(r"\b((?:fencegate|process)_[a-zA-Z0-9_]*)\s*\{([^}]*)\}")
MATCHER = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')


def request(port, method, path, headers=None, body=b"", tls_context=None, timeout=10):
    if tls_context is not None:
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout, context=tls_context)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def dashboard_expressions():
    """Every PromQL expression of the dashboard: panel targets (rows' nested panels too) and the
    template variables' queries."""
    with open(DASHBOARD) as f:
        dashboard = json.load(f)
    found = []

    def walk(panels):
        for panel in panels:
            found.extend(t["expr"] for t in panel.get("targets", []) if t.get("expr"))
            walk(panel.get("panels", []))

    walk(dashboard["panels"])
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            found.append(query["query"] if isinstance(query, dict) else query)
    return found


def alert_expressions():
    """The `expr` of every rule: inline, or a block scalar (| or >) of the lines indented deeper
    than the key. (No YAML module: the python3 running the tests may not have one.)"""
    with open(ALERTS) as f:
        lines = f.read().splitlines()
    found = []
    i = 0
    while i < len(lines):
        match = re.match(r"^(\s*)expr:\s*(.*)$", lines[i])
        i += 1
        if not match:
            continue
        indent, value = len(match.group(1)), match.group(2).strip()
        if value and value[0] not in "|>":
            found.append(value)
            continue
        block = []
        while i < len(lines) and (not lines[i].strip() or
                                  len(lines[i]) - len(lines[i].lstrip()) > indent):
            block.append(lines[i].strip())
            i += 1
        found.append(" ".join(part for part in block if part))
    return found


def without_strings(expr):
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)


class Exposition:
    """Sample names, and per sample name the label sets seen, of Prometheus text format 0.0.4."""

    def __init__(self):
        self.samples = {}  # name -> list of {label: value}

    def add(self, text):
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            name, _, rest = line.partition("{")
            labels = {}
            if rest:
                label_text = rest.rsplit("}", 1)[0]
                labels = {m.group(1): m.group(3) for m in MATCHER.finditer(label_text)}
            else:
                name = line.split(" ", 1)[0]
            self.samples.setdefault(name, []).append(labels)


class Backend:
    """Answers 200 to everything: the http backend behind the first gateway's route."""

    def __init__(self):
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _answer(self):
                length = int(self.headers.get("Content-Length", "0"))
                self.rfile.read(length)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_PUT = do_POST = do_DELETE = _answer

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class Gateway:
    def __init__(self, workdir, name, config):
        self.name = name
        self.admin = free_port()
        self.port = free_port()
        path = os.path.join(workdir, name + ".yaml")
        with open(path, "w") as f:
            f.write(config.format(port=self.port, admin=self.admin,
                                  data=os.path.join(workdir, name + "-data")))
        self.log_path = os.path.join(workdir, name + ".out")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([BINARY, "--config", path], stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        wait_until(self._listening, f"gateway {name} listening", DEADLINE)

    def _listening(self):
        if self.proc.poll() is not None:
            with open(self.log_path) as log:
                raise AssertionError(f"gateway {self.name} exited:\n" + log.read())
        with open(self.log_path, "rb") as log:
            return b"fencegate listening" in log.read()

    def metrics(self):
        status, body = request(self.admin, "GET", "/metrics")
        assert status == 200, body
        return body.decode()

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


EMBEDDED = """listen: 127.0.0.1:{{port}}
admin_listen: 127.0.0.1:{{admin}}
data_dir: {{data}}
threads: 2
access_log:
  path: ""
tls:
  traffic:
    cert_file: {certs}/server.pem
    key_file: {certs}/server.key
backends:
  api:
    kind: http
    url: http://127.0.0.1:{backend}
    forward_token_header: Fencing-Token
    health_check:
      path: /health
      interval: 100ms
  # A webdav backend for the condition probe's verdicts (the test backend is no WebDAV server:
  # the verdict is "unreachable", and every verdict's series is exported).
  dav:
    kind: webdav
    url: http://127.0.0.1:{backend}
routes:
  - name: kv
    prefix: /kv/
    backend: api
    fence_key: "kv:{{{{segment:2}}}}"
  - name: dav
    prefix: /dav/
    backend: dav
    fence_key: "dav:{{{{segment:2}}}}"
"""

CLUSTERED = """listen: 127.0.0.1:{{port}}
admin_listen: 127.0.0.1:{{admin}}
data_dir: {{data}}
threads: 2
access_log:
  path: ""
store:
  kind: etcd
  prefix: /dashboard-test/
  endpoints: ["127.0.0.1:{etcd}"]
locks:
  enabled: false
cluster:
  name: only
  shards: 4
  lease_ttl: 2s
  peers: {{{{only: "127.0.0.1:{{port}}"}}}}
backends:
  files:
    kind: filesystem
    root: {files}
routes:
  - name: files
    prefix: /files/
    backend: files
    fence_key: "fs:{{{{segment:2}}}}"
"""


class DashboardMetricNamesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.workdir = tempfile.mkdtemp(prefix="fencegate-dashboard-")
        cls.stoppers = []
        try:
            cls._start()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def _start(cls):
        certs = os.path.join(cls.workdir, "certs")
        os.makedirs(certs)
        subprocess.run(["bash", os.path.join(SOURCE, "tests", "support", "make_test_certs.sh"),
                        certs], check=True, capture_output=True)
        cls.tls = ssl.create_default_context(cafile=os.path.join(certs, "ca.pem"))
        backend = Backend()
        cls.stoppers.append(backend.stop)

        etcd_port, peer_port = free_port(), free_port()
        etcd_log = open(os.path.join(cls.workdir, "etcd.log"), "wb")
        etcd = subprocess.Popen(
            ["etcd", "--name", "e0", "--data-dir", os.path.join(cls.workdir, "etcd"),
             "--listen-client-urls", f"http://127.0.0.1:{etcd_port}",
             "--advertise-client-urls", f"http://127.0.0.1:{etcd_port}",
             "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
             "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
             "--initial-cluster", f"e0=http://127.0.0.1:{peer_port}"],
            stdout=etcd_log, stderr=subprocess.STDOUT, start_new_session=True)

        def stop_etcd():
            os.killpg(etcd.pid, signal.SIGKILL)
            etcd.wait()
            etcd_log.close()

        cls.stoppers.append(stop_etcd)

        def etcd_healthy():
            try:
                status, body = request(etcd_port, "GET", "/health", timeout=2)
                return status == 200 and b'"true"' in body
            except OSError:
                return False

        wait_until(etcd_healthy, "etcd healthy", DEADLINE)

        cls.embedded = Gateway(cls.workdir, "embedded",
                               EMBEDDED.format(certs=certs, backend=backend.port))
        cls.stoppers.append(cls.embedded.stop)
        os.makedirs(os.path.join(cls.workdir, "files"))
        cls.clustered = Gateway(cls.workdir, "clustered",
                                CLUSTERED.format(etcd=etcd_port,
                                                 files=os.path.join(cls.workdir, "files")))
        cls.stoppers.append(cls.clustered.stop)
        wait_until(lambda: b'"owned_shards":[0,1,2,3]' in
                   request(cls.clustered.admin, "GET", "/admin/cluster")[1].replace(b" ", b""),
                   "the only replica owning every shard", DEADLINE)

        # Production traffic through the TLS listener: an admitted write, a zombie's refused
        # one, a lock grant.
        put = {"Fencing-Token": "7", "Content-Length": "1"}
        status, _ = request(cls.embedded.port, "PUT", "/kv/k1/doc", put, b"x", cls.tls)
        assert status == 200, status
        status, _ = request(cls.embedded.port, "PUT", "/kv/k1/doc", dict(put, **{"Fencing-Token": "3"}),
                            b"x", cls.tls)
        assert status == 409, status
        status, body = request(cls.embedded.port, "POST", "/locks/report", {}, b"{}", cls.tls)
        assert status == 200, body

        cls.exposition = Exposition()
        cls.exposition.add(cls.embedded.metrics())
        cls.exposition.add(cls.clustered.metrics())

    @classmethod
    def tearDownClass(cls):
        for stop in reversed(cls.stoppers):
            stop()
        if os.environ.get("KEEP_DASHBOARD_WORKDIR") is None:
            shutil.rmtree(cls.workdir, ignore_errors=True)

    def check_expressions(self, source, expressions):
        self.assertGreater(len(expressions), 0, source)
        for expr in expressions:
            names = METRIC_NAME.findall(without_strings(expr))
            self.assertTrue(names, f"{source}: no fencegate metric in {expr!r}")
            for name in names:
                self.assertIn(name, self.exposition.samples,
                              f"{source}: {name} (in {expr!r}) is not exported")
            for name, matchers in SELECTOR.findall(expr):
                series = self.exposition.samples.get(name, [])
                for label, op, value in MATCHER.findall(matchers):
                    if label in TARGET_LABELS:
                        continue
                    self.assertTrue(any(label in s for s in series),
                                    f"{source}: {name} has no label {label} (in {expr!r})")
                    # Exact values, and regex alternatives of plain words, must exist.
                    if op == "=" or (op == "=~" and re.fullmatch(r"[a-z0-9_|]+", value)):
                        for wanted in value.split("|"):
                            self.assertTrue(any(s.get(label) == wanted for s in series),
                                            f"{source}: no {name} series with "
                                            f'{label}="{wanted}" (in {expr!r})')

    def test_the_dashboard_uses_only_exported_metrics(self):
        self.check_expressions("deploy/grafana/fencegate.json", dashboard_expressions())

    def test_the_alerts_use_only_exported_metrics(self):
        self.check_expressions("deploy/prometheus/alerts.yml", alert_expressions())

    def test_the_new_metrics_carry_their_values(self):
        samples = self.exposition.samples
        self.assertEqual([s["listener"] for s in
                          samples["fencegate_tls_certificate_expiry_timestamp_seconds"]],
                         ["traffic"])
        self.assertIn("version", samples["fencegate_build_info"][0])
        self.assertIn({"route": "kv", "backend": "api"},
                      samples["fencegate_backend_upstream_duration_seconds_count"])
        for name in ("process_cpu_seconds_total", "process_resident_memory_bytes",
                     "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
                     "process_start_time_seconds", "fencegate_store_sync_duration_seconds_count",
                     "fencegate_store_group_commit_advances_count", "fencegate_ready"):
            self.assertIn(name, samples)


if __name__ == "__main__":
    if shutil.which("etcd") is None:
        print("etcd is not installed (scripts/install-deps.sh installs etcd-server): skipped")
        sys.exit(77)
    unittest.main()
