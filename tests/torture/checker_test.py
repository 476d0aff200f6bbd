#!/usr/bin/env python3
"""The checker on made-up histories: each kind of violation is reported, a clean history is not."""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import checker  # noqa: E402
from workers import Attempt  # noqa: E402


def attempt(name, resource, token):
    return Attempt(name, resource, token, client=0, seq=0, zombie=False, token_text=str(token))


def entry(index, name, resource, token, copy=0):
    return {"index": index, "time": index, "resource": resource, "token": token, "client": 0,
            "seq": 0, "attempt": name, "copy": copy}


def answer(status, when, problem=""):
    return (status, when, problem, "g1")


def snapshot(start, resource, token, name, copy=0):
    return {"start": start, "resource": resource, "token": token, "stored_token": token,
            "body": {"attempt": name, "copy": copy, "token": token}}


class LogCheckTest(unittest.TestCase):
    def kinds(self, attempts, answers, log):
        report = checker.Report("http")
        checker.check_log(report, attempts, answers, log)
        return sorted(kind for kind, _ in report.violations)

    def setUp(self):
        self.attempts = [attempt("a", "r", 1), attempt("b", "r", 2), attempt("c", "r", 3)]

    def test_in_order_history_is_clean(self):
        answers = {("a", 0): answer(200, 1), ("b", 0): answer(200, 2), ("c", 0): answer(409, 3)}
        log = [entry(0, "a", "r", 1), entry(1, "b", "r", 2)]
        self.assertEqual(self.kinds(self.attempts, answers, log), [])

    def test_lower_after_higher(self):
        answers = {("a", 0): answer(200, 3), ("b", 0): answer(200, 2)}
        log = [entry(0, "b", "r", 2), entry(1, "a", "r", 1)]
        self.assertEqual(self.kinds(self.attempts, answers, log), ["lower-after-higher"])

    def test_acknowledged_but_never_applied(self):
        answers = {("a", 0): answer(204, 1), ("b", 1): answer(200, 2)}
        log = [entry(0, "a", "r", 1)]
        self.assertEqual(self.kinds(self.attempts, answers, log), ["acked-not-applied"])

    def test_refused_but_applied(self):
        answers = {("a", 0): answer(409, 1, "stale-token"), ("b", 0): answer(200, 2)}
        log = [entry(0, "a", "r", 1), entry(1, "b", "r", 2)]
        self.assertEqual(self.kinds(self.attempts, answers, log), ["refused-applied"])

    def test_applied_with_another_token_than_sent(self):
        answers = {("a", 0): answer(200, 1)}
        log = [entry(0, "a", "r", 7)]
        self.assertEqual(self.kinds(self.attempts, answers, log), ["token-mismatch"])


class SnapshotCheckTest(unittest.TestCase):
    def kinds(self, answers, snapshots, final):
        attempts = [attempt("a", "r", 1), attempt("b", "r", 2)]
        report = checker.Report("filesystem")
        checker.check_files(report, attempts, answers, snapshots, final)
        return sorted(kind for kind, _ in report.violations)

    def test_in_order_history_is_clean(self):
        answers = {("a", 0): answer(201, 1.0), ("b", 0): answer(204, 2.0)}
        snaps = [snapshot(1.5, "r", 1, "a"), snapshot(2.5, "r", 2, "b")]
        self.assertEqual(self.kinds(answers, snaps, [snapshot(3, "r", 2, "b")]), [])

    def test_a_snapshot_going_backwards(self):
        answers = {("a", 0): answer(201, 5.0), ("b", 0): answer(204, 5.0)}
        snaps = [snapshot(1.0, "r", 2, "b"), snapshot(2.0, "r", 1, "a")]
        self.assertEqual(self.kinds(answers, snaps, [snapshot(6, "r", 2, "b")]),
                         ["lower-after-higher"])

    def test_an_older_token_found_after_a_newer_was_acknowledged(self):
        answers = {("a", 0): answer(201, 1.0), ("b", 0): answer(204, 2.0)}
        snaps = [snapshot(2.5, "r", 1, "a")]
        self.assertEqual(self.kinds(answers, snaps, [snapshot(3, "r", 2, "b")]),
                         ["lower-after-higher"])

    def test_the_file_ends_below_an_acknowledged_token(self):
        answers = {("a", 0): answer(201, 1.0), ("b", 0): answer(204, 2.0)}
        self.assertEqual(self.kinds(answers, [], [snapshot(0.5, "r", 1, "a")]),
                         ["acked-not-applied"])

    def test_a_refused_copy_in_the_file(self):
        answers = {("a", 1): answer(409, 1.0, "stale-token"), ("b", 0): answer(204, 2.0)}
        snaps = [snapshot(0.5, "r", 1, "a", copy=1)]
        self.assertEqual(self.kinds(answers, snaps, [snapshot(3, "r", 2, "b")]),
                         ["refused-applied"])

    def test_content_and_stored_token_disagree(self):
        answers = {("b", 0): answer(204, 2.0)}
        bad = snapshot(3, "r", 2, "b")
        bad["stored_token"] = 1
        self.assertEqual(self.kinds(answers, [bad], [snapshot(4, "r", 2, "b")]),
                         ["token-mismatch"])


if __name__ == "__main__":
    unittest.main()
