"""The Cohere providers, run through the real ``cohere`` SDK against a fake HTTP transport
that answers in Cohere's v2 wire format (/v2/embed, /v2/chat, /v2/rerank)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import cohere
import httpx
import pytest

from kgrag_neo4j.errors import (
    ConfigurationError,
    InputError,
    ProviderError,
    ProviderResponseError,
    ProviderTimeout,
    RateLimitError,
)
from kgrag_neo4j.protocols import ChatProvider, EmbeddingProvider, Reranker
from kgrag_neo4j.providers import CohereChat, CohereEmbedder, CohereReranker
from kgrag_neo4j.providers.cohere import backoff_delay, resolve_embed_dimensions
from kgrag_neo4j.types import ComponentScores, RetrievalResult

ROOT = Path(__file__).resolve().parents[1]
SECRET = "sk-live-DO-NOT-LEAK-123456"


class FakeCohere:
    """Stands in for the Cohere API at the HTTP level. Queued answers for a path are used
    first (a Response, an exception to raise, or a function of the request); then
    ``always[path]`` if set; then a well-formed default answer."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any], httpx.Headers]] = []
        self.queued: dict[str, list[Any]] = {}
        self.always: dict[str, Any] = {}
        self.chat_text = '{"ok": true}'
        self.rerank_scores: list[float] | None = None

    def queue(self, path: str, *answers: Any) -> None:
        self.queued.setdefault(path, []).extend(answers)

    def bodies(self, path: str) -> list[dict[str, Any]]:
        return [body for p, body, _ in self.requests if p == path]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path, body = request.url.path, json.loads(request.content)
        self.requests.append((path, body, request.headers))
        answer = self.queued[path].pop(0) if self.queued.get(path) else self.always.get(path)
        if isinstance(answer, Exception):
            raise answer
        if callable(answer):
            return answer(request)
        if answer is not None:
            return answer
        return getattr(self, "_" + path.rsplit("/", 1)[-1])(body)

    def _embed(self, body: dict[str, Any]) -> httpx.Response:
        dims = body.get("output_dimension") or (384 if "light" in body["model"] else 1024)
        # The first component encodes the text, so tests can check order across batches.
        vectors = [[_text_number(text)] + [0.5] * (dims - 1) for text in body["texts"]]
        return httpx.Response(
            200,
            json={
                "id": "emb-1",
                "embeddings": {"float": vectors},
                "texts": body["texts"],
                "meta": {"api_version": {"version": "2"}, "billed_units": {"input_tokens": len(body["texts"])}},
                "response_type": "embeddings_by_type",
            },
        )

    def _chat(self, body: dict[str, Any]) -> httpx.Response:
        return httpx.Response(
            200,
            json={
                "id": "chat-1",
                "finish_reason": "COMPLETE",
                "message": {"role": "assistant", "content": [{"type": "text", "text": self.chat_text}]},
                "usage": {
                    "billed_units": {"input_tokens": 12, "output_tokens": 4},
                    "tokens": {"input_tokens": 80, "output_tokens": 4},
                },
            },
        )

    def _rerank(self, body: dict[str, Any]) -> httpx.Response:
        docs = body["documents"]
        if self.rerank_scores is not None:
            scores = self.rerank_scores
        else:
            words = set(body["query"].lower().split())
            scores = [len(words & set(d.lower().split())) / (len(words) or 1) for d in docs]
        order = sorted(range(len(docs)), key=lambda i: -scores[i])[: body.get("top_n", len(docs))]
        return httpx.Response(
            200,
            json={
                "id": "rr-1",
                "results": [{"index": i, "relevance_score": scores[i]} for i in order],
                "meta": {"api_version": {"version": "2"}, "billed_units": {"search_units": 1}},
            },
        )


def _text_number(text: str) -> float:
    digits = text.lstrip("t")
    return float(digits) if digits.isdigit() else float(len(text))


def error(status: int, message: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json={"id": "err-1", "message": message}, headers=headers)


@pytest.fixture
def fake() -> FakeCohere:
    return FakeCohere()


