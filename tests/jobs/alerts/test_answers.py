"""What Slack's answer to a post decides (jobs/alerts/answers.py, pure)."""

from __future__ import annotations

import pytest

from jobs.alerts.answers import Outcome, answer
from jobs.alerts.message_records import MessageRecord

AT = "2026-11-29T12:00:00.000Z"


def record(count: int = 2) -> MessageRecord:
    alerts = [{"key": f"e{n}|#neg", "event_id": f"e{n}"} for n in range(count)]
    return MessageRecord("g", "m0", "#neg", 0, alerts, status="attempted", attempts=1)


def test_a_message_sent_or_found_is_done_and_counted_as_posted_or_found():
    sent = answer(record(), Outcome("sent", ref="1.5"), now=10.0, at=AT, retry_s=30)
    assert sent.done and (sent.record.status, sent.record.sent_at, sent.record.ref) == ("sent", AT, "1.5")
    assert (sent.report.messages, sent.report.posted, sent.report.found_already_posted) == (1, 2, 0)
    found = answer(record(), Outcome("found", ref="1.5"), now=10.0, at=AT, retry_s=30)
    assert found.done and (found.report.posted, found.report.found_already_posted) == (0, 2)


def test_a_429_holds_the_channel_for_retry_after_and_the_message_needs_no_look_up():
    decided = answer(record(), Outcome("rate-limited", retry_after_s=7, error="ratelimited"), 10.0, AT, 30)
    assert not decided.done and decided.not_posted and decided.hold_until == 17.0 and decided.retry_at is None
    assert decided.record.status == "attempted" and decided.report.rate_limited == 1


@pytest.mark.parametrize(
    "kind, not_posted, failed, deferred",
    [("unknown", False, 1, 0), ("refused", True, 1, 0), ("unread-history", False, 0, 1)],
)
def test_a_failure_waits_retry_s_for_the_message_and_its_channel(kind, not_posted, failed, deferred):
    decided = answer(record(), Outcome(kind, error="boom"), now=10.0, at=AT, retry_s=30)
    assert (decided.retry_at, decided.hold_until, decided.not_posted) == (40.0, 40.0, not_posted)
    assert (decided.report.failed, decided.report.deferred, decided.report.errors) == (failed, deferred, ["boom"])
    assert decided.record.last_error == "boom" and not decided.done and not decided.regroup


def test_a_message_slack_refuses_as_a_message_is_regrouped_and_the_record_given_is_unchanged():
    given = record()
    decided = answer(given, Outcome("refused", error="invalid_blocks", payload=True), 10.0, AT, 30)
    assert decided.regroup and decided.report.errors == ["#neg: invalid_blocks"] and decided.report.failed == 1
    assert decided.record.last_error == "invalid_blocks" and given.last_error is None


def test_a_lease_that_ran_out_defers_the_post():
    decided = answer(record(), Outcome("lease"), 10.0, AT, 30)
    assert decided.not_posted and decided.report.deferred == 1 and decided.retry_at is None
