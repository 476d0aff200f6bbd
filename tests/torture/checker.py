"""The checker: holds what the backend applied against what the gateway answered.

Violations of fencegate's invariant ("once a write with token N has been applied to a resource,
no write with a token lower than N is applied to it afterwards"):
  (a) lower-after-higher: a lower token applied after a higher one on the same resource;
  (b) acked-not-applied:  a copy the gateway answered 2xx that the backend never applied;
  (c) refused-applied:    a copy the gateway refused (400, 409, 428) that the backend applied.
The http backend's log is exact: every applied write in arrival order. The filesystem keeps only
the latest version of a file, so there the checker works from snapshots taken while the run goes
on (content and the `user.fencegate.token` xattr, read straight from the root) and a final one:
(a) a snapshot may never show a lower token than an earlier snapshot or than a write already
acknowledged when the snapshot began, (b) the final file carries at least the highest
acknowledged token, (c) no snapshot shows a refused copy.
"""

import bisect

REFUSED = (400, 409, 428)


def _is_ack(status):
    return isinstance(status, int) and 200 <= status < 300


def _describe_answer(answers, key):
    answer = answers.get(key)
    if answer is None:
        return "never answered"
    status, _, problem, gateway = answer
    return f"{gateway} answered {status}" + (f" ({problem})" if problem else "")


class Report:
    def __init__(self, mode):
        self.mode = mode
        self.figures = {}
        self.violations = []  # (kind, text)

    def violate(self, kind, text):
        self.violations.append((kind, text))


def count(report, workload, answers):
    f = report.figures
    f["writes"] = workload.writes
    f["attempts"] = len(workload.attempts)
    f["copies answered"] = len(answers)
    f["acknowledged (2xx)"] = sum(1 for a in answers.values() if _is_ack(a[0]))
    f["refused stale (409 at gateway)"] = sum(
        1 for a in answers.values() if a[0] == 409 and a[2] == "stale-token")
    f["refused stale (409 at backend)"] = sum(
        1 for a in answers.values() if a[0] == 409 and a[2] == "stale-token-at-backend")
    f["refused other (400/428)"] = sum(1 for a in answers.values() if a[0] in (400, 428))
    f["failed (5xx, no answer)"] = sum(
        1 for a in answers.values() if a[0] is None or a[0] >= 500)
    f["lock holder pauses past lease"] = workload.pauses
    zombies = [a for a in workload.attempts if a.zombie]
    f["zombie attempts"] = len(zombies)
    f["zombie refusals (409)"] = sum(
        1 for a in zombies if (answers.get((a.attempt, 0)) or (None,))[0] == 409)


def check_log(report, attempts, answers, log):
    """The http mode: the recording backend's log is every applied write in arrival order."""
    report.figures["applied"] = len(log)
    by_attempt = {a.attempt: a for a in attempts}
    applied = {}
    highest = {}  # resource -> log entry with the highest token so far
    history = {}  # resource -> entries so far
    for entry in log:
        key = (entry["attempt"], int(entry["copy"] or 0))
        applied.setdefault(key, entry)
        resource = entry["resource"]
        history.setdefault(resource, []).append(entry)
        sent = by_attempt.get(entry["attempt"])
        if entry["token"] is None or sent is None or entry["token"] != sent.token:
            report.violate("token-mismatch", f"applied {entry} with a token the client did "
                           f"not send ({sent.token_text if sent else 'unknown attempt'})")
            continue
        top = highest.get(resource)
        if top is not None and entry["token"] < top["token"]:
            excerpt = "\n    ".join(
                f"#{e['index']} token {e['token']} client {e['client']} seq {e['seq']} "
                f"attempt {e['attempt']} copy {e['copy']}: "
                f"{_describe_answer(answers, (e['attempt'], int(e['copy'] or 0)))}"
                for e in history[resource][-8:])
            report.violate("lower-after-higher",
                           f"{resource}: token {entry['token']} applied after token "
                           f"{top['token']} (log #{top['index']}); last applied writes:\n    "
                           + excerpt)
        else:
            highest[resource] = entry
    for key, answer in answers.items():
        if _is_ack(answer[0]) and key not in applied:
            report.violate("acked-not-applied",
                           f"attempt {key[0]} copy {key[1]}: {_describe_answer(answers, key)} "
                           "but the backend never applied it")
        if answer[0] in REFUSED and key in applied:
            report.violate("refused-applied",
                           f"attempt {key[0]} copy {key[1]}: {_describe_answer(answers, key)} "
                           f"but the backend applied it as log #{applied[key]['index']}")


def check_files(report, attempts, answers, snapshots, final):
    by_attempt = {a.attempt: a for a in attempts}
    acked = {}  # resource -> sorted [(time, token, key)]
    for key, (status, when, _, _) in answers.items():
        sent = by_attempt.get(key[0])
        if sent is not None and _is_ack(status):
            acked.setdefault(sent.resource, []).append((when, sent.token, key))
    # Per resource: answer times, and the highest acknowledged token up to each of them.
    ack_times, ack_best = {}, {}
    for resource, entries in acked.items():
        entries.sort()
        ack_times[resource] = [when for when, _, _ in entries]
        best, running = [], None
        for entry in entries:
            if running is None or entry[1] > running[1]:
                running = entry
            best.append(running)
        ack_best[resource] = best
    seen = set()
    last = {}  # resource -> previous snapshot
    for snap in snapshots + final:
        resource, token, body = snap["resource"], snap["token"], snap["body"]
        if body is None:
            continue
        key = (body["attempt"], body["copy"])
        seen.add(key)
        if token is None or snap["stored_token"] != token:
            report.violate("token-mismatch", f"{resource}: file holds {body} but the token "
                           f"stored with it is {snap['stored_token']}")
            continue
        if answers.get(key, (None,))[0] in REFUSED:
            report.violate("refused-applied", f"{resource}: the file holds attempt {key[0]} "
                           f"copy {key[1]}, which {_describe_answer(answers, key)}")
        previous = last.get(resource)
        if previous is not None and token < previous["token"]:
            report.violate("lower-after-higher",
                           f"{resource}: a snapshot at t={snap['start']:.3f} holds token {token} "
                           f"({key}), an earlier one at t={previous['start']:.3f} held "
                           f"{previous['token']} ({previous['body']['attempt']})")
        last[resource] = snap
        # The highest token acknowledged before this snapshot began.
        position = bisect.bisect_left(ack_times.get(resource, []), snap["start"])
        best = ack_best[resource][position - 1] if position > 0 else None
        if best is not None and token < best[1]:
            report.violate("lower-after-higher",
                           f"{resource}: token {best[1]} (attempt {best[2][0]} copy "
                           f"{best[2][1]}) was acknowledged, then a snapshot at "
                           f"t={snap['start']:.3f} found token {token} ({key})")
    for resource, entries in acked.items():
        highest = max(token for _, token, _ in entries)
        final_snap = next((s for s in final if s["resource"] == resource), None)
        if final_snap is None or final_snap["body"] is None or final_snap["token"] < highest:
            report.violate("acked-not-applied",
                           f"{resource}: token {highest} was acknowledged, the file ends with "
                           f"{final_snap['token'] if final_snap else 'nothing'}")
    report.figures["distinct writes seen applied (snapshots)"] = len(seen)
    report.figures["snapshots"] = len(snapshots)
