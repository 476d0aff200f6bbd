"""Processes the benchmark starts, pinned to a CPU, each stopped by its PID on exit."""

import atexit
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_STOP_GRACE_S = 15
_running = []


class Process:
    """One started process; its PID is the program's own (taskset execs it)."""

    def __init__(self, name, argv, cpu, log_path, cwd=None):
        self.name = name
        self.log_path = Path(log_path)
        self._log = open(self.log_path, "wb")
        self.popen = subprocess.Popen(
            ["taskset", "-c", str(cpu)] + [str(a) for a in argv],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
        )
        self.pid = self.popen.pid
        _running.append(self)

    def alive(self):
        return self.popen.poll() is None

    def cpu_seconds(self):
        """User + system CPU time of every thread of the process so far."""
        stat = Path(f"/proc/{self.pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        # Fields 14 and 15 of proc(5) (utime, stime); index 0 here is field 3.
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS

    def rss_kib(self):
        return self._status_kib("VmRSS:")

    def peak_rss_kib(self):
        """VmHWM: the highest RSS since start or since the last reset_peak_rss()."""
        return self._status_kib("VmHWM:")

    def reset_peak_rss(self):
        # proc(5): writing 5 to clear_refs resets the peak RSS to the current RSS.
        Path(f"/proc/{self.pid}/clear_refs").write_text("5")

    def _status_kib(self, field):
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
        return 0

    def log_tail(self, lines=20):
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def wait_for_line(self, pattern, timeout_s):
        """Returns the first match of pattern in the process's output, or raises."""
        deadline = time.monotonic() + timeout_s
        regex = re.compile(pattern)
        while time.monotonic() < deadline:
            match = regex.search(self.log_path.read_text(errors="replace"))
            if match:
                return match
            if not self.alive():
                raise RuntimeError(f"{self.name} exited early:\n{self.log_tail()}")
            time.sleep(0.05)
        raise RuntimeError(f"{self.name}: no line /{pattern}/ within {timeout_s}s:\n{self.log_tail()}")

    def stop(self):
        if self in _running:
            _running.remove(self)
        if self.alive():
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(_STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(_STOP_GRACE_S)
        self._log.close()


def stop_all():
    for process in reversed(list(_running)):
        process.stop()


def _exit_on_signal(signum, _frame):
    raise SystemExit(128 + signum)


atexit.register(stop_all)
# SIGINT too: a shell without job control starts background jobs with SIGINT ignored, which
# Python would otherwise keep.
for _signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(_signum, _exit_on_signal)


def free_port():
    """A port free right now on 127.0.0.1 (for servers that cannot report a port 0 bind)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, process, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not process.alive():
            raise RuntimeError(f"{process.name} exited early:\n{process.log_tail()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{process.name}: port {port} not open within {timeout_s}s:\n{process.log_tail()}")
