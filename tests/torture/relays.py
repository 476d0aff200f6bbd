"""Fault-injecting TCP relays.

ClientRelay sits between the workers and one gateway. It understands one request per connection
(the workers send `Connection: close`), so it can delay a request, hold it past the client's
timeout (the client retries while the old copy is still on its way), deliver a second copy later
on another connection (a retransmission by a proxy or client library), or reset the client's
connection before or after forwarding. Whatever happens to the client, every copy it forwards is
delivered and the gateway's answer to it is recorded: those answers are what the checker holds the
backend to.

BackendRelay sits between a gateway and its backend and relays bytes, delaying pieces and
resetting connections. It never duplicates: a request repeated on the backend leg behind the
gateway's back is something no gateway can fence (TCP removes retransmitted segments; only a
backend that checks tokens itself could), and it drops whatever it still holds once either side
has closed, as a network does when a connection dies.
"""

import asyncio
import random
import time

import httpwire
from loopback import LoopbackServer

COPY_MARK = b'"copy":0'
DUPLICATE_MARK = b'"copy":1'


class ClientRelay(LoopbackServer):
    def __init__(self, name, upstream_port, seed, client_timeout, answers):
        self.name = name
        self.upstream_port = upstream_port
        self.seed = seed
        self.client_timeout = client_timeout
        self.answers = answers  # (attempt, copy) -> (status, monotonic time, problem type)
        self.faults = {}
        self._orphans = set()

    async def drain(self, timeout):
        """Waits for the copies still on their way (stalled or duplicated) to be answered."""
        if self._orphans:
            await asyncio.wait(list(self._orphans), timeout=timeout)

    async def stop(self):
        await super().stop()
        for task in list(self._orphans):
            task.cancel()

    def _count(self, fault):
        self.faults[fault] = self.faults.get(fault, 0) + 1

    def _spawn(self, coroutine):
        task = asyncio.ensure_future(coroutine)
        self._orphans.add(task)
        task.add_done_callback(self._orphans.discard)
        return task

    async def _deliver(self, data, attempt, copy, delay):
        """Forwards one copy to the gateway and records its answer."""
        if delay:
            await asyncio.sleep(delay)
        try:
            response = await httpwire.exchange(self.upstream_port, data, timeout=60)
            status = httpwire.status_of(response)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
            response, status = b"", None
        problem = ""
        if status is not None and status >= 400 and b'"type":"' in response:
            problem = response.split(b'"type":"', 1)[1].split(b'"', 1)[0].decode()
            problem = problem.rsplit("/", 1)[-1]
        self.answers[(attempt, copy)] = (status, time.monotonic(), problem, self.name)
        return response

    async def _serve(self, reader, writer):
        try:
            message = await httpwire.read_message(reader)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            writer.transport.abort()
            return
        if message is None:
            writer.close()
            return
        _, headers, head, body = message
        attempt = headers.get("x-torture-attempt", "?")
        data = head + body
        rng = random.Random(f"{self.seed}/client-relay/{attempt}")
        roll = rng.random()
        fault = ("reset-before" if roll < 0.03 else "reset-after" if roll < 0.06 else
                 "stall" if roll < 0.10 else "duplicate" if roll < 0.20 else
                 "delay" if roll < 0.35 else "pass")
        self._count(fault)
        if fault == "reset-before":
            httpwire.reset(writer)
            return
        if fault == "duplicate":
            copy = data.replace(COPY_MARK, DUPLICATE_MARK, 1)
            self._spawn(self._deliver(copy, attempt, 1, rng.uniform(0.0, 2.0)))
        delay = {"delay": rng.uniform(0.01, 0.3),
                 "stall": self.client_timeout + rng.uniform(0.5, 2.0)}.get(fault, 0.0)
        delivery = self._spawn(self._deliver(data, attempt, 0, delay))
        if fault == "reset-after":
            await asyncio.sleep(rng.uniform(0.0, 0.05))
            httpwire.reset(writer)
            return
        try:
            response = await asyncio.shield(delivery)
            writer.write(response)
            await writer.drain()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            writer.transport.abort()


class BackendRelay(LoopbackServer):
    def __init__(self, upstream_port, seed):
        self.upstream_port = upstream_port
        self.seed = seed
        self.connections = 0
        self.resets = 0
        self.delays = 0

    async def _serve(self, down_reader, down_writer):
        rng = random.Random(f"{self.seed}/backend-relay/{self.connections}")
        self.connections += 1
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            httpwire.reset(down_writer)
            return
        closed = asyncio.Event()

        def close(with_reset):
            if closed.is_set():
                return
            closed.set()
            for w in (down_writer, up_writer):
                if with_reset:
                    httpwire.reset(w)
                else:
                    w.transport.abort()

        await asyncio.gather(self._pump(down_reader, up_writer, rng, closed, close),
                             self._pump(up_reader, down_writer, rng, closed, close))

    async def _pump(self, reader, writer, rng, closed, close):
        queue = asyncio.Queue()

        async def read_side():
            try:
                while True:
                    chunk = await reader.read(65536)
                    if not chunk:
                        break
                    await queue.put(chunk)
            except OSError:
                pass
            close(False)  # a dead side takes everything still queued with it

        reading = asyncio.ensure_future(read_side())
        try:
            while not closed.is_set():
                getter = asyncio.ensure_future(queue.get())
                stopper = asyncio.ensure_future(closed.wait())
                await asyncio.wait({getter, stopper}, return_when=asyncio.FIRST_COMPLETED)
                stopper.cancel()
                if not getter.done():
                    getter.cancel()
                    break
                chunk = getter.result()
                roll = rng.random()
                if roll < 0.01:
                    self.resets += 1
                    close(True)
                    break
                if roll < 0.10:
                    self.delays += 1
                    await asyncio.sleep(rng.uniform(0.005, 0.2))
                if closed.is_set():
                    break
                writer.write(chunk)
        finally:
            reading.cancel()
