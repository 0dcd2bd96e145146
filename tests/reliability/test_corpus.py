"""A seeded corpus of random and adversarial records (tests/support/corpus.py) through every part
on the real local broker and Spark: the scorer, the shift query, the table writer and the
dispatcher, available-now, with alerts to the Slack Web API stand-in.

Every part must end by itself (the run returns; the per-test time-out is the bound), and the
books must balance: every record in is scored, dead-lettered or a duplicate, as the validator
the scorer shares says; every alert the table's rows call for is posted once, none held, none
twice. `pytest --long` runs ten times the records (docs/reliability.md).
"""

from __future__ import annotations

import pytest

from feedback.clients.alerts import SlackNotifier
from feedback.core.catalogue import FEEDBACK_TOPICS
from feedback.devtools.slack_standin import SlackWebStandIn
from jobs import sentiment_pipeline
from jobs.views.summary import summarize
from tests.support.alerts import posted_alert_keys
from tests.support.corpus import corpus
from tests.support.kafka import offsets_now, produce
from tests.support.pipeline import pipeline_settings

SEED = 56


@pytest.mark.kafka
@pytest.mark.spark
def test_a_seeded_corpus_goes_through_every_part_and_the_books_balance(
    topics_ready, spark, tmp_path, long_variant, record_figures
):
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    records, expected = corpus("corpus", SEED, 20_000 if long_variant else 2_000)
    produce(topics_ready, records)
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, start)
        sentiment_pipeline.run(spark, settings, SlackNotifier(settings))
        summary = summarize(spark, settings)
        posted = posted_alert_keys(slack, settings)
    event_alerts = {key: times for key, times in posted.items() if not key.startswith("shift|")}
    record_figures(
        seed=SEED,
        records=expected.events_in,
        valid=expected.valid,
        dead=expected.dead,
        duplicates=expected.duplicates,
        alerts_posted=len(event_alerts),
    )

    assert (summary.events_in, summary.scored, summary.deadlettered, summary.duplicates) == (
        expected.events_in,
        expected.valid - expected.duplicates,
        expected.dead,
        expected.duplicates,
    ), f"seed {SEED}"
    assert summary.scored_again == 0
    assert summary.alerts_pending == {} and summary.alerts_silenced == {}
    assert sum(summary.alerts_sent.values()) == summary.alerts_expected == len(event_alerts) > 0
    assert set(event_alerts.values()) == {1}  # each alert in one message
