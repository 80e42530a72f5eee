"""A hostile agent: a plain HTTP server on loopback that answers its health like an agent
(so that a central adds it) and anything else as the test tells it (content type, body,
status, headers, dripped byte by byte), recording what it was asked."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from stackyard import __version__
from stackyard.agents.compat import CAPABILITIES


@dataclass
class Answer:
    status: int = 200
    content_type: str = "application/json"
    body: bytes = b"{}"
    headers: dict[str, str] = field(default_factory=dict)
    #: Seconds between two bytes of the body (0: all at once).
    drip: float = 0


@dataclass
class HostileAgent:
    url: str
    token: str
    #: What to answer, by path under /agent (the health aside).
    answers: dict[str, Answer] = field(default_factory=dict)
    #: The paths it was asked for, and the headers each came with.
    asked: list[tuple[str, dict[str, str]]] = field(default_factory=list)


def _handler(agent: HostileAgent) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _answer(self) -> None:
            path = self.path.split("?", 1)[0].removeprefix("/agent/")
            agent.asked.append((path, dict(self.headers.items())))
            if path == "health" and path not in agent.answers:
                health = {"status": "ok", "version": __version__, "mode": "agent"}
                answer = Answer(body=json.dumps(health | {"capabilities": CAPABILITIES}).encode())
            else:
                answer = agent.answers.get(path, Answer(404, body=b'{"detail": "no"}'))
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(answer.body)))
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if not answer.drip:
                self.wfile.write(answer.body)
                return
            for byte in answer.body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(answer.drip)

        do_GET = do_POST = do_DELETE = _answer

    return Handler


@pytest.fixture
def hostile_agent() -> Iterator[HostileAgent]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(HostileAgent("", "")))
    agent = HostileAgent(f"http://127.0.0.1:{server.server_port}", "hostile-token-" * 3)
    server.RequestHandlerClass = _handler(agent)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield agent
    server.shutdown()
    server.server_close()
