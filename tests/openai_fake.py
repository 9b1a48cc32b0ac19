"""A fake OpenAI-compatible server speaking the real wire format (/v1/chat/completions with
its server-sent-events stream, /v1/embeddings), for the real ``openai`` SDK to talk to.

``FakeOpenAI`` is the handler: give it to ``httpx.MockTransport`` (in-process tests), or run
it behind a real HTTP listener on 127.0.0.1 with ``LocalOpenAIServer`` (for the CLI, the MCP
server and the docs examples, which build their own clients from ``OPENAI_BASE_URL``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx


class FakeOpenAI:
    """Stands in for an OpenAI-compatible server at the HTTP level. Queued answers for a path
    come first (a Response, an exception to raise, or a function of the request); then a
    well-formed default answer."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.queued: dict[str, list[Any]] = {}
        self.chat_text = '{"ok": true}'
        #: when set, the reply is ``reply(body)`` (the request JSON): lets a test answer by prompt
        self.reply: Callable[[dict[str, Any]], str] | None = None
        self.stream_pieces = ["Neo4j ", "stores ", "graphs [1]."]
        self.reverse_embeddings = False

    def queue(self, path: str, *answers: Any) -> None:
        self.queued.setdefault(path, []).extend(answers)

    def bodies(self, path: str) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests if r.url.path == path]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path = request.url.path
        answer = self.queued[path].pop(0) if self.queued.get(path) else None
        if isinstance(answer, Exception):
            raise answer
        if callable(answer):
            return answer(request)
        if answer is not None:
            return answer
        body = json.loads(request.content)
        if path.endswith("/embeddings"):
            return self._embeddings(body)
        if body.get("stream"):
            return self._stream(body)
        return self._chat(body)

    def _embeddings(self, body: dict[str, Any]) -> httpx.Response:
        dims = body.get("dimensions") or {"text-embedding-3-large": 3072}.get(body["model"], 1536)
        if body["model"] == "nomic-embed-text":
            dims = 768
        rows = [
            {"object": "embedding", "index": i, "embedding": [float(len(text))] + [0.25] * (dims - 1)}
            for i, text in enumerate(body["input"])
        ]
        if self.reverse_embeddings:
            rows.reverse()
        return httpx.Response(
            200,
            json={
                "object": "list",
                "data": rows,
                "model": body["model"],
                "usage": {"prompt_tokens": 3, "total_tokens": 3},
            },
        )

    def text_for(self, body: dict[str, Any]) -> str:
        return self.reply(body) if self.reply is not None else self.chat_text

    def _chat(self, body: dict[str, Any]) -> httpx.Response:
        return httpx.Response(
            200,
            json={
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1700000000,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": self.text_for(body), "refusal": None},
                        "logprobs": None,
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
            },
        )

    def _stream(self, body: dict[str, Any]) -> httpx.Response:
        def chunk(delta: dict[str, Any], finish: str | None) -> str:
            data = {
                "id": "chatcmpl-2",
                "object": "chat.completion.chunk",
                "created": 1700000000,
                "model": body["model"],
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            }
            return f"data: {json.dumps(data)}\n\n"

        events = [chunk({"role": "assistant", "content": ""}, None)]
        pieces = self.stream_pieces if self.reply is None else _split(self.text_for(body))
        events += [chunk({"content": piece}, None) for piece in pieces]
        events += [chunk({}, "stop"), "data: [DONE]\n\n"]
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content="".join(events).encode())


def error(status: int, message: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(
        status,
        json={"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}},
        headers=headers,
    )


def _split(text: str, size: int = 8) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class LocalOpenAIServer:
    """``FakeOpenAI`` on a real socket at ``http://127.0.0.1:PORT/v1`` (``base_url``)."""

    def __init__(self, fake: FakeOpenAI | None = None) -> None:
        self.fake = fake or FakeOpenAI()
        fake_ = self.fake

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("content-length") or 0)
                request = httpx.Request(
                    "POST", f"http://127.0.0.1{self.path}", headers=dict(self.headers), content=self.rfile.read(length)
                )
                response = fake_(request)
                body = response.read()
                self.send_response(response.status_code)
                for key, value in response.headers.items():
                    if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(key, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-openai", daemon=True)

    def __enter__(self) -> LocalOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def scripted_reply(body: dict[str, Any]) -> str:
    """A model that answers kgrag's own prompts plausibly, from the prompt alone: answers
    cite passage [1]; entity extraction names the capitalised words of each chunk (typed by
    a small table, related in order); edge extraction links consecutive chunks; community
    reports title the community by its first entity."""
    import re

    system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
    user = next((m["content"] for m in body["messages"] if m["role"] == "user"), "")
    if "numbered context passages" in system:
        return "Neo4j creates vector indexes with CREATE VECTOR INDEX [1]."
    if "extract a knowledge graph" in system:
        types = {"Neo4j": "PRODUCT", "Lucene": "PRODUCT", "Alice": "PERSON", "Acme": "COMPANY", "Paris": "CITY"}
        entities, names = [], []
        for chunk_id, text in re.findall(r"\[chunk_id: ([^\]]+)\]\n(.*?)(?=\n\n\[chunk_id|\Z)", user, re.S):
            for name in dict.fromkeys(re.findall(r"\b[A-Z][a-z0-9]+\b", text)):
                entities.append(
                    {
                        "name": name,
                        "type": types.get(name, "THING"),
                        "description": f"{name} in {chunk_id}",
                        "chunk_ids": [chunk_id],
                    }
                )
                names.append(name)
        relations = [
            {
                "source": a,
                "target": b,
                "type": "WORKS_FOR" if b == "Acme" else "RELATED",
                "strength": 0.8,
                "description": f"{a} and {b}",
            }
            for a, b in zip(names, names[1:])
            if a != b
        ]
        return json.dumps({"entities": entities, "relationships": relations})
    if "report about one community" in system:
        first = re.search(r"\*\*(.+?)\*\*", user)
        return json.dumps(
            {
                "title": f"The {first.group(1) if first else 'unknown'} community",
                "summary": "Written by the scripted model.",
                "rating": 7.5,
            }
        )
    if "knowledge graph over text chunks" in user:
        ids = re.findall(r"^\[([^\]]+)\]: ", user, re.M)
        edges = [
            {"source": a, "target": b, "relation": "elaborates", "weight": 0.9, "description": "scripted"}
            for a, b in zip(ids, ids[1:])
        ]
        return json.dumps({"edges": edges})
    return "I do not know this prompt."
