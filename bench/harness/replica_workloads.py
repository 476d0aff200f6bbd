"""The workloads only the replica rows run (bench/replicas.py), and the advance keys they share
between runs."""

from . import fixed_client
from .workloads import Workload

# Keys of put_advance_1 and put_advance_64 (put_advance.lua's default).
ADVANCE_KEYS = 4096

PUT_FRESH_64 = Workload("put_fresh_64", "PUT 1 KiB, every request the first write of a key "
                        "never written before, 64 connections", "/", 64, 1,
                        script="put_fresh.lua", advances=True, body_bytes=1024)
# The raw etcd peer of put_advance_1 on etcd-3: one txn per request to the leader.
ETCD_TXN_1 = Workload("etcd_txn_1", "etcd txn (compare + put of one fresh key) per request "
                      "straight to the etcd leader, 1 connection", "/v3/kv/txn", 1, 1,
                      script="etcd_txn.lua")
# The forwarding rows: put_current.lua's fenced PUT of /put/current on one connection.
PUT_CURRENT_1 = Workload("put_current_1", "PUT 1 KiB at current token, 1 connection",
                         "/put/current", 1, 1, script="put_current.lua", body_bytes=1024)


class AdvanceKeys:
    """One setup's ADVANCE_KEYS keys (/adv/<tag>/<k>), written once at token 1 before the first
    run, so every advancing run advances keys that exist; each run starts above every token
    sent before (put_advance.lua's third argument)."""

    def __init__(self, tag):
        self.tag = tag
        self.next_token = 2

    def prefill(self, port, connections=64):
        """Writes every key at token 1 through the setup's traffic port."""
        head = ("PUT /adv/{tag}/{k} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 1024"
                "\r\nFencing-Token: 1\r\nContent-Type: application/octet-stream\r\n\r\n")
        requests = [head.format(tag=self.tag, k=k, port=port).encode() + b"x" * 1024
                    for k in range(ADVANCE_KEYS)]
        client = fixed_client.Client(port, connections)
        try:
            statuses = client.send(requests, ADVANCE_KEYS)
        finally:
            client.close()
        if set(statuses) - {200, 201, 204}:
            raise RuntimeError(f"prefill of /adv/{self.tag}/: statuses {statuses}")

    def script_args(self):
        return [self.tag, ADVANCE_KEYS, self.next_token]

    def ran(self, figures, connections):
        """After a run: wrk reports the requests answered; up to one more per connection was
        sent and not counted, so the next run starts a round above those too."""
        sent = figures["requests"] + figures["socket_errors"] + connections
        self.next_token += sent // ADVANCE_KEYS + 1
