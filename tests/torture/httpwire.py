"""Just enough HTTP/1.1 framing for the harness: requests and responses with Content-Length."""

import asyncio
import socket
import struct


async def read_message(reader):
    """Reads one message (start line, header fields, Content-Length body).

    Returns (start_line, headers, head_bytes, body) with lower-cased field names, or None at a
    clean end of stream before a message starts.
    """
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial:
            return None
        raise
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return lines[0], headers, head, body


def reset(writer):
    """Closes a connection with a TCP RST, as a crashed peer or middlebox would."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()


def status_of(response):
    """The status code of a raw response, or None when it is not an HTTP response."""
    try:
        return int(response.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None


async def exchange(port, data, timeout):
    """Sends one raw request on a new connection and reads the response until the peer closes.

    Returns the raw response bytes, or raises OSError / asyncio.TimeoutError /
    asyncio.IncompleteReadError.
    """
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
    try:
        writer.write(data)
        return await asyncio.wait_for(reader.read(-1), timeout)
    finally:
        writer.transport.abort()
