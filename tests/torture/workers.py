"""Worker clients: take a resource's lock, write through the gateway with the lock's token, and
misbehave the way real lock holders do: they stall (a GC or scheduler pause) between checking
their lease and writing, past the lease's end, and then write anyway; they retry on timeouts,
resets and 5xx with the same token; now and then they send a missing or malformed token."""

import asyncio
import json
import random
import time

import httpwire


class Attempt:
    """One request a worker sent, and what the worker saw of it."""

    def __init__(self, attempt, resource, token, client, seq, zombie, token_text):
        self.attempt = attempt
        self.resource = resource
        self.token = token
        self.client = client
        self.seq = seq
        self.zombie = zombie  # its lease had run out when it was sent
        self.token_text = token_text  # the Fencing-Token field as sent (None: missing)
        self.sent = time.monotonic()
        self.seen = None  # status the worker received, or "timeout" / "reset"


class Workload:
    def __init__(self, seed, issuer, relays, path_prefix, resources, deadline, max_writes,
                 client_timeout, pause_probability, pick_relay=None):
        self.seed = seed
        self.issuer = issuer
        self.relays = relays
        self.path_prefix = path_prefix
        self.resources = resources
        self.deadline = deadline
        self.max_writes = max_writes
        self.client_timeout = client_timeout
        self.pause_probability = pause_probability
        # (resource, token, retry) -> index into relays; None: any relay at random.
        self.pick_relay = pick_relay
        self.writes = 0  # logical writes (a write and its retries count once)
        self.attempts = []
        self.pauses = 0

    def done(self):
        return time.monotonic() >= self.deadline or self.writes >= self.max_writes

    async def run(self, workers):
        await asyncio.gather(*(self._worker(w) for w in range(workers)))

    async def _worker(self, client):
        rng = random.Random(f"{self.seed}/worker/{client}")
        seq = 0
        while not self.done():
            resource = rng.choice(self.resources)
            token = self.issuer.try_acquire(resource, client)
            if token is None:
                await asyncio.sleep(rng.uniform(0.005, 0.03))
                continue
            for _ in range(rng.randint(1, 6)):
                if self.done() or not self.issuer.renew(resource, client, token):
                    break
                if rng.random() < self.pause_probability:
                    # The lease was fine a moment ago; the pause outlasts it.
                    self.pauses += 1
                    await asyncio.sleep(self.issuer.ttl * rng.uniform(1.1, 3.0))
                seq += 1
                self.writes += 1
                outcome = await self._write(rng, client, resource, token, seq)
                if outcome == "fenced":
                    break  # a refusal tells a zombie it lost the lock
            self.issuer.release(resource, client, token)

    async def _write(self, rng, client, resource, token, seq):
        for retry in range(4):
            zombie = not self.issuer.holds(resource, client, token)
            roll = rng.random()
            token_text = (None if roll < 0.01 else
                          rng.choice(["+%d", "0x%x", "%d, %d", " %d 1"]) if roll < 0.02 else "%d")
            if token_text is not None:
                token_text = token_text % ((token,) * token_text.count("%"))
            attempt = Attempt(f"{client}-{seq}-{retry}", resource, token, client, seq, zombie,
                              token_text)
            self.attempts.append(attempt)
            relay = (self.relays[self.pick_relay(resource, token, retry)] if self.pick_relay
                     else rng.choice(self.relays))
            attempt.seen = await self._send(relay, attempt, rng)
            if isinstance(attempt.seen, int):
                if 200 <= attempt.seen < 300:
                    return "ok"
                if attempt.seen in (400, 409, 428):
                    return "fenced" if attempt.seen == 409 else "refused"
            await asyncio.sleep(rng.uniform(0.01, 0.1))
        return "gave up"

    async def _send(self, relay, attempt, rng):
        body = json.dumps({"resource": attempt.resource, "token": attempt.token,
                           "client": attempt.client, "seq": attempt.seq,
                           "attempt": attempt.attempt, "copy": 0}, separators=(",", ":"))
        body = (body + " " * rng.randint(0, 400)).encode()
        head = (f"PUT {self.path_prefix}{attempt.resource} HTTP/1.1\r\n"
                f"Host: torture\r\nConnection: close\r\nX-Torture-Attempt: {attempt.attempt}\r\n"
                f"Content-Length: {len(body)}\r\n")
        if attempt.token_text is not None:
            head += f"Fencing-Token: {attempt.token_text}\r\n"
        try:
            response = await httpwire.exchange(relay.port, (head + "\r\n").encode() + body,
                                               timeout=self.client_timeout)
        except asyncio.TimeoutError:
            return "timeout"
        except (OSError, asyncio.IncompleteReadError):
            return "reset"
        status = httpwire.status_of(response)
        return status if status is not None else "reset"
