"""Keeps a real etcd cluster busy but healthy (the replicas mode's busy-etcd fault): --threads
clients, each on its own keep-alive connection to one member, put --value-size bytes under
/busy/ through the JSON gateway as fast as etcd answers, for --seconds. Its own process, so its
work does not slow the harness's relays down. Standard library only."""

import argparse
import base64
import http.client
import json
import threading
import time


def put_loop(endpoint, thread, value, deadline, counts):
    host, port = endpoint.rsplit(":", 1)
    connection = None
    n = 0
    while time.monotonic() < deadline:
        if connection is None:
            connection = http.client.HTTPConnection(host, int(port), timeout=5)
        key = base64.b64encode(f"/busy/{thread}/{n % 64}".encode()).decode()
        body = json.dumps({"key": key, "value": value})
        try:
            connection.request("POST", "/v3/kv/put", body=body,
                               headers={"Content-Type": "application/json"})
            connection.getresponse().read()
            n += 1
        except (OSError, http.client.HTTPException):
            connection.close()
            connection = None
            # Load pacing, not a wait for a state: a member that refuses (restarting) is not
            # hammered in a tight loop; the next put tries again.
            time.sleep(0.05)
    counts[thread] = n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoints", required=True, help="host:port,host:port,...")
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--value-size", type=int, default=4096)
    parser.add_argument("--seconds", type=float, required=True)
    args = parser.parse_args()
    endpoints = args.endpoints.split(",")
    value = base64.b64encode(b"b" * args.value_size).decode()
    deadline = time.monotonic() + args.seconds
    counts = [0] * args.threads
    threads = [threading.Thread(target=put_loop,
                                args=(endpoints[i % len(endpoints)], i, value, deadline, counts))
               for i in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"puts": sum(counts), "seconds": args.seconds}))


if __name__ == "__main__":
    main()
