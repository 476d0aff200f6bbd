"""The asyncio servers of the harness (recording backend, relays) listen the same way."""

import asyncio

import httpwire


class LoopbackServer:
    """Serves connections with the subclass's `_serve(reader, writer)` on an ephemeral loopback
    port, known (`port`) once start() returned. kill() stops it the way a killed server stops,
    and a later start() listens on the same port again, as a restarted server would."""

    _server = None
    port = None
    _live = None

    async def start(self):
        self._live = set()
        self._server = await asyncio.start_server(self._tracked, "127.0.0.1", self.port or 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self):
        self._server.close()

    async def kill(self):
        """The port refuses connections from now on, and every open connection is reset."""
        self._server.close()
        for writer in list(self._live):
            httpwire.reset(writer)
        await self._server.wait_closed()

    async def _tracked(self, reader, writer):
        self._live.add(writer)
        try:
            await self._serve(reader, writer)
        finally:
            self._live.discard(writer)
