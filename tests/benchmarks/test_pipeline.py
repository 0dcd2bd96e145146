"""The pipeline benchmarks' pure parts (benchmarks/pipeline.py): the texts they send, which of
them the latency benchmark waits to see alerted, and the rows a query has read. The
benchmarks themselves run with `feedback bench pipeline | latency | continuous`."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from benchmarks.pipeline import _alerts_text, _rows_read, sample_texts
from feedback.core.settings import load_settings
from tests.support.events import NEGATIVE, NEUTRAL, POSITIVE, event


def test_the_texts_are_those_of_both_sample_files_that_an_event_could_carry(tmp_path, monkeypatch):
    lines = {
        "twitter": [
            json.dumps(event("t", 1, "Sync is slow")),
            '{"id": "t-2", "text": "cut sh',
            "[1, 2]",
            "",
            json.dumps(event("t", 3, "   ")),
            json.dumps({**event("t", 4, "x"), "text": 42}),
            json.dumps({"id": "t-5", "text": "No author, still a text"}),
        ],
        "slack": [json.dumps(event("s", 1, "Love the editor", source="slack"))],
    }
    for source, written in lines.items():
        (tmp_path / f"{source}.jsonl").write_text("\n".join(written) + "\n", encoding="utf-8")
    monkeypatch.setattr("producers.replay.SAMPLES", tmp_path)

    assert sorted(sample_texts()) == ["Love the editor", "No author, still a text", "Sync is slow"]


def test_the_shipped_samples_give_texts_from_both_files_and_none_blank():
    texts = sample_texts()
    # producers/samples/README.md: 282 + 156 lines; of each file's eight defects, five carry no
    # usable text (empty, blank, a number, truncated JSON, a JSON array).
    assert len(texts) == (282 - 5) + (156 - 5)
    assert all(isinstance(text, str) and text.strip() for text in texts)


def test_a_text_alerts_when_its_vader_score_is_past_the_settings_thresholds():
    settings = load_settings()
    assert all(_alerts_text(text, settings) for text in NEGATIVE + POSITIVE)
    assert not any(_alerts_text(text, settings) for text in NEUTRAL)
    never = settings.replace(negative_threshold=0.0, positive_threshold=1.0)
    assert not any(_alerts_text(text, never) for text in NEGATIVE + POSITIVE)


def test_the_rows_a_query_has_read_are_summed_over_its_recent_progress():
    query = SimpleNamespace(recentProgress=[{"numInputRows": 3}, {"numInputRows": 0}, {"numInputRows": 5}])
    assert _rows_read(query) == 8
    assert _rows_read(SimpleNamespace(recentProgress=[])) == 0


def test_slack_figures_time_each_alert_to_the_message_carrying_it_and_count_messages_per_second():
    from benchmarks.pipeline import slack_figures

    def message(channel: str, ts: float, mid: str) -> dict:
        payload = {"message_id": mid, "count": 1}
        return {
            "channel": channel,
            "ts": f"{ts:.6f}",
            "metadata": {"event_type": "feedback_alert_message", "event_payload": payload},
        }

    base = 1_795_600_000.0  # 2026-11-25T09:46:40Z
    sent = "2026-11-25T09:46:40.000Z"
    alerts_of = {
        "m1": [{"event_id": "lat-1", "kafka_timestamp": sent, "scored_at": "2026-11-25T09:46:40.200Z"}],
        "m2": [{"event_id": f"lat-{n}", "kafka_timestamp": sent} for n in (2, 3, 4)],
        "m3": [{"event_id": "warm-9", "kafka_timestamp": sent}],  # another run's: not counted
    }
    messages = [message("#neg", base + 0.5, "m1"), message("#neg", base + 1.5, "m2"), message("#pos", base + 0.7, "m3")]
    figures = slack_figures(messages, alerts_of, "lat-")
    assert figures.visible_ms == pytest.approx([500.0, 1500.0, 1500.0, 1500.0], abs=0.01)
    assert figures.scored_to_visible_ms == pytest.approx([300.0], abs=0.01)  # float seconds since 1970
    assert figures.messages == {"#neg": 2} and figures.most_in_a_second == {"#neg": 1}
    assert figures.alerts_per_message == 2.0 and figures.in_two_messages == 0
    twice = slack_figures(messages + [message("#neg", base + 2.7, "m1")], alerts_of, "lat-")
    assert twice.in_two_messages == 1 and twice.most_in_a_second == {"#neg": 1}


def test_the_rates_file_describes_the_machine_and_reads_back_for_feedback_size(tmp_path):
    from benchmarks.pipeline import commit, machine, write_rates
    from feedback.core.sizing import MeasuredRates, rates_path

    rates = MeasuredRates(100_000, 8.0, 12.0, 2, 1, 20_000.0, "2026-11-26T10:00:00.000Z", machine(), commit())
    path = write_rates(rates_path(tmp_path), rates)
    assert path == tmp_path / "bench" / "pipeline-rates.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["scorer_events_per_s_per_core"] == 6250.0 and data["through_events_per_s_per_core"] == 2500.0
    assert data["machine"].split(" cores")[0].isdigit() and "local[2]" in data["machine"]
    assert MeasuredRates.from_json(data, source="measured").scorer_per_core == 6250.0
