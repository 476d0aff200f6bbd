"""The bounded poll every harness waits with, so a broken server fails the test instead of
hanging it."""
import time


def wait_until(predicate, what, deadline, interval=0.1):
    """Polls `predicate` every `interval` seconds until it returns a true value, which it
    returns; raises AssertionError naming `what` after `deadline` seconds."""
    end = time.monotonic() + deadline
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"gave up after {deadline}s waiting for {what}")
        time.sleep(interval)
