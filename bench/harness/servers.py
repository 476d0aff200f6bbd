"""The backend and the proxies under test, each started from a template in bench/conf/."""

from dataclasses import dataclass
from pathlib import Path

from . import procs

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
PROXIES = ("fencegate", "nginx", "nginx_lua", "haproxy", "direct")
# The peers that check fencing tokens as fencegate does (the others only forward).
FENCING = ("fencegate", "nginx_lua")


@dataclass
class Endpoint:
    """Where a workload sends its requests; process is the proxy measured (None for direct)."""

    name: str
    port: int
    process: procs.Process = None
    admin_port: int = None  # fencegate's, for its /metrics

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"


def _render(template, dest, **values):
    text = (CONF_DIR / template).read_text()
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", str(value))
    if "{{" in text:
        raise ValueError(f"{template}: unfilled placeholder")
    dest.write_text(text)
    return dest


def _nginx_dir(workdir, name):
    directory = Path(workdir) / name
    for sub in ("", "empty", "client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    return directory


def start_backend(workdir, cpu, stream_tmp):
    """stream_tmp: where the backend spools streamed bodies (tmpfs, so no disk is involved)."""
    directory = _nginx_dir(workdir, "backend")
    port = procs.free_port()
    conf = _render("backend-nginx.conf", directory / "nginx.conf", DIR=directory, PORT=port,
                   STREAM_TMP=stream_tmp)
    process = procs.Process("backend", ["nginx", "-p", directory, "-c", conf], cpu, directory / "out.log")
    procs.wait_for_port(port, process, 10)
    return Endpoint("direct", port, None), process


def start_fencegate(name, workdir, cpu, backend_port, binary, extra_config="", port=0,
                    response_timeout=None, wrapper=()):
    """fencegate on conf/fencegate.yaml with `extra_config` (whole top-level blocks: tls:,
    store:, cluster:) appended, listening on `port` (0: any); `response_timeout` overrides the
    backend's; `wrapper` prefixes the command (valgrind) and stretches the start-up timeout.
    Returns (traffic port, admin port, process)."""
    directory = Path(workdir) / name
    directory.mkdir(parents=True, exist_ok=True)
    conf = _render("fencegate.yaml", directory / "fencegate.yaml", BACKEND_PORT=backend_port)
    text = conf.read_text()
    if response_timeout:
        idle = "    max_idle_connections: 64\n"
        text = text.replace(idle, f"{idle}    response_timeout: {response_timeout}\n")
    conf.write_text(text + extra_config)
    process = procs.Process(name, [*wrapper, binary, "--config", conf, "--listen",
                                   f"127.0.0.1:{port}", "--admin-listen", "127.0.0.1:0",
                                   "--data-dir", directory / "data"], cpu, directory / "out.log")
    match = process.wait_for_line(r"fencegate listening traffic=[^:\s]+:(\d+) admin=\S+:(\d+)",
                                  120 if wrapper else 15)
    return int(match.group(1)), int(match.group(2)), process


def start_proxy(name, workdir, cpu, backend_port, fencegate_bin, wrapper=(), tag=""):
    """Starts proxy `name`; wrapper prefixes the command (valgrind) and stretches the timeouts."""
    timeout_s = 120 if wrapper else 15
    directory = Path(workdir) / f"{name}{tag}"
    if name in ("nginx", "nginx_lua"):
        directory = _nginx_dir(workdir, f"{name}{tag}")
        port = procs.free_port()
        template = "proxy-nginx.conf" if name == "nginx" else "proxy-nginx-lua.conf"
        conf = _render(template, directory / "nginx.conf", DIR=directory, PORT=port,
                       BACKEND_PORT=backend_port, CONF_DIR=CONF_DIR)
        argv = ["nginx", "-p", directory, "-c", conf]
    elif name == "haproxy":
        directory.mkdir(parents=True, exist_ok=True)
        port = procs.free_port()
        conf = _render("haproxy.cfg", directory / "haproxy.cfg", PORT=port, BACKEND_PORT=backend_port)
        argv = ["haproxy", "-db", "-f", conf]
    elif name == "fencegate":
        directory.mkdir(parents=True, exist_ok=True)
        conf = _render("fencegate.yaml", directory / "fencegate.yaml", BACKEND_PORT=backend_port)
        argv = [fencegate_bin, "--config", conf, "--listen", "127.0.0.1:0",
                "--admin-listen", "127.0.0.1:0", "--data-dir", directory / "data"]
    else:
        raise ValueError(f"unknown proxy {name}")
    process = procs.Process(name + tag, list(wrapper) + argv, cpu, directory / "out.log")
    admin_port = None
    if name == "fencegate":
        match = process.wait_for_line(r"fencegate listening traffic=[^:\s]+:(\d+) admin=\S+:(\d+)",
                                      timeout_s)
        port, admin_port = int(match.group(1)), int(match.group(2))
    procs.wait_for_port(port, process, timeout_s)
    return Endpoint(name, port, process, admin_port)
