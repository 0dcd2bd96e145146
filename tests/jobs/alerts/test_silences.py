"""Silences (jobs/alerts/silences.py) on their own: what they match, until when, the errors."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from feedback.core.alert_messages import Alert, render
from jobs.alerts.silences import Silence, SilenceError, active_for, end_alert, parse_duration

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=timezone.utc)
CHANNELS = ("#negative-feedback", "#positive-feedback")


def an_alert(text: str = "The sync broke", source: str = "twitter", channel: str = "#negative-feedback") -> Alert:
    return Alert(key=f"e1|{channel}", event_id="e1", channel=channel, source=source, author="a", text=text, score=0.1)


def silence(**match) -> Silence:
    return Silence.new(NOW, timedelta(hours=2), "mara", "release 5.0", CHANNELS, **match)


@pytest.mark.parametrize("text, seconds", [("90m", 5400), ("2h", 7200), ("1.5d", 129600), (" 30 s ", 30)])
def test_a_duration_is_a_number_and_a_unit(text, seconds):
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize(
    "text, message",
    [
        (None, "a silence needs an end: give --for"),
        ("", "a silence needs an end"),
        ("2 hours", "is not a duration"),
        ("0h", "is not a duration"),
        ("8d", "at most 7 days"),
    ],
)
def test_a_silence_without_a_usable_end_is_refused_with_what_to_give(text, message):
    with pytest.raises(SilenceError, match=message):
        parse_duration(text)


def test_a_silence_with_nothing_to_match_or_an_unknown_channel_or_no_reason_is_refused():
    with pytest.raises(SilenceError, match="needs something to match: --channel, --source and/or --text"):
        silence(text="  ")
    with pytest.raises(SilenceError, match="unknown channel '#random': alerts go to #negative-feedback and #positive"):
        silence(channel="#random")
    with pytest.raises(SilenceError, match="needs a reason"):
        Silence.new(NOW, timedelta(hours=1), "mara", " ", CHANNELS, source="twitter")


def test_a_silence_matches_every_given_part_and_text_in_any_case():
    assert silence(source="twitter").matches(an_alert())
    assert not silence(source="slack").matches(an_alert())
    assert silence(text="SYNC").matches(an_alert("the sync broke"))
    assert not silence(text="sync", source="slack").matches(an_alert("the sync broke"))
    assert silence(channel="#positive-feedback").matches(an_alert(channel="#positive-feedback"))
    assert not silence(channel="#positive-feedback").matches(an_alert())


def test_a_silence_is_active_from_when_it_was_made_to_its_end_or_its_early_end():
    made = silence(source="twitter")
    assert made.active(NOW) and made.active(NOW + timedelta(minutes=119))
    assert not made.active(NOW + timedelta(hours=2)) and not made.active(NOW - timedelta(seconds=1))
    early = made.ended_early(NOW + timedelta(minutes=30))
    assert not early.active(NOW + timedelta(minutes=30)) and early.end == NOW + timedelta(minutes=30)
    assert active_for({made.silence_id: early}, an_alert(), NOW + timedelta(hours=1)) is None
    assert active_for({made.silence_id: made}, an_alert(), NOW + timedelta(hours=1)) == made


def test_a_silence_record_read_back_is_the_same_silence():
    made = silence(source="twitter", text="sync")
    assert Silence.decode(made.encode()) == made


def test_the_end_line_says_what_was_silenced_and_how_many_were_held_back_and_is_never_silenced_itself():
    made = silence(source="twitter", text="<!channel>")
    line = end_alert(made, 17, "#negative-feedback")
    assert line.event_id == f"silence|{made.silence_id}|ended"
    text = render("m1", "#negative-feedback", [line], 10)["text"]
    assert "held back 17 alerts, not posted" in text and "<!channel>" not in text
    assert f"`feedback alerts show {made.silence_id}`" in text
    assert not made.matches(line)
    assert Alert.of_row(line.row()) == line


@pytest.mark.parametrize("option", ["by", "reason", "text", "source"])
def test_a_field_longer_than_a_line_a_person_reads_is_refused_with_the_option_to_shorten(option):
    from feedback.core.schema import MAX_SILENCE_FIELD_CHARS

    fields = {"by": "mara", "reason": "release 5.0", "text": "sync", "source": None}
    fields[option] = "x" * (MAX_SILENCE_FIELD_CHARS + 1)
    with pytest.raises(SilenceError) as raised:
        Silence.new(
            NOW,
            timedelta(hours=2),
            fields["by"],
            fields["reason"],
            CHANNELS,
            text=fields["text"],
            source=fields["source"],
        )
    assert str(raised.value).startswith(f"--{option} has {MAX_SILENCE_FIELD_CHARS + 1} characters, more than")


def test_the_end_line_of_a_silence_with_huge_fields_made_elsewhere_stays_a_short_message():
    """Issue 56: --by and --reason of 120,000 characters made a 1.2 MB end line (each `<` escaped
    to `&lt;`), larger than a Kafka record, and the dispatcher stopped on it. A record written
    around Silence.new's bound still ends in one short line."""
    import json

    huge = Silence(
        silence_id="s1",
        created_at="2026-11-28T12:00:00.000Z",
        ends_at="2026-11-28T14:00:00.000Z",
        by="<" * 120_000,
        reason="<" * 120_000,
        source="t" * 120_000,
        text="<" * 120_000,
    )
    line = end_alert(huge, 3, CHANNELS[0])
    message = render("m1", CHANNELS[0], [line], 1)
    assert len(json.dumps(message)) < 10_000 and len(line.author) <= 300
    assert "held back 3 alerts" in line.text and "…" in line.text
