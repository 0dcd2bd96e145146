import copy
from datetime import datetime, timedelta, timezone

import pytest

from feedback.core.schema import (
    FEEDBACK_FIELDS,
    PRICE_FIELDS,
    encode,
    feedback_envelope,
    feedback_key,
    feedback_struct,
    parse_record,
    price_envelope,
    price_struct,
    utc_iso,
    validate_feedback,
    validate_price,
)

GOOD = feedback_envelope(
    id="1991234567890123456",
    source="twitter",
    author="@mara_builds",
    text="Love the new offline mode!",
    created_at="2026-11-18T09:14:03.000Z",
    ingested_at="2026-11-18T09:14:05.120Z",
    lang="en",
    url="https://x.com/mara_builds/status/1991234567890123456",
    channel="search:driftwood",
)


def changed(**fields):
    event = copy.deepcopy(GOOD)
    for name, value in fields.items():
        if value is ...:
            del event[name]
        else:
            event[name] = value
    return event


def test_a_good_event_has_no_problems():
    assert validate_feedback(GOOD) == []
    assert validate_feedback(changed(lang=None, url=..., channel=...)) == []


@pytest.mark.parametrize(
    ("event", "problem"),
    [
        (changed(author=...), "author is missing"),
        (changed(text=""), "text is empty"),
        (changed(text="   \n"), "text is empty"),
        (changed(text=42), "text must be a string"),
        (changed(id=""), "id is empty"),
        # What Python's json module reads from an escaped lone surrogate: not Unicode text.
        (changed(text="half an emoji \ud83d"), "text is not Unicode text: a lone surrogate at character 14"),
        (changed(author="\udc00mara"), "author is not Unicode text: a lone surrogate at character 0"),
        (changed(created_at="2026-13-45T99:00:00Z"), "created_at must be an ISO-8601 UTC time"),
        (changed(created_at="2026-11-18T09:14:03"), "created_at must be an ISO-8601 UTC time"),
        (changed(created_at="2026-11-18T09:14:03+02:00"), "created_at must be an ISO-8601 UTC time"),
        (changed(schema_version=2), "schema_version 2 is not supported"),
        (changed(schema_version=True), "schema_version must be an integer"),
        (["not", "an", "object"], "not an object"),
        ("text", "not an object"),
    ],
)
def test_bad_events_are_named(event, problem):
    problems = validate_feedback(event)
    assert any(problem in p for p in problems), problems


def test_price_quotes():
    quote = price_envelope(currency="EUR", rate=81234.5, timestamp="2026-11-18T09:00:00Z", source="coingecko")
    assert validate_price(quote) == []
    assert validate_price({**quote, "rate": -1}) == ["rate must be a positive finite number, got -1"]
    assert validate_price({**quote, "rate": "81234"}) == ["rate must be a number, not str"]
    assert validate_price({**quote, "rate": float("nan")})


def test_key_is_the_event_id_and_value_is_compact_utf8_json():
    assert feedback_key(GOOD) == b"1991234567890123456"
    assert encode({"text": "très bien 👍"}) == '{"text":"très bien 👍"}'.encode("utf-8")


def test_spark_structs_come_from_the_same_field_declarations():
    assert [f.name for f in feedback_struct().fields] == [f.name for f in FEEDBACK_FIELDS]
    assert [f.name for f in price_struct().fields] == [f.name for f in PRICE_FIELDS]
    kinds = {f.name: f.dataType.simpleString() for f in feedback_struct().fields}
    assert kinds["schema_version"] == "int" and kinds["text"] == "string"
    assert dict((f.name, f.dataType.simpleString()) for f in price_struct().fields)["rate"] == "double"


def test_the_feedback_envelope_builder_writes_every_declared_field_in_order_on_the_wire():
    envelope = feedback_envelope(
        id="1",
        source="slack",
        author="U1",
        text="hi",
        created_at="2026-11-18T09:14:03.000Z",
        ingested_at="2026-11-18T09:14:05.120Z",
        channel="#product-feedback",
    )
    assert list(envelope) == [f.name for f in FEEDBACK_FIELDS]
    assert encode(envelope) == (
        b'{"schema_version":1,"id":"1","source":"slack","author":"U1","text":"hi","created_at":"2026-11-18T09:14:03.000Z",'
        b'"lang":null,"url":null,"channel":"#product-feedback","ingested_at":"2026-11-18T09:14:05.120Z"}'
    )


def test_the_price_envelope_builder_writes_every_declared_field_in_order_on_the_wire():
    quote = price_envelope(currency="GBP", rate=61234.5, timestamp="2026-11-18T09:00:00Z", source="random-walk")
    assert list(quote) == [f.name for f in PRICE_FIELDS]
    assert (
        encode(quote)
        == b'{"schema_version":1,"currency":"GBP","rate":61234.5,"timestamp":"2026-11-18T09:00:00Z","source":"random-walk"}'
    )


def test_utc_times_are_written_with_a_z_in_milliseconds_or_seconds():
    moment = datetime(2026, 11, 2, 8, 14, 30, 123456, tzinfo=timezone.utc)
    assert utc_iso(moment) == "2026-11-02T08:14:30.123Z"
    assert utc_iso(moment, timespec="seconds") == "2026-11-02T08:14:30Z"
    assert utc_iso(moment.replace(microsecond=0)) == "2026-11-02T08:14:30.000Z"
    assert (
        utc_iso(moment.astimezone(timezone(timedelta(hours=2)))) == "2026-11-02T08:14:30.123Z"
    )  # other offsets: to UTC


def test_parse_record_gives_the_event_or_the_reason():
    event, reason = parse_record(encode(GOOD))
    assert reason is None and event == GOOD
    assert parse_record(b"{}")[0] is None and "id is missing" in parse_record(b"{}")[1]
    assert parse_record(None) == (None, "the Kafka record has no value")