@pytest.fixture
def client(fake):
    # The real SDK, left at its default max_retries (2): our providers must switch them off.
    with httpx.Client(transport=httpx.MockTransport(fake)) as http:
        yield cohere.ClientV2(api_key="test-key", httpx_client=http)


@pytest.fixture
def sleeps() -> list[float]:
    return []


def embedder(client, sleeps, **options) -> CohereEmbedder:
    return CohereEmbedder(client=client, sleep=sleeps.append, **options)


def results(*contents: str) -> list[RetrievalResult]:
    return [
        RetrievalResult(id=f"c{i}", content=c, score=0.5 - i / 100, scores=ComponentScores(vector=0.5))
        for i, c in enumerate(contents)
    ]


# --- embed -------------------------------------------------------------------------------------


def test_embed_batches_beyond_96_texts_and_keeps_order(fake, client, sleeps):
    texts = [f"t{i}" for i in range(200)]
    vectors = embedder(client, sleeps, dimensions=256).embed(texts)
    assert [len(b["texts"]) for b in fake.bodies("/v2/embed")] == [96, 96, 8]
    assert [v[0] for v in vectors] == [float(i) for i in range(200)]
    assert all(len(v) == 256 for v in vectors)
    assert sleeps == []


def test_embed_batch_size_is_configurable_but_capped_at_cohere_limit(fake, client, sleeps):
    embedder(client, sleeps, batch_size=10).embed([f"t{i}" for i in range(25)])
    assert [len(b["texts"]) for b in fake.bodies("/v2/embed")] == [10, 10, 5]
    with pytest.raises(ConfigurationError, match="batch_size must be an integer from 1 to 96"):
        embedder(client, sleeps, batch_size=97)


@pytest.mark.parametrize("ours, wire", [("document", "search_document"), ("query", "search_query")])
def test_input_type_is_mapped_on_the_wire(fake, client, sleeps, ours, wire):
    embedder(client, sleeps).embed(["t1"], input_type=ours)
    (path, body, headers) = fake.requests[0]
    assert path == "/v2/embed"
    assert body["input_type"] == wire
    assert body["embedding_types"] == ["float"]
    assert body["model"] == "embed-v4.0"
    assert headers["authorization"] == "Bearer test-key"


def test_bad_input_type_is_refused_before_any_request(fake, client, sleeps):
    with pytest.raises(InputError, match="input_type"):
        embedder(client, sleeps).embed(["t1"], input_type="search_query")
    assert fake.requests == []


@pytest.mark.parametrize(
    "model, dimensions, expected_dims, wire_dimension",
    [
        ("embed-v4.0", None, 1024, 1024),
        ("embed-v4.0", 256, 256, 256),
        ("embed-v4.0", 1536, 1536, 1536),
        ("embed-english-v3.0", None, 1024, None),
        ("embed-multilingual-v3.0", 1024, 1024, None),
        ("embed-english-light-v3.0", None, 384, None),
        ("embed-multilingual-light-v3.0", None, 384, None),
    ],
)
def test_output_dimension_on_the_wire(fake, client, sleeps, model, dimensions, expected_dims, wire_dimension):
    e = embedder(client, sleeps, model=model, dimensions=dimensions)
    vectors = e.embed(["t1", "t2"])
    body = fake.bodies("/v2/embed")[0]
    assert body.get("output_dimension") == wire_dimension
    assert e.dimensions == expected_dims and e.name == f"cohere-{model}-{expected_dims}"
    assert [len(v) for v in vectors] == [expected_dims, expected_dims]


@pytest.mark.parametrize(
    "model, dimensions, message",
    [
        ("embed-v4.0", 300, "supports dimensions 256, 512, 1024, 1536"),
        ("embed-english-v3.0", 512, "always returns 1024"),
        ("embed-custom-x", None, "pass dimensions="),
        ("embed-v4.0", 0, "positive integer"),
    ],
)
def test_impossible_dimensions_are_configuration_errors(model, dimensions, message):
    with pytest.raises(ConfigurationError, match=message):
        resolve_embed_dimensions(model, dimensions)


