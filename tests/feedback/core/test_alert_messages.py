"""What an alert or a digest says in Slack, against Block Kit's documented limits (pure)."""

from __future__ import annotations

import json

import pytest

from feedback.core.alert_messages import (
    MAX_BLOCKS,
    MAX_HEADER_TEXT,
    MAX_SECTION_TEXT,
    MAX_SHOWN,
    METADATA_EVENT_TYPE,
    Alert,
    escape,
    message_ids_in,
    most_extreme,
    render,
    show_command,
)
from feedback.core.schema import ALERT_FIELDS, names
from jobs.shift_alerts.shift_rule import Decision, shift_record


def an_alert(n: int, score: float = 0.1, text: str = "The sync broke again", **more) -> Alert:
    return Alert(
        key=f"e{n}|#negative-feedback",
        event_id=f"e{n}",
        channel="#negative-feedback",
        source="twitter",
        author=f"user{n}",
        text=text,
        score=score,
        url=f"https://x.com/i/status/{n}",
        kafka_timestamp=f"2026-11-25T10:00:{n % 60:02d}.000Z",
        **more,
    )


def test_feedback_text_cannot_mention_the_channel_or_anyone():
    arguments = render("m1", "#negative-feedback", [an_alert(1, text="<!channel> & <@U123> wake up >:(")], shown=10)
    assert "<!channel>" not in arguments["text"] and "<@U123>" not in arguments["text"]
    assert "&lt;!channel&gt; &amp; &lt;@U123&gt; wake up &gt;:(" in arguments["text"]


def test_escape_turns_only_the_three_control_characters_into_entities():
    assert escape("a & b < c > d 'e' \"f\"") == "a &amp; b &lt; c &gt; d 'e' \"f\""


def test_one_alert_is_a_message_of_its_own_carrying_its_message_id_and_count_not_its_key():
    arguments = render("m1", "#negative-feedback", [an_alert(1)], shown=10)
    assert "blocks" not in arguments
    assert arguments["text"].startswith("*0.10* from twitter by user1 <https://x.com/i/status/1|open>\n> ")
    assert arguments["metadata"] == {
        "event_type": METADATA_EVENT_TYPE,
        "event_payload": {"message_id": "m1", "count": 1},
    }
    assert "e1" not in json.dumps(arguments["metadata"])


def test_a_digest_has_a_header_a_summary_the_most_extreme_alerts_and_says_where_the_rest_are():
    alerts = [an_alert(n, score=0.25 - n * 0.001) for n in range(120)]
    arguments = render("m7", "#negative-feedback", alerts, shown=10)
    blocks = arguments["blocks"]
    assert blocks[0] == {"type": "header", "text": {"type": "plain_text", "text": "120 alerts in #negative-feedback"}}
    summary = blocks[1]["elements"][0]["text"]
    assert summary == "120 alerts in #negative-feedback, sent 2026-11-25 10:00:00–10:00:59 UTC, scores 0.13–0.25"
    sections = [b for b in blocks if b["type"] == "section"]
    assert [s["text"]["text"].split(" ")[0] for s in sections] == [
        f"*{0.25 - n * 0.001:.2f}*" for n in range(119, 109, -1)
    ]
    assert blocks[-1]["elements"][0]["text"] == f"… and 110 more: `{show_command('m7')}`"
    assert arguments["text"] == summary  # the notification's fallback
    assert arguments["metadata"]["event_payload"] == {"message_id": "m7", "count": 120}


@pytest.mark.parametrize("shown", [1, 10, MAX_SHOWN, 200])
def test_a_digest_stays_within_block_kit_limits_however_many_alerts_and_however_long(shown):
    alerts = [an_alert(n, text="word " * 2_000) for n in range(500)]
    blocks = render("m1", "#negative-feedback", alerts, shown=shown)["blocks"]
    assert len(blocks) <= MAX_BLOCKS
    assert len(blocks[0]["text"]["text"]) <= MAX_HEADER_TEXT
    assert all(len(b["text"]["text"]) <= MAX_SECTION_TEXT for b in blocks if b["type"] == "section")
    assert all(len(b["elements"]) <= 10 for b in blocks if b["type"] == "context")
    block_text = sum(len(b["text"]["text"]) for b in blocks if b["type"] in ("section", "header"))
    assert block_text + sum(len(e["text"]) for b in blocks if b["type"] == "context" for e in b["elements"]) < 12_000


def test_a_digest_that_shows_every_alert_says_so():
    blocks = render("m1", "#negative-feedback", [an_alert(1), an_alert(2)], shown=10)["blocks"]
    assert blocks[-1]["elements"][0]["text"] == "All 2 shown."


