"""What the snapshots of every mode that reads its backend directly (filesystem, webdav, s3) have
in common: the record of one read, its body decoded as the JSON record of the write that made
it, and the thinning that keeps a snapshot when the resource changed and at least every
`keep_every` seconds otherwise, which bounds memory on long runs."""

import json


def empty_snapshot(resource, start):
    """A read of `resource` begun at `start` that found nothing (yet)."""
    return {"start": start, "resource": resource, "token": None, "stored_token": None,
            "body": None}


def set_body(snapshot, data):
    """The body read, and the token in it (what was applied). A body that is no write record
    still counts, as attempt "?", so the checker reports it instead of skipping it."""
    try:
        snapshot["body"] = json.loads(data)
    except ValueError:
        snapshot["body"] = {"attempt": "?", "copy": -1, "token": None,
                            "raw": data[:80].decode("latin-1")}
    snapshot["token"] = snapshot["body"].get("token")


class ThinnedSnapshots:
    """`snapshots`: those kept by keep(). With `stored_token_counts`, a change of the stored token
    alone is a change too (where it is read separately from the body)."""

    def __init__(self, keep_every, stored_token_counts=False):
        self.keep_every = keep_every
        self.stored_token_counts = stored_token_counts
        self.snapshots = []
        self._last = {}

    def keep(self, snapshot):
        previous = self._last.get(snapshot["resource"])
        body = snapshot["body"] or {}
        identity = (snapshot["token"], body.get("attempt"), body.get("copy"))
        if self.stored_token_counts:
            identity += (snapshot["stored_token"],)
        if (previous is None or previous[0] != identity
                or snapshot["start"] - previous[1] >= self.keep_every):
            self.snapshots.append(snapshot)
            self._last[snapshot["resource"]] = (identity, snapshot["start"])
