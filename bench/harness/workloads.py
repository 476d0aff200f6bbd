"""The workloads: what wrk sends, and the same request for the fixed-count callgrind pass."""

from dataclasses import dataclass

BODY_1KIB = b"x" * 1024


@dataclass(frozen=True)
class Workload:
    name: str
    title: str
    path: str
    connections: int
    threads: int
    script: str = ""
    # Every request advances a fence by one token, so each 2xx is one durable advance.
    advances: bool = False
    # The request as raw bytes, for workloads measured under callgrind (host is filled in).
    fixed_request: str = ""
    fixed_body: bytes = b""


def all_workloads(connections):
    return [
        Workload("get", f"GET, {connections} connections", "/get", connections, 1,
                 fixed_request="GET /get HTTP/1.1\r\nHost: {host}\r\n\r\n"),
        Workload("put_current", f"PUT 1 KiB at current token, {connections} connections",
                 "/put/current", connections, 1, script="put_current.lua",
                 fixed_request=("PUT /put/current HTTP/1.1\r\nHost: {host}\r\n"
                                "Content-Length: 1024\r\nFencing-Token: 1\r\n"
                                "Content-Type: application/octet-stream\r\n\r\n"),
                 fixed_body=BODY_1KIB),
        Workload("put_advance_1", "PUT 1 KiB advancing the token, 1 connection", "/", 1, 1,
                 script="put_advance.lua", advances=True),
        Workload("put_advance_64", "PUT 1 KiB advancing the token, 64 connections", "/", 64, 1,
                 script="put_advance.lua", advances=True),
    ]
