"""A keep-alive HTTP/1.1 client that sends an exact number of requests (wrk only runs for a
time), for the callgrind pass and the start-up checks. Connections are opened once, so the
measured requests include no connection set-up."""

import itertools
import socket
import threading

_TIMEOUT_S = 60


class Connection:
    def __init__(self, port):
        self._sock = socket.create_connection(("127.0.0.1", port), timeout=_TIMEOUT_S)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buffer = b""

    def close(self):
        self._sock.close()

    def exchange(self, request):
        """Sends one request and reads its whole response; returns the status code."""
        self._sock.sendall(request)
        head = self._read_until(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        fields = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        if status in (204, 304) or 100 <= status < 200:
            return status
        if "chunked" in fields.get("transfer-encoding", "").lower():
            self._skip_chunked()
        else:
            self._read_exactly(int(fields.get("content-length", "0")))
        return status

    def _fill(self):
        data = self._sock.recv(65536)
        if not data:
            raise ConnectionError("server closed the connection")
        self._buffer += data

    def _read_until(self, marker):
        while marker not in self._buffer:
            self._fill()
        head, _, self._buffer = self._buffer.partition(marker)
        return head

    def _read_exactly(self, count):
        while len(self._buffer) < count:
            self._fill()
        data, self._buffer = self._buffer[:count], self._buffer[count:]
        return data

    def _skip_chunked(self):
        while True:
            size = int(self._read_until(b"\r\n").split(b";")[0], 16)
            if size == 0:
                while self._read_until(b"\r\n"):  # trailer fields, then the empty line
                    pass
                return
            self._read_exactly(size + 2)


class Client:
    """`connections` keep-alive connections that share out a fixed number of requests."""

    def __init__(self, port, connections):
        self._connections = [Connection(port) for _ in range(connections)]

    def close(self):
        for connection in self._connections:
            connection.close()

    def send(self, requests, count):
        """Sends `count` requests in all, taking `requests` (a list of request byte strings) in
        turn across all connections, so any `len(requests)` consecutive ones cover each once;
        returns {status: how many}."""
        turn = itertools.count()  # next() is atomic under the GIL
        per_connection = [count // len(self._connections)] * len(self._connections)
        per_connection[0] += count - sum(per_connection)
        statuses = [dict() for _ in self._connections]
        errors = []

        def drive(index):
            try:
                for _ in range(per_connection[index]):
                    request = requests[next(turn) % len(requests)]
                    status = self._connections[index].exchange(request)
                    statuses[index][status] = statuses[index].get(status, 0) + 1
            except Exception as error:  # reported to the caller below
                errors.append(error)

        threads = [threading.Thread(target=drive, args=(i,)) for i in range(len(self._connections))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise RuntimeError(f"fixed-count client: {errors[0]}")
        total = {}
        for counts in statuses:
            for status, n in counts.items():
                total[status] = total.get(status, 0) + n
        return total


def request_bytes(workload, port):
    """The workload's fixed request for a proxy on `port`: one byte string per key of its
    rotation."""
    head = workload.fixed_request.replace("{host}", f"127.0.0.1:{port}")
    return [head.replace("{i}", str(i)).encode() + workload.fixed_body
            for i in range(workload.rotation)]
