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

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class AzureLanguageStandIn:
    def __init__(self, key: str, faults: list[str] | None = None):
        self.key = key
        self.faults = list(faults or [])
        self.requests: list[list[str]] = []
        self.statuses: list[int] = []
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                standin._handle(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def _answer(self, handler, status: int, body: dict, headers: dict | None = None) -> None:
        self.statuses.append(status)
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(data)

    def _handle(self, handler) -> None:
        body = json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))
        if not handler.path.startswith("/language/:analyze-text?api-version="):
            return self._answer(handler, 404, {"error": {"code": "404", "message": "Resource not found"}})
        if handler.headers.get("Ocp-Apim-Subscription-Key") != self.key:
            return self._answer(handler, 401, {"error": {"code": "401", "message": "Access denied due to invalid subscription key"}})
        if self.faults:
            fault = self.faults.pop(0)
            if fault == "429":
                return self._answer(handler, 429, {"error": {"code": "429", "message": "Rate limit exceeded"}}, {"Retry-After": "1"})
            return self._answer(handler, 500, {"error": {"code": "InternalServerError", "message": "try again"}})
        documents = body["analysisInput"]["documents"]
        if body.get("kind") != "SentimentAnalysis" or len(documents) > 10:
            return self._answer(handler, 400, {"error": {"code": "InvalidRequest",
                                                         "message": "Batch request contains too many records. Max 10 records are permitted."}})
        self.requests.append([doc["text"] for doc in documents])
        results, errors = [], []
        for doc in documents:
            if len(doc["text"]) > 5120:
                errors.append({"id": doc["id"], "error": {"code": "InvalidArgument", "message": "A document within the request was too large to be processed."}})
                continue
            scores = {"positive": 0.0, "neutral": 0.1, "negative": 0.9} if "bad" in doc["text"] else {"positive": 0.9, "neutral": 0.1, "negative": 0.0}
            results.append({"id": doc["id"], "sentiment": "negative" if scores["negative"] > 0.5 else "positive",
                            "confidenceScores": scores, "sentences": [], "warnings": []})
        return self._answer(handler, 200, {"kind": "SentimentAnalysisResults",
                                           "results": {"documents": results, "errors": errors, "modelVersion": "2022-11-01"}})
