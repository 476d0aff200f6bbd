"""The asyncio servers of the harness (recording backend, relays) listen the same way."""

import asyncio


class LoopbackServer:
    """Serves connections with the subclass's `_serve(reader, writer)` on an ephemeral loopback
    port, known (`port`) once start() returned."""

    _server = None
    port = None

    async def start(self):
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self):
        self._server.close()
