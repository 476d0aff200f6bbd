#!/usr/bin/env python3
"""A backend server named by a DNS name whose address changes is followed (issue 27).

The gateway runs in a mount namespace of its own where /etc/hosts is a file this test rewrites
(unshare + a bind mount; root only, skipped otherwise): the name first resolves to 127.0.0.2,
where one real nginx answers "A", then to 127.0.0.3, where another answers "B". With
`resolve_interval` the gateway picks the new address up (/admin/backends lists it), new
requests reach B, and connections kept alive to the address the name left are not reused.

  dns_reresolve_test.py FENCEGATE_BINARY
"""

import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from free_port import free_port  # noqa: E402
from wait_until import wait_until  # noqa: E402

NAME = "backend.fencegate.test"
SKIP = 77


def port_free_on(port, hosts):
    for host in hosts:
        with socket.socket() as s:
            try:
                s.bind((host, port))
            except OSError:
                return False
    return True


def start_nginx(root, name, address, port):
    directory = os.path.join(root, f"nginx-{name}")
    os.makedirs(directory)
    conf = os.path.join(directory, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""daemon off;
master_process off;
worker_processes 1;
pid {directory}/nginx.pid;
error_log {directory}/error.log warn;
events {{ worker_connections 64; }}
http {{
  access_log off;
  client_body_temp_path {directory};
  proxy_temp_path {directory};
  fastcgi_temp_path {directory};
  uwsgi_temp_path {directory};
  scgi_temp_path {directory};
  server {{
    listen {address}:{port};
    keepalive_timeout 60s;
    location / {{ return 200 "{name}\\n"; }}
  }}
}}
""")
    process = subprocess.Popen(["/usr/sbin/nginx", "-p", directory, "-c", conf],
                               stderr=subprocess.PIPE)

    def up():
        try:
            socket.create_connection((address, port), timeout=1).close()
            return True
        except OSError:
            return False

    wait_until(up, f"nginx {name} on {address}:{port}", 15)
    return process


def write_hosts(path, address):
    # In place (the same inode): the bind mount shows this file, not whatever replaces it.
    with open(path, "r+") as f:
        f.seek(0)
        f.truncate()
        f.write(f"127.0.0.1 localhost\n{address} {NAME}\n")


def get(port, target):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", target)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def main():
    if os.geteuid() != 0:
        print("skipped: needs root (a mount namespace with its own /etc/hosts)")
        return SKIP
    fencegate = sys.argv[1]
    root = tempfile.mkdtemp(prefix="fencegate-dns-")
    port = next(p for p in iter(free_port, None)
                if port_free_on(p, ("127.0.0.2", "127.0.0.3")))
    hosts = os.path.join(root, "hosts")
    with open(hosts, "w") as f:
        f.write("")
    write_hosts(hosts, "127.0.0.2")
    config = os.path.join(root, "fencegate.yaml")
    with open(config, "w") as f:
        f.write(f"""access_log:
  path: ""
backends:
  api:
    kind: http
    servers:
      - http://{NAME}:{port}
    resolve_interval: 100ms
routes:
  - name: api
    prefix: /api/
    backend: api
    fence_key: "api:{{segment:2}}"
""")
    processes = []
    try:
        processes.append(start_nginx(root, "A", "127.0.0.2", port))
        processes.append(start_nginx(root, "B", "127.0.0.3", port))
        gateway = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c",
             'mount --bind "$0" /etc/hosts && exec "$@"', hosts, fencegate, "--config", config,
             "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--data-dir",
             os.path.join(root, "data")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        processes.append(gateway)
        line = gateway.stdout.readline().split()
        if not line or line[:2] != ["fencegate", "listening"]:
            raise AssertionError(f"the gateway did not start: {gateway.stderr.read()}")
        traffic = int(line[2].rsplit(":", 1)[1])
        admin = int(line[3].rsplit(":", 1)[1])

        # Keep-alive connections to A stay in the gateway's pool after these.
        for _ in range(4):
            assert get(traffic, "/api/x") == (200, "A\n"), get(traffic, "/api/x")

        def addresses():
            status, body = get(admin, "/admin/backends")
            assert status == 200, body
            backend = next(b for b in json.loads(body)["backends"] if b["name"] == "api")
            return backend["servers"][0]["addresses"]

        assert addresses() == [f"127.0.0.2:{port}"], addresses()
        write_hosts(hosts, "127.0.0.3")
        wait_until(lambda: addresses() == [f"127.0.0.3:{port}"],
                   "the gateway to resolve the name to its new address", 20)
        for _ in range(8):
            answer = get(traffic, "/api/x")
            assert answer == (200, "B\n"), f"after the name moved, a request got {answer}"
        print("ok: the gateway followed the name from 127.0.0.2 to 127.0.0.3")
        return 0
    finally:
        for process in reversed(processes):
            process.terminate()
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


if __name__ == "__main__":
    sys.exit(main())
