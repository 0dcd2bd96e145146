"""The Slack simulator: post sample feedback into a channel, as people would.

    feedback producer slack-simulate --channel '#product-feedback' --count 20

Posts the valid texts of `producers/samples/slack.jsonl` with `chat.postMessage` and the bot
token (scope `chat:write`; https://docs.slack.dev/reference/methods/chat.postMessage).
Slack allows about one message a second per channel for this method, with short bursts
(https://docs.slack.dev/apis/web-api/rate-limits), so the default pace is one a second,
and a 429 is waited out as its `Retry-After` says (slack_sdk's RateLimitErrorRetryHandler).
Set `slack_simulator_bot_id` to this bot's id (the `bot_id` of its messages, shown by
`auth.test`) so the Slack producer takes its messages as feedback.
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from slack_sdk.errors import SlackApiError

from feedback.core.schema import validate_feedback
from feedback.core.settings import Settings
from producers.slack import web_client

SAMPLES = Path(__file__).resolve().parent / "samples" / "slack.jsonl"
DEFAULT_INTERVAL_S = 1.0


def sample_texts(path: Path = SAMPLES) -> list[str]:
    """The texts of the valid, distinct feedback events of a JSON Lines sample file."""
    texts: list[str] = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not validate_feedback(event) and event["text"] not in texts:
            texts.append(event["text"])
    return texts


@dataclass
class SimulatorReport:
    channel: str
    posted: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)
    timestamps: list[str] = field(default_factory=list)


def simulate(
    settings: Settings,
    channel: Optional[str] = None,
    count: Optional[int] = None,
    interval_s: float = DEFAULT_INTERVAL_S,
    texts: Optional[list[str]] = None,
    stop: Optional[threading.Event] = None,
    on_progress: Callable[[int], None] = lambda posted: None,
) -> SimulatorReport:
    """Post `count` sample texts (all of them once when None) into `channel`."""
    settings.require_complete("slack_bot_token")
    channel = channel or settings.slack_feedback_channels[0]
    if channel.lstrip("#") in {settings.negative_channel.lstrip("#"), settings.positive_channel.lstrip("#")}:
        raise ValueError(f"{channel} is an alert channel: the simulator posts feedback, into a feedback channel")
    texts = texts if texts is not None else sample_texts()
    stop = stop or threading.Event()
    web = web_client(settings, settings.slack_bot_token.get_secret_value())
    report = SimulatorReport(channel)
    for number, text in enumerate(itertools.islice(itertools.cycle(texts), count if count is not None else len(texts))):
        if number and stop.wait(interval_s):
            break
        try:
            answer = web.chat_postMessage(channel=channel, text=text)
        except SlackApiError as error:
            report.failed += 1
            report.errors.append(str(error.response.get("error")))
            if error.response.get("error") in (
                "invalid_auth",
                "not_authed",
                "channel_not_found",
                "not_in_channel",
                "missing_scope",
            ):
                raise
            continue
        report.posted += 1
        report.timestamps.append(answer["ts"])
        on_progress(report.posted)
    return report
