"""Sentiment analyzers: text in, one score in [0, 1] out (0 most negative, 1 most positive).

* `vader` (default): VADER's offline lexicon; score = (compound + 1) / 2.
* `azure-language`: Azure AI Language's sentiment analysis over its REST API
  (`POST {endpoint}/language/:analyze-text`, kind `SentimentAnalysis`). Its answer gives
  positive, neutral and negative confidences that sum to 1; the score is
  `positive + neutral / 2`: all-positive 1, all-negative 0, all-neutral 0.5. The service
  takes at most 10 documents a request and 5,120 characters a document: longer texts are
  split on whitespace into pieces of at most 5,120 characters, each piece is scored, and
  the text's score is the pieces' mean weighted by length. 429 and 5xx answers are retried
  (Retry-After honoured) within a bound.

An analyzer is built once per Python worker (`analyzer_for`) and scores a list of texts at a
time, so the pipeline's pandas function calls it once per Arrow batch, never per row.
"""

from __future__ import annotations

import functools
import importlib.metadata
from dataclasses import dataclass, field
from typing import Optional, Protocol, Sequence

import requests
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

AZURE_API_VERSION = "2023-04-01"
AZURE_MAX_DOCUMENTS = 10
AZURE_MAX_CHARS = 5120


class Analyzer(Protocol):
    name: str
    version: str

    def score(self, texts: Sequence[str]) -> list[float]: ...


class VaderAnalyzer:
    name = "vader"

    def __init__(self) -> None:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        self.version = importlib.metadata.version("vaderSentiment")
        self._vader = SentimentIntensityAnalyzer()

    def score(self, texts: Sequence[str]) -> list[float]:
        return [(self._vader.polarity_scores(text)["compound"] + 1) / 2 for text in texts]


class AnalyzerError(RuntimeError):
    """The analyzer could not score a text; the message says why."""


def confidences_to_score(positive: float, neutral: float, negative: float) -> float:
    """Azure's three confidences as one score in [0, 1] (see the module docstring)."""
    del negative  # the three sum to 1; negative is what the other two leave
    return min(1.0, max(0.0, positive + neutral / 2))


def split_text(text: str, limit: int = AZURE_MAX_CHARS) -> list[str]:
    """Pieces of at most `limit` characters, cut at whitespace where there is some."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = rest.rfind(" ", 0, limit + 1)
        cut = cut if cut > 0 else limit
        pieces.append(rest[:cut])
        rest = rest[cut:].lstrip()
    if rest or not pieces:
        pieces.append(rest)
    return pieces


class _Retryable(Exception):
    def __init__(self, response: requests.Response):
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


def _wait(retry_state) -> float:
    """Retry-After when the service sends one, else exponential back-off."""
    error = retry_state.outcome.exception()
    after = getattr(getattr(error, "response", None), "headers", {}).get("Retry-After")
    if after is not None:
        try:
            return min(float(after), 60.0)
        except ValueError:
            pass
    return wait_exponential(multiplier=0.5, max=10)(retry_state)


@dataclass
class AzureLanguageAnalyzer:
    endpoint: str
    key: str = field(repr=False)  # a secret: never in a log line or an error
    timeout_s: float = 30
    attempts: int = 5
    name: str = "azure-language"
    version: str = "latest"

    def score(self, texts: Sequence[str]) -> list[float]:
        pieces: list[tuple[int, str]] = [
            (index, piece) for index, text in enumerate(texts) for piece in split_text(text)
        ]
        weighted = [0.0] * len(texts)
        lengths = [0] * len(texts)
        with requests.Session() as session:
            for start in range(0, len(pieces), AZURE_MAX_DOCUMENTS):
                chunk = pieces[start : start + AZURE_MAX_DOCUMENTS]
                scores = self._request(session, [piece for _, piece in chunk])
                for (index, piece), value in zip(chunk, scores):
                    weight = max(len(piece), 1)
                    weighted[index] += value * weight
                    lengths[index] += weight
        return [w / n for w, n in zip(weighted, lengths)]

    def _request(self, session: requests.Session, documents: list[str]) -> list[float]:
        body = {
            "kind": "SentimentAnalysis",
            "parameters": {"modelVersion": self.version},
            "analysisInput": {"documents": [{"id": str(i), "text": text} for i, text in enumerate(documents)]},
        }

        @retry(
            retry=retry_if_exception(lambda e: isinstance(e, (_Retryable, requests.ConnectionError, requests.Timeout))),
            wait=_wait,
            stop=stop_after_attempt(self.attempts),
            reraise=True,
        )
        def post() -> dict:
            response = session.post(
                f"{self.endpoint.rstrip('/')}/language/:analyze-text",
                params={"api-version": AZURE_API_VERSION},
                headers={"Ocp-Apim-Subscription-Key": self.key},
                json=body,
                timeout=self.timeout_s,
            )
            if response.status_code == 429 or response.status_code >= 500:
                raise _Retryable(response)
            if response.status_code in (401, 403):
                raise AnalyzerError(
                    f"Azure AI Language refused the key (HTTP {response.status_code}): "
                    "check the setting azure_language_key (FEEDBACK_AZURE_LANGUAGE_KEY)"
                )
            if response.status_code != 200:
                raise AnalyzerError(f"Azure AI Language answered HTTP {response.status_code}: {response.text[:300]}")
            return response.json()

        try:
            answer = post()
        except _Retryable as error:
            raise AnalyzerError(f"Azure AI Language still answered {error} after {self.attempts} attempts") from None
        results = answer["results"]
        if results.get("errors"):
            first = results["errors"][0]
            raise AnalyzerError(f"Azure AI Language rejected document {first['id']}: {first['error'].get('message')}")
        by_id = {doc["id"]: doc["confidenceScores"] for doc in results["documents"]}
        return [
            confidences_to_score(**{k: by_id[str(i)][k] for k in ("positive", "neutral", "negative")})
            for i in range(len(documents))
        ]


@functools.lru_cache(maxsize=4)
def analyzer_for(name: str, endpoint: Optional[str] = None, key: Optional[str] = None) -> Analyzer:
    """The analyzer called `name`, built once per Python process (so once per worker)."""
    if name == "vader":
        return VaderAnalyzer()
    if name == "azure-language":
        if not endpoint or not key:
            raise AnalyzerError("analyzer 'azure-language' needs azure_language_endpoint and azure_language_key")
        return AzureLanguageAnalyzer(endpoint, key)
    raise AnalyzerError(f"unknown analyzer {name!r}: expected 'vader' or 'azure-language'")
