"""The workloads: what wrk sends, and the same request for the fixed-count callgrind pass."""

from dataclasses import dataclass
from pathlib import Path

BODY_1KIB = b"x" * 1024
# The realistic header block (the fields a real S3 client sends, in its order); the wrk
# scripts read the same file (lua/realistic.lua).
REALISTIC_PUT = Path(__file__).resolve().parent.parent / "lua" / "realistic_put.http"
# Keys of put_keys, written in turn.
SPREAD_KEYS = 1000


@dataclass(frozen=True)
class Workload:
    name: str
    title: str
    path: str
    connections: int
    threads: int
    script: str = ""
    # Script arguments after the run tag (the first one, given by the driver).
    script_args: tuple = ()
    # Every request advances a fence by one token, so each 2xx is one durable advance.
    advances: bool = False
    # One connection advancing one key: the run compared with the floor (raw sync + direct).
    floor: bool = False
    # Request body size, for MB/s.
    body_bytes: int = 0
    # The request as raw bytes ({host} is filled in; {i} by 0 .. rotation-1, one request each
    # in turn), for the start-up check and, when `counted`, the callgrind pass.
    fixed_request: str = ""
    fixed_body: bytes = b""
    rotation: int = 1
    counted: bool = True


def realistic_put(path, token, length):
    """The realistic header block of a PUT, CRLF line ends, with {host} left to fill in."""
    text = REALISTIC_PUT.read_text().rstrip("\n")
    for name, value in (("path", path), ("token", token), ("length", length)):
        text = text.replace("{" + name + "}", str(value))
    return text.replace("\n", "\r\n") + "\r\n\r\n"


def _short_put(path, length):
    return (f"PUT {path} HTTP/1.1\r\nHost: {{host}}\r\nContent-Length: {length}\r\n"
            "Fencing-Token: 1\r\nContent-Type: application/octet-stream\r\n\r\n")


def _body_put(name, size, label, connections):
    return Workload(name, f"PUT {label} at current token, {connections} connections",
                    f"/put/{name}", connections, 1, script="put_body.lua", script_args=(size,),
                    body_bytes=size, fixed_request=_short_put(f"/put/{name}", size),
                    fixed_body=b"x" * size, counted=False)


def all_workloads(connections):
    return [
        Workload("get", f"GET, {connections} connections", "/get", connections, 1,
                 fixed_request="GET /get HTTP/1.1\r\nHost: {host}\r\n\r\n"),
        Workload("put_current", f"PUT 1 KiB at current token, {connections} connections",
                 "/put/current", connections, 1, script="put_current.lua", body_bytes=1024,
                 fixed_request=_short_put("/put/current", 1024), fixed_body=BODY_1KIB),
        Workload("put_headers", f"PUT 1 KiB at current token with the realistic header block "
                 f"(12 fields), {connections} connections", "/put/headers", connections, 1,
                 script="put_headers.lua", body_bytes=1024,
                 fixed_request=realistic_put("/put/headers", 1, 1024), fixed_body=BODY_1KIB),
        Workload("put_keys", f"PUT 1 KiB at current token on {SPREAD_KEYS:,} keys in turn, "
                 f"{connections} connections", "/keys/0", connections, 1, script="put_keys.lua",
                 script_args=(SPREAD_KEYS,), body_bytes=1024,
                 fixed_request=_short_put("/keys/{i}", 1024), fixed_body=BODY_1KIB,
                 rotation=SPREAD_KEYS),
        _body_put("put_64k", 64 << 10, "64 KiB", connections),
        _body_put("put_1m", 1 << 20, "1 MiB", 4),
        Workload("put_advance_1", "PUT 1 KiB advancing the token, 4,096 keys in turn, "
                 "1 connection", "/", 1, 1, script="put_advance.lua", advances=True,
                 body_bytes=1024),
        Workload("put_advance_1_hot", "PUT 1 KiB advancing the token of one key, 1 connection",
                 "/", 1, 1, script="put_advance.lua", script_args=(1,), advances=True,
                 floor=True, body_bytes=1024),
        Workload("put_advance_64", "PUT 1 KiB advancing the token, 4,096 keys in turn, "
                 "64 connections", "/", 64, 1, script="put_advance.lua", advances=True,
                 body_bytes=1024),
        Workload("put_hot_64", "PUT 1 KiB advancing the token of one hot key, 64 connections",
                 "/", 64, 1, script="put_hot.lua", advances=True, body_bytes=1024),
    ]
