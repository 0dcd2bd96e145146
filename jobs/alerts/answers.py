"""What Slack's answer to a post decides (pure): the message's record as it stands after the
answer, when the message and its channel may be tried again, and what the round counts.

The dispatcher's loop (jobs/alerts/dispatcher.py) turns each post's result into an `Outcome`;
`answer` takes it with the record and the time and returns an `Answer`, which the decider
(jobs/alerts/alert_decisions.py) applies: it writes the record and keeps the message for
another try, or drops it as sent; or, for a message Slack refused as a message, regroups its
alerts and writes the record as refused once the new messages are on record.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Optional

from jobs.alerts.message_records import MessageRecord


@dataclass
class RoundReport:
    polled: int = 0
    repeats: int = 0  # alerts of an event that already alerted
    posted: int = 0  # alerts in messages posted
    messages: int = 0
    found_already_posted: int = 0  # alerts in messages found in the channel's history
    rate_limited: int = 0  # 429s
    failed: int = 0  # posts refused or with an unknown outcome
    deferred: int = 0  # posts not made: the lease ran out, or the history could not be read
    regrouped: int = 0  # alerts of messages Slack refused, put in new messages
    silenced: int = 0  # alerts held back by a silence: recorded, not posted
    errors: list[str] = field(default_factory=list)

    def add(self, other: "RoundReport") -> None:
        for item in fields(self):
            if item.name == "errors":
                self.errors += other.errors
            else:
                setattr(self, item.name, getattr(self, item.name) + getattr(other, item.name))


@dataclass(frozen=True)
class Outcome:
    kind: str  # sent | found | rate-limited | refused | unknown | unread-history | lease
    ref: Optional[str] = None
    retry_after_s: float = 0.0
    error: Optional[str] = None
    payload: bool = False  # a refusal of the message itself
    answered_at: Optional[float] = None  # the monotonic time Slack answered a post, if one was made


@dataclass(frozen=True)
class Answer:
    record: MessageRecord  # the message's record after the answer
    report: RoundReport
    done: bool = False  # sent, or found in its channel: nothing more to post
    not_posted: bool = False  # known not to be in Slack: the next try needs no look-up
    retry_at: Optional[float] = None  # the message is not tried again before then (monotonic)
    hold_until: Optional[float] = None  # nothing goes to its channel before then (monotonic)
    regroup: bool = False  # Slack refused the message itself: its alerts go out in new messages


def answer(record: MessageRecord, outcome: Outcome, now: float, at: str, retry_s: float) -> Answer:
    """What `outcome` decides for the message of `record`, answered at `now` (monotonic) and `at`
    (the record's ISO time); a failure is tried again `retry_s` later."""
    if outcome.kind in ("sent", "found"):
        sent = replace(record, status="sent", sent_at=at, ref=outcome.ref, last_error=None)
        if outcome.kind == "sent":
            return Answer(sent, RoundReport(messages=1, posted=record.count), done=True)
        return Answer(sent, RoundReport(messages=1, found_already_posted=record.count), done=True)
    failed = replace(record, last_error=outcome.error)
    if outcome.kind == "rate-limited":
        return Answer(failed, RoundReport(rate_limited=1), not_posted=True, hold_until=now + outcome.retry_after_s)
    if outcome.kind == "lease":
        return Answer(failed, RoundReport(deferred=1), not_posted=True)
    if outcome.kind == "refused" and outcome.payload:
        return Answer(failed, RoundReport(failed=1, errors=[f"{record.channel}: {outcome.error}"]), regroup=True)
    # refused by the channel (not posted), an unknown outcome, or a history that could not be read
    unread = outcome.kind == "unread-history"
    report = RoundReport(failed=int(not unread), deferred=int(unread), errors=[outcome.error or outcome.kind])
    later = now + retry_s
    return Answer(failed, report, not_posted=outcome.kind == "refused", retry_at=later, hold_until=later)
