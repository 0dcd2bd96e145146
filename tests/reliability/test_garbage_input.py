"""Garbage in: every payload is scored or dead-lettered with a reason; nothing raises.

Generated payloads: random bytes, invalid UTF-8, huge values, deeply nested JSON, wrong
types, impossible dates, missing or null fields, escaped lone surrogates, and near-valid
envelopes with one field broken. The pure validator and the scorer's Python pass see thousands; a bounded sample goes
through the scorer's Spark pass (as reprocessing reads it back), where each record must land on exactly one side.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from feedback.core.schema import MAX_FIELD_CHARS, MAX_TEXT_CHARS, feedback_envelope, parse_record

VALID = feedback_envelope(
    id="g-1",
    source="twitter",
    author="a",
    text="fine",
    created_at="2026-11-21T09:30:00Z",
    ingested_at="2026-11-21T09:30:01Z",
    lang="en",
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)
broken_envelopes = st.builds(
    lambda field, value: {**VALID, field: value},
    st.sampled_from(sorted(VALID)),
    json_values
    | st.sampled_from(["", "   ", "2026-02-30T10:00:00Z", "2026-11-21 09:30", "2026-11-21T09:30:00+02:00"])
    | st.integers(100_000, 300_000).map(lambda n: "x" * n),  # huge values
)
# Valid JSON that is not Unicode text: json.dumps escapes a lone surrogate (`\\ud83d`).
lone_surrogates = st.builds(
    lambda field, cut: {**VALID, field: f"{VALID[field]}{cut}"},
    st.sampled_from(["id", "author", "text"]),
    st.text(st.characters(categories=["Cs"]), min_size=1, max_size=3),
)
missing_field = st.sampled_from(sorted(VALID)).map(lambda field: {k: v for k, v in VALID.items() if k != field})
payloads = st.one_of(
    st.binary(max_size=300),
    st.binary(min_size=1, max_size=50).map(lambda b: b"\xff" + b),  # never valid UTF-8
    json_values.map(lambda v: json.dumps(v).encode()),
    broken_envelopes.map(lambda e: json.dumps(e).encode()),
    missing_field.map(lambda e: json.dumps(e).encode()),
    lone_surrogates.map(lambda e: json.dumps(e).encode()),
    st.integers(min_value=1, max_value=5000).map(lambda depth: ("[" * depth + "]" * depth).encode()),
    st.integers(min_value=100_000, max_value=2_000_000).map(lambda depth: ('{"a":' * 10 + "[" * depth).encode()),
)


@given(payloads)
@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None)
def test_every_payload_is_valid_or_has_a_reason(payload):
    reason = parse_record(payload)[1]
    assert reason is None or (isinstance(reason, str) and reason)
    if reason is None:  # only a real envelope passes
        event = json.loads(payload)
        assert isinstance(event, dict) and isinstance(event["text"], str) and event["text"].strip()


def source_frame(values: list[bytes]):
    """The scorer's Python pass's input: `values` at offsets 0, 1, ... of twitter-feedback's partition 0."""
    import pandas as pd

    return pd.DataFrame(
        {
            "value": values,
            "topic": ["twitter-feedback"] * len(values),
            "partition": [0] * len(values),
            "offset": list(range(len(values))),
            "timestamp_ms": [1_763_800_000_000] * len(values),
        }
    )


@given(st.lists(payloads, min_size=1, max_size=8))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None)
def test_the_scorer_routes_every_payload_to_exactly_one_side_with_a_reason_when_dead(sample):
    import pyarrow as pa

    from feedback.clients.sentiment import analyzer_for
    from feedback.core.alert_rules import AlertRules
    from jobs.scoring.scoring import route

    out = route(source_frame(sample), analyzer_for("vader"), AlertRules(0.3, 0.9, "#neg", "#pos"))
    pa.Table.from_pandas(out)  # what Spark does with it: every record Arrow can carry
    sides = out[out["topic"] != "feedback-alerts"]
    assert len(sides) == len(sample)
    for row in sides.itertuples():
        value = json.loads(row.value)
        assert (row.topic == "feedback-scored") == (parse_record(sample[value["offset"]])[1] is None)
        if row.topic == "feedback-deadletter":
            assert value["reason"]


@pytest.mark.spark
@given(st.lists(payloads, min_size=60, max_size=60))
@settings(max_examples=3, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None)
def test_a_sample_of_garbage_lands_once_on_one_side_in_spark(spark, sample):
    from feedback.core.settings import load_settings
    from jobs.reprocess import rescore
    from jobs.scoring.scorer import scored_records
    from tests.support.events import kafka_rows

    values = sample + [json.dumps(VALID).encode(), None]
    rescored = rescore(scored_records(kafka_rows(spark, values), load_settings()).localCheckpoint())
    dead = rescored.dead_letters.count()
    valid = rescored.scored
    assert dead + valid.count() == len(values)
    assert valid.where("id is null or text is null or created_at is null or ingested_at is null").count() == 0
    assert rescored.dead_letters.where("reason is null or reason = ''").count() == 0


# One character repeated: the widest each field can be in UTF-8 and in JSON (NUL is written
# \u0000, six bytes; the emoji takes four; a quote two).
WIDE_CHARACTERS = st.sampled_from(["a", "é", "😀", "\x00", '"', "\u2028"])


def _field(name: str, limit: int):
    return st.tuples(WIDE_CHARACTERS, st.integers(limit - 2, limit + 1)).map(lambda c: (name, c[0] * c[1]))


wide_envelopes = st.builds(
    lambda fields: json.dumps({**VALID, **dict(fields)}, ensure_ascii=False).encode(),
    st.lists(
        st.sampled_from(
            [("text", MAX_TEXT_CHARS), *((name, limit) for name, limit in MAX_FIELD_CHARS.items() if name in VALID)]
        ).flatmap(lambda field: _field(*field)),
        min_size=1,
        max_size=4,
    ),
)


class NegativeAnalyzer:
    """Every text 0.1, so every valid event alerts: the records' sizes are the question here,
    not the scores (VADER takes seconds over a text of 100,000 characters)."""

    name, version = "negative", "0"

    def score(self, texts: list[str]) -> list[float]:
        return [0.1] * len(texts)


@given(st.lists(wide_envelopes, min_size=1, max_size=3))
@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None)
def test_every_record_the_scorer_writes_of_fields_at_and_past_their_limits_fits_the_smallest_kafka_record(sample):
    from feedback.core.alert_rules import AlertRules
    from feedback.core.sizing.limits import MAX_RECORD_BYTES
    from feedback.core.sizing.model import KAFKA_RECORD_OVERHEAD_BYTES
    from jobs.scoring.scoring import route

    out = route(source_frame(sample), NegativeAnalyzer(), AlertRules(0.3, 0.9, "#neg", "#pos"))
    assert set(out["topic"]) >= {"feedback-alerts"} or all(parse_record(v)[1] for v in sample)
    room = min(MAX_RECORD_BYTES.values()) - KAFKA_RECORD_OVERHEAD_BYTES
    for row in out.itertuples():
        assert len(row.key.encode()) + len(row.value.encode()) <= room, (row.topic, len(row.value.encode()))
