"""Which scores alert, and where (pure): the one rule the scorer, the shift rule, the pipeline
check, the tables' readers, the pictures and the tests follow.

    rules = alert_rules(settings)
    rules.channel(0.12)     # "#negative-feedback"
    rules.negative(0.12)    # True: counted as negative by the shift rule
    rules.channel_sql()     # the same rule as a Spark SQL expression
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from feedback.core.settings import Settings


@dataclass(frozen=True)
class AlertRules:
    """Below `negative_threshold` alerts `negative_channel`, above `positive_threshold`
    alerts `positive_channel`; both strict."""

    negative_threshold: float
    positive_threshold: float
    negative_channel: str
    positive_channel: str

    def negative(self, score: float) -> bool:
        """Whether `score` is negative feedback: what alerts `negative_channel`, and what the
        shift rule counts as negative."""
        return score < self.negative_threshold

    def channel(self, score: float) -> Optional[str]:
        if self.negative(score):
            return self.negative_channel
        if score > self.positive_threshold:
            return self.positive_channel
        return None

    def channel_sql(self, score: str = "score") -> str:
        """`channel` as a Spark SQL expression over the column `score` (null for none), for
        the tables' readers: the summary, the report and reprocessing's comparison. Written
        beside `channel` so the rule is read in one place; tests/jobs/scoring/test_scoring.py holds
        the two equal at and around both thresholds."""

        def text(value: str) -> str:
            return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"

        return (
            f"CASE WHEN {score} < {self.negative_threshold!r} THEN {text(self.negative_channel)} "
            f"WHEN {score} > {self.positive_threshold!r} THEN {text(self.positive_channel)} END"
        )


def alert_rules(settings: Settings) -> AlertRules:
    """The rules the settings give: thresholds and channels."""
    return AlertRules(
        settings.negative_threshold, settings.positive_threshold, settings.negative_channel, settings.positive_channel
    )


def default_alert_rules() -> AlertRules:
    """The rules of the settings' defaults (0.3 and 0.9), whatever this machine's config says."""
    fields = Settings.model_fields
    return AlertRules(
        fields["negative_threshold"].default,
        fields["positive_threshold"].default,
        fields["negative_channel"].default,
        fields["positive_channel"].default,
    )
