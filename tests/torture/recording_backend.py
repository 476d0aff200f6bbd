"""The recording backend: a keep-alive HTTP/1.1 server that applies every PUT it receives in
full, appending (resource, token, client, sequence, attempt, copy) to its log in arrival order, and
that misbehaves on a seeded schedule: slow answers, 5xx without applying, connection resets and
hangs (each of the last two with or without applying first).

It applies a write the moment its body has arrived and never later: a backend that keeps working
on a request after the gateway gave up on it can apply it after a newer write, a gap only a
backend that checks tokens itself (or conditional writes) can close, documented in
docs/ARCHITECTURE.md. Its delays stay below the gateway's response timeout for that reason."""

import asyncio
import json
import random
import time

import httpwire
from loopback import LoopbackServer


class AppliedLog:
    """Every applied write in arrival order, in memory and in a file; one log may be shared by
    several recording backends (the servers of one backend in front of one store)."""

    def __init__(self, path):
        self.entries = []
        self._file = open(path, "w", encoding="utf-8")

    def append(self, entry):
        entry["index"] = len(self.entries)
        self.entries.append(entry)
        self._file.write(json.dumps(entry) + "\n")

    def close(self):
        self._file.close()


class RecordingBackend(LoopbackServer):
    def __init__(self, seed, applied_log, token_field):
        self.seed = seed
        self.token_field = token_field.lower()
        self.applied = applied_log
        self.faults = {}

    @property
    def log(self):
        return self.applied.entries

    def _apply(self, target, headers, body):
        try:
            record = json.loads(body)
        except ValueError:
            record = {}
        token = headers.get(self.token_field)
        entry = {
            "time": time.monotonic(),
            "resource": target.rsplit("/", 1)[-1],
            # The token the gateway admitted (forwarded by forward_token_header), not the one
            # the client wrote in its body.
            "token": int(token) if token is not None and token.isdigit() else None,
            "client": record.get("client"),
            "seq": record.get("seq"),
            "attempt": record.get("attempt"),
            "copy": record.get("copy"),
        }
        self.applied.append(entry)

    async def _serve(self, reader, writer):
        try:
            while True:
                message = await httpwire.read_message(reader)
                if message is None:
                    break
                start, headers, _, body = message
                method, target = start.split(" ")[:2]
                if method == "GET" and target == "/health":
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                    continue
                if method != "PUT":
                    writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                    continue
                attempt = headers.get("x-torture-attempt", "?")
                copy = b'"copy":1' in body
                rng = random.Random(f"{self.seed}/backend/{attempt}/{int(copy)}")
                roll = rng.random()
                fault = ("fail" if roll < 0.04 else "reset" if roll < 0.07 else
                         "hang" if roll < 0.09 else "slow" if roll < 0.17 else "ok")
                self.faults[fault] = self.faults.get(fault, 0) + 1
                if fault == "fail":
                    writer.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
                    continue
                if fault == "ok" or fault == "slow" or rng.random() < 0.5:
                    self._apply(target, headers, body)
                if fault == "reset":
                    httpwire.reset(writer)
                    return
                if fault == "hang":
                    await reader.read(-1)  # until the gateway gives up and closes
                    break
                if fault == "slow":
                    await asyncio.sleep(rng.uniform(0.05, 0.8))
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        writer.transport.abort()
