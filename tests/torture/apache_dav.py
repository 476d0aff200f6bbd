"""A real Apache 2.4 with mod_dav_fs (Debian's apache2) for the webdav torture mode, on 127.0.0.1
and a free port, serving a fresh data directory as /dav/ (the same standalone config as
tests/webdav/apache_dav.cc: nothing of /etc/apache2 is read). Started with
`apache2 -f CONF -DFOREGROUND`, stopped by its PID. The access log has one line per request:
method, path, status, the X-Torture-Attempt header and when the request arrived (µs)."""

import asyncio
import os
import pwd
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from free_port import free_port  # noqa: E402

APACHE = "/usr/sbin/apache2"
MODULES = "/usr/lib/apache2/modules"


def available():
    return os.access(APACHE, os.X_OK) and os.path.exists(os.path.join(MODULES, "mod_dav_fs.so"))


def _config(root, port):
    lines = [f"ServerRoot {root}", "ServerName 127.0.0.1", f"Listen 127.0.0.1:{port}",
             f"PidFile {root}/httpd.pid", f"ErrorLog {root}/error.log", "LogLevel warn"]
    for module in ("mpm_event", "authz_core", "alias", "dav", "dav_fs"):
        lines.append(f"LoadModule {module}_module {MODULES}/mod_{module}.so")
    if os.geteuid() == 0:
        lines += ["User www-data", "Group www-data"]
    lines += ["StartServers 2", "ThreadsPerChild 64", "MaxRequestWorkers 256",
              f"DAVLockDB {root}/lock/DAVLock",
              'LogFormat "%m %U %>s %{X-Torture-Attempt}i %{begin:usec}t" torture',
              f"CustomLog {root}/access.log torture",
              f"Alias /dav {root}/data",
              f"<Directory {root}/data>", "  Dav On", "  Require all granted", "</Directory>"]
    return "\n".join(lines) + "\n"


class ApacheDav:
    def __init__(self, run_dir):
        self.root = os.path.join(run_dir, "apache")
        self.access_log = os.path.join(self.root, "access.log")
        self.process = None
        self.port = None

    async def start(self):
        os.makedirs(self.root)
        os.chmod(self.root, 0o755)  # www-data reaches data/ and lock/
        # ... through the run directory (mkdtemp: 0700): search permission only, no listing.
        parent = os.path.dirname(self.root)
        while parent != "/" and os.stat(parent).st_uid == os.geteuid():
            if not os.stat(parent).st_mode & 0o001:
                os.chmod(parent, os.stat(parent).st_mode | 0o011)
            parent = os.path.dirname(parent)
        for sub in ("data", "lock"):
            path = os.path.join(self.root, sub)
            os.makedirs(path)
            if os.geteuid() == 0:
                user = pwd.getpwnam("www-data")
                os.chown(path, user.pw_uid, user.pw_gid)
        # A port picked here may be taken by another process before Apache binds it: retried.
        for _ in range(3):
            self.port = free_port()
            conf = os.path.join(self.root, "httpd.conf")
            with open(conf, "w", encoding="utf-8") as f:
                f.write(_config(self.root, self.port))
            self.process = await asyncio.create_subprocess_exec(
                APACHE, "-f", conf, "-DFOREGROUND", stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL)
            for _ in range(1000):  # ready in about 0.05 s; bounded at 10 s
                try:
                    _, writer = await asyncio.open_connection("127.0.0.1", self.port)
                    writer.close()
                    return
                except OSError:
                    if self.process.returncode is not None:
                        break
                    await asyncio.sleep(0.01)
            await self.stop()
        raise RuntimeError(f"apache2 did not come up; see {self.root}/error.log")

    async def stop(self):
        if self.process is None or self.process.returncode is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except asyncio.TimeoutError:
            self.process.kill()
            await self.process.wait()
