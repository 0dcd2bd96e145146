"""What reached the Slack stand-in, in alerts: each posted message's alerts, from the
dispatcher's record of that message (a message carries only its id and count)."""

from __future__ import annotations

import json
from collections import Counter

from feedback.devtools.slack_standin import SlackWebStandIn
from jobs.alerts.alerts_log import read_log


def posted_message_ids(slack: SlackWebStandIn) -> list[str]:
    return [p.metadata["event_payload"]["message_id"] for p in slack.posts if p.metadata]


def posted_alert_keys(slack: SlackWebStandIn, settings) -> Counter:
    """How often each alert key went out, over every message the stand-in kept (a message
    posted twice counts its alerts twice)."""
    posted = posted_message_ids(slack)  # first: each one's record was written before it was posted
    messages = read_log(settings, settings.dispatcher_group)
    return Counter(alert["key"] for mid in posted for alert in messages[mid].alerts)


def alert_value(event_id: str, n: int, channel: str = "#negative-feedback", score: float = 0.1) -> bytes:
    """An alert record's value as the scorer writes it: of event `event_id`, read at offset `n`
    of `twitter-feedback`'s partition 0."""
    return json.dumps(
        {
            "key": f"{event_id}|{channel}",
            "event_id": event_id,
            "channel": channel,
            "source": "twitter",
            "author": "mara_k",
            "text": f"Terrible update number {n}",
            "score": score,
            "url": None,
            "source_topic": "twitter-feedback",
            "partition": 0,
            "offset": n,
            "kafka_timestamp": "2026-11-23T10:00:00.000Z",
            "scored_at": "2026-11-23T10:00:00.500Z",
        }
    ).encode()
