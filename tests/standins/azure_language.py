"""A loopback stand-in for Azure AI Language's sentiment analysis (analyze-text).

Follows https://learn.microsoft.com/azure/ai-services/language-service/sentiment-opinion-mining/
(request: `POST /language/:analyze-text?api-version=2023-04-01`, header
`Ocp-Apim-Subscription-Key`, body kind `SentimentAnalysis` with `analysisInput.documents`;
answer `SentimentAnalysisResults` with per-document `confidenceScores`) and the documented
limits (at most 10 documents a request, 5,120 characters a document: larger requests get
400, longer documents a per-document error). 401 for a wrong key; faults "429" (with
Retry-After) and "500" are answered in order before normal service.

Its "model": a document containing "bad" gets positive 0.0, neutral 0.1, negative 0.9;
any other gets positive 0.9, neutral 0.1, negative 0.0.
"""

from __future__ import annotations

from feedback.devtools.loopback import LoopbackHTTP, Reply, Request


class AzureLanguageStandIn(LoopbackHTTP):
    def __init__(self, key: str, faults: list[str] | None = None):
        super().__init__()
        self.key = key
        self.faults = list(faults or [])
        self.requests: list[list[str]] = []
        self.statuses: list[int] = []

    @property
    def endpoint(self) -> str:
        return f"{self.origin}/"

    def handle(self, request: Request) -> Reply:
        reply = self._answer(request)
        self.statuses.append(reply.status)
        return reply

    def _answer(self, request: Request) -> Reply:
        if request.path != "/language/:analyze-text" or "api-version" not in request.query:
            return Reply(404, {"error": {"code": "404", "message": "Resource not found"}})
        if request.headers.get("ocp-apim-subscription-key") != self.key:
            return Reply(401, {"error": {"code": "401", "message": "Access denied due to invalid subscription key"}})
        if self.faults:
            if self.faults.pop(0) == "429":
                return Reply(429, {"error": {"code": "429", "message": "Rate limit exceeded"}}, {"Retry-After": "1"})
            return Reply(500, {"error": {"code": "InternalServerError", "message": "try again"}})
        body = request.json()
        documents = body["analysisInput"]["documents"]
        if body.get("kind") != "SentimentAnalysis" or len(documents) > 10:
            return Reply(
                400,
                {
                    "error": {
                        "code": "InvalidRequest",
                        "message": "Batch request contains too many records. Max 10 records are permitted.",
                    }
                },
            )
        self.requests.append([doc["text"] for doc in documents])
        results, errors = [], []
        for doc in documents:
            if len(doc["text"]) > 5120:
                errors.append(
                    {
                        "id": doc["id"],
                        "error": {
                            "code": "InvalidArgument",
                            "message": "A document within the request was too large to be processed.",
                        },
                    }
                )
                continue
            negative = "bad" in doc["text"]
            scores = (
                {"positive": 0.0, "neutral": 0.1, "negative": 0.9}
                if negative
                else {"positive": 0.9, "neutral": 0.1, "negative": 0.0}
            )
            results.append(
                {
                    "id": doc["id"],
                    "sentiment": "negative" if negative else "positive",
                    "confidenceScores": scores,
                    "sentences": [],
                    "warnings": [],
                }
            )
        return Reply(
            200,
            {
                "kind": "SentimentAnalysisResults",
                "results": {"documents": results, "errors": errors, "modelVersion": "2022-11-01"},
            },
        )
