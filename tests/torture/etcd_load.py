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


def put_loop(endpoints, thread, value, deadline, counts):
    at = thread % len(endpoints)
    connection = None
    failures_in_a_row = 0
    n = 0
    # A member that fails a put passes the thread's load to the next member; when every member
    # failed in a row, etcd is not there to be kept busy and the thread ends (never a tight loop
    # of refused connections).
    while time.monotonic() < deadline and failures_in_a_row < len(endpoints):
        if connection is None:
            host, port = endpoints[at].rsplit(":", 1)
            connection = http.client.HTTPConnection(host, int(port), timeout=5)
        key = base64.b64encode(f"/busy/{thread}/{n % 64}".encode()).decode()
        body = json.dumps({"key": key, "value": value})
        try:
            connection.request("POST", "/v3/kv/put", body=body,
                               headers={"Content-Type": "application/json"})
            connection.getresponse().read()
            n += 1
            failures_in_a_row = 0
        except (OSError, http.client.HTTPException):
            connection.close()
            connection = None
            failures_in_a_row += 1
            at = (at + 1) % len(endpoints)
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
    threads = [threading.Thread(target=put_loop, args=(endpoints, i, value, deadline, counts))
               for i in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"puts": sum(counts), "seconds": args.seconds}))


if __name__ == "__main__":
    main()
