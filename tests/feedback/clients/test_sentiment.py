"""Analyzers: VADER offline, and Azure AI Language against a loopback stand-in."""

from __future__ import annotations

import pytest

from feedback.clients.sentiment import (
    AZURE_MAX_CHARS,
    AnalyzerError,
    AzureLanguageAnalyzer,
    VaderAnalyzer,
    confidences_to_score,
    split_text,
)
from tests.standins.azure_language import AzureLanguageStandIn


def test_vader_score_is_compound_shifted_into_0_1():
    vader = VaderAnalyzer()
    compound = vader._vader.polarity_scores("I hate this")["compound"]
    assert vader.score(["I hate this"]) == [pytest.approx((compound + 1) / 2)]
    assert vader.score([""]) == [0.5]


@pytest.mark.parametrize(
    ("positive", "neutral", "negative", "expected"),
    [(1, 0, 0, 1.0), (0, 0, 1, 0.0), (0, 1, 0, 0.5), (0.2, 0.6, 0.2, 0.5), (0.89, 0.1, 0.01, 0.94)],
)
def test_azure_confidences_map_to_one_score(positive, neutral, negative, expected):
    assert confidences_to_score(positive, neutral, negative) == pytest.approx(expected)


def test_long_texts_are_split_at_whitespace_within_the_limit():
    text = ("word " * 3000).strip()
    pieces = split_text(text)
    assert all(len(piece) <= AZURE_MAX_CHARS for piece in pieces)
    assert " ".join(pieces) == text
    assert split_text("x" * 6000) == ["x" * 5120, "x" * 880]


def test_azure_analyzer_batches_ten_documents_and_weights_split_texts():
    with AzureLanguageStandIn(key="k1") as service:
        analyzer = AzureLanguageAnalyzer(service.endpoint, "k1")
        texts = [f"good {i}" for i in range(13)] + ["bad " * 2000]
        scores = analyzer.score(texts)
    assert [len(batch) for batch in service.requests] == [10, 5]  # 13 short + 2 pieces of the 8,000-character one
    assert scores[:13] == [pytest.approx(0.95)] * 13
    assert scores[13] == pytest.approx(0.05)


def test_azure_analyzer_waits_out_429_with_retry_after():
    with AzureLanguageStandIn(key="k1", faults=["429", "500"]) as service:
        assert AzureLanguageAnalyzer(service.endpoint, "k1").score(["good"]) == [pytest.approx(0.95)]
    assert service.statuses == [429, 500, 200]


def test_azure_analyzer_names_the_setting_when_the_key_is_refused():
    with AzureLanguageStandIn(key="k1") as service:
        with pytest.raises(AnalyzerError, match="azure_language_key"):
            AzureLanguageAnalyzer(service.endpoint, "wrong").score(["good"])


def test_azure_analyzer_gives_up_after_its_attempts():
    with AzureLanguageStandIn(key="k1", faults=["500"] * 10) as service:
        with pytest.raises(AnalyzerError, match="after 3 attempts"):
            AzureLanguageAnalyzer(service.endpoint, "k1", attempts=3).score(["good"])
