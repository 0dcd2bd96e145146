"""The dispatcher's record: one record per message, compacted once sent, old records read (pure)."""

from __future__ import annotations

import json

from jobs.alerts.message_records import COMPACT_FIELDS, MessageRecord, PartitionMarks, decode, posted_alerts


def whole_alert(n: int) -> dict:
    return {
        "key": f"e{n}|#negative-feedback",
        "event_id": f"e{n}",
        "channel": "#negative-feedback",
        "source": "twitter",
        "author": "mara_k",
        "text": "Terrible update " * 20,
        "score": 0.1,
        "url": None,
        "source_topic": "twitter-feedback",
        "partition": 0,
        "offset": n,
        "kafka_timestamp": "2026-11-25T10:00:00.000Z",
        "scored_at": "2026-11-25T10:00:00.300Z",
    }


def test_a_record_keeps_of_each_alert_only_what_repeats_and_figures_need():
    record = MessageRecord("g", "m1", "#negative-feedback", 2, [whole_alert(n) for n in range(3)], offsets=[7, 8, 9])
    written = decode(record.encode())
    assert all(set(alert) == set(COMPACT_FIELDS) for alert in written.alerts)
    assert written.alerts[1] == {name: whole_alert(1)[name] for name in COMPACT_FIELDS}
    assert (written.message_id, written.offsets, written.partition) == ("m1", [7, 8, 9], 2)
    assert len(record.encode()) < 200 * record.count + 400
    assert record.log_key == b"g|m1"
    shift = {**whole_alert(3), "kind": "shift", "detail": {"examples": ["long"]}}
    assert decode(MessageRecord("g", "m2", "#n", 2, [shift]).encode()).alerts[0]["kind"] == "shift"


def test_a_record_written_before_digests_reads_as_a_message_of_one_alert():
    legacy = {
        "group": "g",
        "key": "e1|#negative-feedback",
        "event_id": "e1",
        "channel": "#negative-feedback",
        "partition": 3,
        "alert": whole_alert(1),
        "status": "attempted",
        "attempts": 1,
        "first_attempt_at": "2026-11-24T10:00:00.000Z",
        "sent_at": None,
        "ref": None,
        "last_error": "ReadTimeout",
    }
    record = decode(json.dumps(legacy).encode())
    assert (record.message_id, record.partition, record.count, record.status) == (
        "e1|#negative-feedback",
        3,
        1,
        "attempted",
    )
    assert decode(json.dumps({**legacy, "status": "pending", "attempts": 0}).encode()).status == "decided"


def test_each_alert_of_a_sent_message_is_timed_from_its_own_send():
    alerts = [whole_alert(1), {**whole_alert(2), "kafka_timestamp": "2026-11-25T10:00:00.500Z"}]
    sent = MessageRecord("g", "m1", "#n", 0, alerts, status="sent", sent_at="2026-11-25T10:00:01.000Z")
    waiting = MessageRecord("g", "m2", "#n", 0, [whole_alert(3)], status="attempted")
    assert [(m.message_id, a["event_id"], ms) for m, a, ms in posted_alerts([sent, waiting])] == [
        ("m1", "e1", 1000.0),
        ("m1", "e2", 500.0),
    ]


def test_a_partitions_marks_are_a_record_of_their_own_that_reads_back_as_marks():
    marks = PartitionMarks("g", 3, {"twitter-feedback:0": 41, "slack-feedback:2": 7})
    assert decode(marks.encode()) == marks and marks.log_key == b"g|marks|3"