def test_unknown_model_with_dimensions_sends_no_output_dimension(fake, client, sleeps):
    e = embedder(client, sleeps, model="embed-custom-x", dimensions=1024)
    e.embed(["t1"])
    assert "output_dimension" not in fake.bodies("/v2/embed")[0]
    assert isinstance(e, EmbeddingProvider)


# --- retries and error mapping -------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_a_transient_status_is_retried_then_succeeds(fake, client, sleeps, status):
    fake.queue("/v2/embed", error(status, "try later"))
    vectors = embedder(client, sleeps).embed(["t7"])
    assert vectors[0][0] == 7.0
    assert len(fake.bodies("/v2/embed")) == 2
    assert len(sleeps) == 1 and 0.25 <= sleeps[0] <= 0.5


def test_retry_after_is_honoured(fake, client, sleeps):
    fake.queue("/v2/embed", error(429, "slow down", headers={"Retry-After": "7"}))
    embedder(client, sleeps).embed(["t1"])
    assert sleeps == [7.0]


@pytest.mark.parametrize("status", [400, 403, 404, 422])
def test_other_client_errors_are_not_retried(fake, client, sleeps, status):
    fake.queue("/v2/embed", error(status, "invalid request: texts must not be empty"))
    with pytest.raises(ProviderError) as info:
        embedder(client, sleeps).embed(["t1"])
    assert type(info.value) is ProviderError
    assert f"HTTP {status}" in str(info.value) and "texts must not be empty" in str(info.value)
    assert len(fake.requests) == 1 and sleeps == []
    assert info.value.retryable is False
    assert isinstance(info.value.__cause__, cohere.core.api_error.ApiError)  # kept for debugging


def test_a_rejected_key_says_which_variable_to_check(fake, client, sleeps):
    fake.queue("/v2/embed", error(401, "invalid api token"))
    with pytest.raises(ProviderError, match="rejected the API key.*CO_API_KEY"):
        embedder(client, sleeps).embed(["t1"])
    assert len(fake.requests) == 1


def test_rate_limited_forever_ends_in_rate_limit_error_after_backoff(fake, client, sleeps):
    fake.always["/v2/embed"] = error(429, "too many requests")
    with pytest.raises(RateLimitError, match="after 4 attempts") as info:
        embedder(client, sleeps, max_retries=3).embed(["t1"])
    assert info.value.retryable is True
    assert len(fake.requests) == 4
    ceilings = [0.5, 1.0, 2.0]
    assert len(sleeps) == 3
    for slept, ceiling in zip(sleeps, ceilings):
        assert ceiling / 2 <= slept <= ceiling


def test_the_sdk_retries_are_off_even_on_a_client_the_caller_built(fake, client, sleeps):
    # The client fixture keeps the SDK default of 2 retries; with ours at 0 there is one call.
    fake.always["/v2/embed"] = error(500, "boom")
    with pytest.raises(ProviderError, match="HTTP 500 after 1 attempt") as info:
        embedder(client, sleeps, max_retries=0).embed(["t1"])
    assert info.value.retryable is True
    assert len(fake.requests) == 1


@pytest.mark.parametrize(
    "answer, message",
    [
        (httpx.Response(200, text="<html>gateway hiccup</html>"), "not the expected JSON"),
        (httpx.Response(200, json={"id": "x", "embeddings": {"int8": [[1, 2]]}}), "no float embeddings for 1 texts"),
        (httpx.Response(200, json={"id": "x", "embeddings": {"float": []}}), "0 float embeddings for 1 texts"),
        (httpx.Response(200, json={"id": "x", "embeddings": {"float": [[0.1, 0.2]]}}), "2 values, expected 1024"),
        (httpx.Response(200, json={"id": "x", "embeddings": {"float": [["a"] * 1024]}}), "expected 1024 numbers"),
    ],
)
def test_a_malformed_body_is_a_response_error_and_not_retried(fake, client, sleeps, answer, message):
    fake.queue("/v2/embed", answer)
    with pytest.raises(ProviderResponseError, match=message):
        embedder(client, sleeps).embed(["t1"])
    assert len(fake.requests) == 1 and sleeps == []


