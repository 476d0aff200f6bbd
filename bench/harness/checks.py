"""Start-up checks: every proxy answers every workload's fixed request with a 2xx, and the
fencing peers (fencegate, nginx_lua) apply the same token rules, so they provably do the same
work in the timed runs."""

from . import fixed_client, servers

# (Fencing-Token value or None for no field, expected status class or code), in order, all on
# one fresh key. 2^53 + 1 then 2^53: equal as doubles, so a check that compared tokens as Lua
# numbers would admit the second one.
FENCING_CASES = [
    (None, 428),
    ("12a", 400),
    ("-1", 400),
    ("9223372036854775808", 400),  # 2^63, one above fencegate's highest token
    ("9007199254740993", 2),
    ("9007199254740992", 409),
    ("0009007199254740993", 2),  # equal to the highest, with leading zeros: admitted
    ("5", 409),
    ("9007199254740994", 2),
]


def check_endpoint(endpoint, workloads):
    """Fails fast when a proxy does not answer a workload's request with a 2xx."""
    client = fixed_client.Client(endpoint.port, 1)
    try:
        for workload in workloads:
            if workload.fixed_request:
                statuses = client.send(fixed_client.request_bytes(workload, endpoint.port), 1)
                if any(status >= 300 for status in statuses):
                    raise RuntimeError(f"{endpoint.name} answers {workload.name} with {statuses}")
    finally:
        client.close()


def check_fencing(endpoint, key="/check/fence"):
    """Raises unless the peer answers FENCING_CASES as fencegate's rules say (no-op for the
    proxies that only forward). Each request on its own connection: a refusal may close it."""
    if endpoint.name not in servers.FENCING:
        return
    for token, expected in FENCING_CASES:
        head = f"PUT {key} HTTP/1.1\r\nHost: 127.0.0.1:{endpoint.port}\r\nContent-Length: 4\r\n"
        if token is not None:
            head += f"Fencing-Token: {token}\r\n"
        connection = fixed_client.Connection(endpoint.port)
        try:
            status = connection.exchange((head + "\r\nbody").encode())
        finally:
            connection.close()
        if status != expected and status // 100 != expected:
            raise RuntimeError(f"{endpoint.name}: Fencing-Token {token!r} answered {status}, "
                               f"expected {expected if expected > 9 else f'{expected}xx'}")
