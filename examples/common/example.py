"""Shared by the Python examples: the fencegate client library from this checkout
(clients/python), the examples' arguments, output lines and exit codes."""

import argparse
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "clients", "python"))
import fencegate  # noqa: E402

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


def arguments(doc, service_option, service_env, service_default, service_help=None):
    """The arguments every example takes, plus its lock service's address."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("lock_name")
    parser.add_argument("resource_path")
    parser.add_argument("--fencegate",
                        default=os.environ.get("FENCEGATE_URL", "http://127.0.0.1:8080"))
    parser.add_argument(service_option, default=os.environ.get(service_env, service_default),
                        help=service_help)
    parser.add_argument("--lease-seconds", type=float,
                        default=float(os.environ.get("LEASE_SECONDS", 10)))
    parser.add_argument("--wait-seconds", type=float,
                        default=float(os.environ.get("WAIT_SECONDS", 30)))
    return parser.parse_args()


def lost(lease):
    report(f"lost lock={lease.name} token={lease.token}: {lease.lost_reason}")


def lock_and_write(args, locks, describe=lambda lease: ""):
    """Takes the lock from `locks` (a token source of the library), then PUTs the resource once
    per line of standard input with the lease's token. Returns the exit code.

    The writes go out even after the keeper noticed a lost lease (stop_on_lost=False): noticing
    comes too late for a client that was paused, and fencegate's 409 is the answer that counts."""
    try:
        with locks.acquire(args.lock_name, ttl=args.lease_seconds, wait=args.wait_seconds,
                           on_lost=lost) as lease:
            report(f"acquired lock={args.lock_name} token={lease.token}{describe(lease)}")
            session = fencegate.FencedSession(args.fencegate, lease, stop_on_lost=False)
            for line in sys.stdin:
                path = args.resource_path
                try:
                    response = session.put(path, line.rstrip("\n").encode() + b"\n")
                except fencegate.FencedOut as error:
                    report(f"refused {path} token={lease.token} status={error.status} {error.body()}")
                    return EXIT_FENCED
                except fencegate.ProblemError as error:
                    report(f"failed {path} token={lease.token} status={error.status} {error.body()}")
                    return EXIT_ERROR
                report(f"wrote {path} token={lease.token} status={response.status}")
    except fencegate.NotAcquired as error:
        report(f"not acquired: {error}")
        return EXIT_NOT_ACQUIRED
    except Exception as error:  # the examples report any failure and exit non-zero
        report(f"error: {error}", sys.stderr)
        return EXIT_ERROR
    return EXIT_OK
