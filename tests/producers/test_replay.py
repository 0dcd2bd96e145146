import json

import pytest

from feedback.clients.kafka_client import KafkaUnavailable, TopicMissing, end_offsets, read_range
from feedback.core.schema import feedback_envelope, parse_record
from feedback.core.settings import load_settings
from producers.replay import parse_line, read_lines, replay
from tests.support.events import tricky_records
from tests.support.settings import free_port


def event(n: int) -> dict:
    return feedback_envelope(
        id=f"replay-{n}",
        source="twitter",
        author="@t",
        text=f"message {n}",
        created_at="2026-11-18T09:00:00Z",
        ingested_at="2026-11-18T09:00:01Z",
    )


def test_lines_are_keyed_by_id_and_bad_lines_are_kept_unkeyed():
    assert parse_line(1, json.dumps(event(1)).encode() + b"\n").key == b"replay-1"
    assert parse_line(1, json.dumps(event(1)).encode()).valid
    broken = parse_line(2, b'{"id": "x", "text": "cut')
    assert (broken.key, broken.valid, broken.value) == (None, False, b'{"id": "x", "text": "cut')
    assert parse_line(3, b"[1, 2]").key is None


def test_a_line_is_valid_exactly_when_the_scorer_will_score_it_and_keeps_its_id_as_key_when_refused():
    # Python's json module takes a BOM, NaN and an escaped lone surrogate; the scorer does not.
    for name, value in tricky_records("replay"):
        line = parse_line(1, value)
        assert line.valid == (parse_record(value)[1] is None), name
    lines = {name: parse_line(1, value) for name, value in tricky_records("replay")}
    assert [name for name, line in lines.items() if not line.valid] == [
        "a lone surrogate",
        "a BOM",
        "NaN",
        "a time with an offset",
        "a non-string id",
    ]
    assert lines["a time with an offset"].key == b"replay-offset" and lines["a BOM"].key is None


def test_a_line_nested_too_deeply_to_parse_is_an_invalid_line_not_a_traceback():
    deep = b"[" * 100_000 + b"]" * 100_000
    line = parse_line(4, deep)
    assert (line.key, line.valid, line.value) == (None, False, deep)


def test_limit_cycles_the_file(tmp_path):
    path = tmp_path / "two.jsonl"
    path.write_text(json.dumps(event(1)) + "\n\n" + json.dumps(event(2)) + "\n")
    assert [line.key for line in read_lines(path, limit=5)] == [
        b"replay-1",
        b"replay-2",
        b"replay-1",
        b"replay-2",
        b"replay-1",
    ]


@pytest.mark.kafka
def test_produce_n_then_read_back_the_same_n_ids(topics_ready, tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(event(n)) + "\n" for n in range(250)) + "not json at all\n")
    before = end_offsets(topics_ready, "twitter-feedback")
    report = replay(topics_ready, path, "twitter-feedback", rate=None)
    assert (report.sent, report.acknowledged, report.failed, report.invalid) == (251, 251, 0, 1)
    back = read_range(topics_ready, "twitter-feedback", before, end_offsets(topics_ready, "twitter-feedback"))
    assert sorted(r.key for r in back.records if r.key) == sorted(f"replay-{n}".encode() for n in range(250))
    assert sum(1 for r in back.records if r.value == b"not json at all") == 1


@pytest.mark.kafka
@pytest.mark.timeout(60)
def test_a_missing_topic_fails_clearly_within_the_bound(topics_ready, tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(event(1)) + "\n")
    with pytest.raises(TopicMissing, match="feedback topics create"):
        replay(topics_ready, path, "no-such-topic")


@pytest.mark.timeout(60)
def test_a_broker_that_is_down_fails_clearly_within_seconds(tmp_path):
    settings = load_settings(local_kafka_port=free_port(), kafka_connect_timeout_ms=2_000)
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(event(1)) + "\n")
    with pytest.raises(KafkaUnavailable) as error:
        replay(settings, path, "twitter-feedback")
    assert f"127.0.0.1:{settings.local_kafka_port}" in str(error.value)
    assert "feedback kafka start" in str(error.value)