def test_a_plain_digest_is_text_alone():
    arguments = render("m1", "#negative-feedback", [an_alert(n) for n in range(30)], shown=5, plain=True)
    assert "blocks" not in arguments
    assert arguments["text"].count("\n> ") == 5 and arguments["text"].endswith("`feedback alerts show m1`")


def test_the_most_extreme_are_furthest_from_neutral_on_either_side_earliest_first():
    alerts = [an_alert(0, 0.2), an_alert(1, 0.05), an_alert(2, 0.95), an_alert(3, 0.05), an_alert(4, 0.99)]
    assert [a.event_id for a in most_extreme(alerts, 3)] == ["e4", "e1", "e3"]


def test_message_ids_are_read_from_metadata_and_old_single_alert_messages_by_their_key():
    messages = [
        {"metadata": {"event_type": METADATA_EVENT_TYPE, "event_payload": {"message_id": "m1", "count": 3}}},
        {"metadata": {"event_type": "feedback_alert", "event_payload": {"key": "e9|#negative-feedback"}}},
        {"metadata": {"event_type": "deploy", "event_payload": {"message_id": "other"}}},
        {"text": "a person's message"},
    ]
    assert message_ids_in(messages) == {"m1", "e9|#negative-feedback"}


def test_an_alert_has_the_fields_of_the_alert_record_in_their_order_then_its_kind():
    assert tuple(Alert.__dataclass_fields__) == (*names(ALERT_FIELDS), "kind", "detail")
    assert "kind" not in an_alert(1).row()  # an event's alert is recorded as it always was


def a_shift(phase: str = "alert", examples=(("0.05", "e1", "Everything is <!channel> broken"),), late=0) -> dict:
    decision = Decision(
        source="twitter",
        phase=phase,
        incident_start=29_919_512,
        minute=29_919_512 + (7 if phase == "recovered" else 0),
        window_min=10,
        baseline_min=1440,
        negatives=44,
        total=100,
        share=0.44 if phase == "alert" else 0.2,
        baseline=0.2,
        examples=tuple((float(s), e, t) for s, e, t in examples),
        newest_ms=1_795_170_000_000,
        late=late,
    )
    return shift_record(decision, "#negative-feedback")


def test_a_shift_record_is_read_as_a_shift_alert_and_kept_whole_in_the_dispatchers_row():
    alert = Alert.of_record(a_shift())
    assert alert.is_shift and alert.detail["examples"][0]["event_id"] == "e1"
    assert Alert.of_row(alert.row()) == alert  # as the dispatcher's record keeps it
    assert Alert.of_row(a_shift()) == alert  # as whole_alerts reads it back from feedback-alerts
    broken = a_shift()
    del broken["baseline"]
    with pytest.raises(KeyError):
        Alert.of_record(broken)


def test_a_shift_alert_says_source_share_baseline_count_examples_and_where_the_rest_are():
    examples = [(f"0.0{n}", f"e{n}", f"bad {n}") for n in range(3)]
    message = render("m1", "#negative-feedback", [Alert.of_record(a_shift(examples=examples))], 10)
    lines = message["text"].split("\n")
    assert lines[0] == (
        "*Negative feedback from twitter is up: 44%* of the last 10 min, against 20% over the 24 h before "
        "(44 negative of 100 events, 10:23–10:33 UTC)."
    )
    assert lines[1:4] == ["> bad 0", "> bad 1", "> bad 2"]
    assert "feedback_scored where source = 'twitter'" in lines[4]
    assert message["metadata"]["event_payload"] == {"message_id": "m1", "count": 1} and "blocks" not in message


def test_a_shift_alerts_examples_cannot_mention_the_channel():
    text = render("m1", "#negative-feedback", [Alert.of_record(a_shift())], 10)["text"]
    assert "<!channel>" not in text and "&lt;!channel&gt;" in text


def test_a_shift_whose_minutes_had_late_records_says_how_many_were_not_counted():
    for phase in ("alert", "recovered"):
        text = render("m1", "#negative-feedback", [Alert.of_record(a_shift(phase, late=48))], 10)["text"]
        assert "(44 negative of 100 events; 48 late, not counted" in text


def test_a_recovery_says_the_share_is_back_and_when_the_incident_began():
    text = render("m2", "#negative-feedback", [Alert.of_record(a_shift("recovered"))], 10)["text"]
    assert text.startswith("*Recovered: negative feedback from twitter* is back to 20% of the last 10 min")
    assert text.endswith("The incident began at 10:32 UTC.")


def test_an_alert_record_read_and_written_again_is_the_same_record():
    record = {
        **an_alert(3).row(),
        "source_topic": "twitter-feedback",
        "partition": 2,
        "offset": 41,
        "scored_at": "2026-11-25T10:00:03.500Z",
    }
    assert Alert.of_record(record).row() == record
