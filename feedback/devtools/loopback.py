"""The HTTP plumbing every stand-in shares: a server on a free loopback port, in a thread.

Here rather than in tests/standins because `feedback bench latency` serves the Slack Web API
stand-in (feedback/devtools/slack_standin.py) too; the other stand-ins are the tests' alone.

A stand-in subclasses `LoopbackHTTP` and implements `handle(request) -> Reply`; it is used
as a context manager (`with SlackWebStandIn() as slack: ...`). Pass an `ssl.SSLContext` to
serve HTTPS (clients such as azure-core refuse bearer tokens over plain HTTP).
"""

from __future__ import annotations

import json
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Request:
    verb: str
    path: str
    query: dict[str, str]  # the first value of each parameter
    headers: dict[str, str]  # names in lower case
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def form_or_json(self) -> dict:
        """Arguments sent as a JSON body, a form body or the query string."""
        if self.headers.get("content-type", "").startswith("application/json") and self.body:
            return self.json()
        if self.body:
            return {key: values[0] for key, values in parse_qs(self.body.decode()).items()}
        return dict(self.query)


@dataclass
class Reply:
    status: int
    body: Any = None  # a dict or list is sent as JSON; str and bytes as they are
    headers: dict[str, str] = field(default_factory=dict)


class LoopbackHTTP:
    def __init__(self, ssl_context: Optional[ssl.SSLContext] = None) -> None:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # The headers and the body go out in separate writes: with Nagle's algorithm the second
            # waits for the client's delayed ACK (about 40 ms on Linux), on every keep-alive request.
            disable_nagle_algorithm = True

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                request = Request(
                    self.command,
                    parts.path,
                    {k: v[0] for k, v in parse_qs(parts.query).items()},
                    {k.lower(): v for k, v in self.headers.items()},
                    self.rfile.read(length) if length else b"",
                )
                reply = standin.handle(request)
                body = reply.body
                if isinstance(body, (dict, list)):
                    body = json.dumps(body)
                data = body.encode() if isinstance(body, str) else (body or b"")
                self.send_response(reply.status)
                if "Content-Type" not in reply.headers:
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

            def log_message(self, *args) -> None:
                pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 64  # the listen backlog: 5 by default, which resets a burst of clients

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.scheme = "http"
        if ssl_context is not None:
            self.server.socket = ssl_context.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def origin(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}"

    def handle(self, request: Request) -> Reply:
        raise NotImplementedError  # each stand-in answers its own API

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