def test_timeouts_are_retried_then_reported(fake, client, sleeps):
    def timeout(request):
        raise httpx.ReadTimeout("read timed out", request=request)

    fake.always["/v2/embed"] = timeout
    with pytest.raises(ProviderTimeout, match=r"timed out \(limit 2 s\) after 3 attempts"):
        embedder(client, sleeps, max_retries=2, timeout=2).embed(["t1"])
    assert len(fake.requests) == 3 and len(sleeps) == 2


def test_a_timeout_then_success(fake, client, sleeps):
    def timeout(request):
        raise httpx.ReadTimeout("read timed out", request=request)

    fake.queue("/v2/embed", timeout)
    assert embedder(client, sleeps).embed(["t3"])[0][0] == 3.0
    assert len(fake.requests) == 2


def test_the_timeout_reaches_the_transport(client, sleeps):
    seen = []

    def handler(request):
        seen.append(request.extensions["timeout"])
        return FakeCohere()(request)

    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        e = CohereEmbedder(client=cohere.ClientV2(api_key="k", httpx_client=http), timeout=4.5, sleep=sleeps.append)
        e.embed(["t1"])
    assert seen and all(value == 4.5 for value in seen[0].values())


def test_connection_failures_are_retried(fake, client, sleeps):
    def refused(request):
        raise httpx.ConnectError("connection refused", request=request)

    fake.always["/v2/embed"] = refused
    with pytest.raises(ProviderError, match="could not reach the Cohere API after 2 attempts") as info:
        embedder(client, sleeps, max_retries=1).embed(["t1"])
    assert info.value.retryable is True and len(fake.requests) == 2


@pytest.mark.parametrize(
    "attempt, jitter, expected",
    [(0, 0.0, 0.25), (0, 1.0, 0.5), (1, 0.5, 0.75), (3, 0.0, 2.0), (10, 0.0, 10.0), (10, 1.0, 20.0)],
)
def test_backoff_delay(attempt, jitter, expected):
    assert backoff_delay(attempt, jitter=jitter) == pytest.approx(expected)


# --- configuration, keys, imports ------------------------------------------------------------------


