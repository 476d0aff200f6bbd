"""Shared by the Python examples: writes through fencegate with a fencing token."""

import os
import sys
import threading
import urllib.error
import urllib.request

DEFAULT_URL = os.environ.get("FENCEGATE_URL", "http://127.0.0.1:8080")

# Exit codes shared by every example.
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_FENCED, EXIT_NOT_ACQUIRED = 0, 1, 2, 3, 4

_report_lock = threading.Lock()


def report(line, stream=None):
    """Writes one whole line. The lease keeper runs on its own thread, and print() writes the
    text and its newline separately, so two threads printing could glue their lines together."""
    stream = stream or sys.stdout
    with _report_lock:
        stream.write(line + "\n")
        stream.flush()


class Fenced(Exception):
    """fencegate refused our token (409): a newer lock holder has written since. Stop."""


def fenced_put(base_url, path, token, body):
    """Replaces the resource at `path` with `body`, carrying "Fencing-Token: token".

    Raises Fenced on 409 and RuntimeError on any other failure.
    """
    request = urllib.request.Request(base_url + path, data=body.encode() + b"\n", method="PUT",
                                     headers={"Fencing-Token": str(token)})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            report(f"wrote {path} token={token} status={response.status}")
    except urllib.error.HTTPError as error:
        detail = error.read().decode(errors="replace")
        if error.code == 409:
            report(f"refused {path} token={token} status=409 {detail}")
            raise Fenced(detail) from None
        report(f"failed {path} token={token} status={error.code} {detail}")
        raise RuntimeError(f"fencegate answered {error.code}") from None


def write_lines(base_url, path, token, lines=sys.stdin):
    """One fenced_put per input line: each line is the resource's next version."""
    for line in lines:
        fenced_put(base_url, path, token, line.rstrip("\n"))


def run_worker(acquire_and_write):
    """Runs `acquire_and_write()` and maps its outcome onto the shared exit codes."""
    try:
        acquire_and_write()
    except Fenced:
        return EXIT_FENCED
    except TimeoutError as error:
        report(f"not acquired: {error}")
        return EXIT_NOT_ACQUIRED
    except Exception as error:  # the examples report any failure and exit non-zero
        report(f"error: {error}", sys.stderr)
        return EXIT_ERROR
    return EXIT_OK