@pytest.mark.parametrize("cls", [CohereEmbedder, CohereChat, CohereReranker])
def test_no_key_anywhere_says_which_variable_to_set(monkeypatch, cls):
    monkeypatch.delenv("CO_API_KEY", raising=False)
    monkeypatch.delenv("COHERE_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="set the CO_API_KEY environment variable"):
        cls()


@pytest.mark.parametrize("variable", ["CO_API_KEY", "COHERE_API_KEY"])
def test_the_key_comes_from_either_variable(monkeypatch, variable):
    monkeypatch.delenv("CO_API_KEY", raising=False)
    monkeypatch.delenv("COHERE_API_KEY", raising=False)
    monkeypatch.setenv(variable, SECRET)
    e = CohereEmbedder()
    assert isinstance(e._client, cohere.ClientV2)
    assert SECRET not in repr(e) and SECRET not in repr(vars(e))


@pytest.mark.parametrize("cls", [CohereEmbedder, CohereChat, CohereReranker])
def test_the_key_never_appears_in_repr_or_errors(fake, sleeps, cls):
    fake.always["/v2/embed"] = fake.always["/v2/chat"] = fake.always["/v2/rerank"] = error(
        400, f"invalid request for token {SECRET}"
    )
    with httpx.Client(transport=httpx.MockTransport(fake)) as http:
        provider = cls(api_key=SECRET, client=cohere.ClientV2(api_key=SECRET, httpx_client=http), sleep=sleeps.append)
        assert SECRET not in repr(provider) and SECRET not in str(vars(provider))
        with pytest.raises(ProviderError) as info:
            if cls is CohereEmbedder:
                provider.embed(["t1"])
            elif cls is CohereChat:
                provider.chat([{"role": "user", "content": "hi"}])
            else:
                provider.rerank("q", results("a"), 1)
    assert SECRET not in str(info.value) and "<secret>" in str(info.value)
    assert info.value.__cause__ is None  # the SDK error echoing the key is not chained


@pytest.mark.parametrize("cls", [CohereEmbedder, CohereChat, CohereReranker])
def test_without_the_package_the_error_is_the_install_line(monkeypatch, cls):
    monkeypatch.setitem(sys.modules, "cohere", None)
    with pytest.raises(ConfigurationError, match=re.escape('pip install "kgrag-neo4j[cohere]"')):
        cls(api_key="k")


def test_auto_selection_with_a_key_but_no_package_is_an_error_not_a_fallback(monkeypatch):
    from kgrag_neo4j.providers import select_embedder

    monkeypatch.setitem(sys.modules, "cohere", None)
    with pytest.raises(ConfigurationError, match=re.escape("kgrag-neo4j[cohere]")):
        select_embedder(env={"CO_API_KEY": "k"})


@pytest.mark.parametrize(
    "option, value", [("timeout", 0), ("timeout", -1), ("max_retries", -1), ("max_retries", 1.5), ("model", "")]
)
def test_bad_options_are_configuration_errors(client, option, value):
    with pytest.raises(ConfigurationError, match=option):
        CohereEmbedder(**({"model": "embed-v4.0", "client": client} | {option: value}))


def test_importing_the_providers_package_imports_no_vendor_sdk():
    code = textwrap.dedent(
        """
        import sys
        import kgrag_neo4j.providers
        import kgrag_neo4j.providers.select
        import kgrag_neo4j.retrieval.rerank
        heavy = [m for m in ("cohere", "wordllama", "sentence_transformers", "torch") if m in sys.modules]
        print(",".join(heavy) or "none")
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "none"


# --- chat ----------------------------------------------------------------------------------------


def test_chat_sends_messages_and_returns_the_text(fake, client, sleeps):
    fake.chat_text = "Neo4j is a graph database."
    chat = CohereChat(client=client, sleep=sleeps.append)
    reply = chat.chat([{"role": "system", "content": "be brief"}, {"role": "user", "content": "what is neo4j?"}])
    assert reply == "Neo4j is a graph database."
    body = fake.bodies("/v2/chat")[0]
    assert body["model"] == "command-a-03-2025"
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "what is neo4j?"},
    ]
    assert "response_format" not in body and body["stream"] is False
    assert isinstance(chat, ChatProvider)


def test_chat_with_a_schema_asks_for_json(fake, client, sleeps):
    schema = {
        "type": "object",
        "properties": {"scores": {"type": "array", "items": {"type": "number"}}},
        "required": ["scores"],
    }
    fake.chat_text = '{"scores": [3, 9]}'
    reply = CohereChat(client=client, sleep=sleeps.append, temperature=0.0).chat(
        [{"role": "user", "content": "rate"}], json_schema=schema
    )
    assert json.loads(reply) == {"scores": [3, 9]}
    body = fake.bodies("/v2/chat")[0]
    assert body["response_format"] == {"type": "json_object", "json_schema": schema}
    assert body["temperature"] == 0.0


def test_chat_joins_text_parts_and_skips_others(fake, client, sleeps):
    fake.queue(
        "/v2/chat",
        httpx.Response(
            200,
            json={
                "id": "c",
                "finish_reason": "COMPLETE",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hmm"},
                        {"type": "text", "text": "a"},
                        {"type": "text", "text": "b"},
                    ],
                },
            },
        ),
    )
    assert CohereChat(client=client, sleep=sleeps.append).chat([{"role": "user", "content": "x"}]) == "ab"


def test_chat_without_text_is_a_response_error(fake, client, sleeps):
    fake.queue(
        "/v2/chat",
        httpx.Response(200, json={"id": "c", "finish_reason": "MAX_TOKENS", "message": {"role": "assistant", "content": []}}),
    )
    with pytest.raises(ProviderResponseError, match="no text content.*MAX_TOKENS"):
        CohereChat(client=client, sleep=sleeps.append).chat([{"role": "user", "content": "x"}])


def test_chat_is_retried_like_the_rest(fake, client, sleeps):
    fake.queue("/v2/chat", error(503, "overloaded"), error(429, "slow"))
    assert CohereChat(client=client, sleep=sleeps.append).chat([{"role": "user", "content": "x"}]) == fake.chat_text
    assert len(fake.bodies("/v2/chat")) == 3 and len(sleeps) == 2


@pytest.mark.parametrize(
    "messages, message",
    [
        ([], "at least one message"),
        ([{"role": "robot", "content": "x"}], "role 'robot'"),
        ([{"role": "user", "content": 3}], "content must be a string"),
        (["hello"], "must be a mapping"),
    ],
)
def test_bad_messages_are_input_errors(fake, client, sleeps, messages, message):
    with pytest.raises(InputError, match=message):
        CohereChat(client=client, sleep=sleeps.append).chat(messages)
    assert fake.requests == []


# --- rerank --------------------------------------------------------------------------------------


def test_rerank_orders_by_relevance_and_records_the_score(fake, client, sleeps):
    fake.rerank_scores = [0.1, 0.9, 0.5]
    incoming = results("about cats", "about neo4j indexes", "about graphs")
    reranker = CohereReranker(client=client, sleep=sleeps.append)
    out = reranker.rerank("neo4j", incoming, 2)
    assert [r.id for r in out] == ["c1", "c2"]
    assert [r.score for r in out] == [0.9, 0.5]
    assert [r.scores.rerank for r in out] == [0.9, 0.5]
    assert out[0].scores.vector == 0.5 and "rerank-v3.5" in out[0].explanation[-1]
    assert [r.score for r in incoming] == [0.5, 0.49, 0.48] and incoming[1].scores.rerank is None
    body = fake.bodies("/v2/rerank")[0]
    assert body == {"model": "rerank-v3.5", "query": "neo4j", "documents": [r.content for r in incoming], "top_n": 2}
    assert isinstance(reranker, Reranker)


def test_rerank_asks_for_no_more_than_it_has(fake, client, sleeps):
    out = CohereReranker(client=client, sleep=sleeps.append).rerank("graph", results("graph a", "b"), 10)
    assert fake.bodies("/v2/rerank")[0]["top_n"] == 2
    assert [r.id for r in out] == ["c0", "c1"]


def test_rerank_of_nothing_makes_no_call(fake, client, sleeps):
    assert CohereReranker(client=client, sleep=sleeps.append).rerank("q", [], 5) == []
    assert fake.requests == []


@pytest.mark.parametrize(
    "payload, message",
    [
        ({"results": [{"index": 5, "relevance_score": 0.5}]}, "index 5 for 2 documents"),
        ({"results": [{"index": 0, "relevance_score": 0.5}, {"index": 0, "relevance_score": 0.4}]}, "index 0"),
        ({"results": [{"index": 0, "relevance_score": "high"}]}, "relevance_score 'high'"),
        ({"results": []}, "0 results where 1 were asked"),
        ({"id": "x"}, "no results where 1 were asked"),
    ],
)
def test_rerank_malformed_answers_are_response_errors(fake, client, sleeps, payload, message):
    fake.queue("/v2/rerank", httpx.Response(200, json=payload))
    top_k = 2 if len(payload.get("results", [])) == 2 else 1
    with pytest.raises(ProviderResponseError, match=message):
        CohereReranker(client=client, sleep=sleeps.append).rerank("q", results("a", "b"), top_k)


@pytest.mark.parametrize("query, top_k, message", [("", 3, "non-empty query"), ("q", 0, "top_k"), ("q", True, "top_k")])
def test_rerank_bad_arguments_are_input_errors(client, query, top_k, message):
    with pytest.raises(InputError, match=message):
        CohereReranker(client=client).rerank(query, results("a"), top_k)
