"""The OpenAI-compatible providers, run through the real ``openai`` SDK against a fake HTTP
transport that answers in the OpenAI wire format (/v1/chat/completions, including the
server-sent-events stream, and /v1/embeddings)."""

from __future__ import annotations

import json
import subprocess
import sys

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
from kgrag_neo4j.protocols import ChatProvider, EmbeddingProvider
from kgrag_neo4j.providers.openai import OpenAIChat, OpenAIEmbedder, openai_configured

from .openai_fake import FakeOpenAI, error

SECRET = "sk-proj-DO-NOT-LEAK-987654"
LOCAL = "http://127.0.0.1:11434/v1"


@pytest.fixture
def fake() -> FakeOpenAI:
    return FakeOpenAI()


@pytest.fixture
def http(fake):
    with httpx.Client(transport=httpx.MockTransport(fake)) as client:
        yield client


@pytest.fixture
def sleeps() -> list[float]:
    return []


def chat(http, sleeps, **options) -> OpenAIChat:
    options.setdefault("api_key", "test-key")
    return OpenAIChat(http_client=http, sleep=sleeps.append, env={}, **options)


def embedder(http, sleeps, **options) -> OpenAIEmbedder:
    options.setdefault("api_key", "test-key")
    return OpenAIEmbedder(http_client=http, sleep=sleeps.append, env={}, **options)


# --- embeddings ----------------------------------------------------------------------------------


def test_embed_batches_keep_input_order_even_when_the_server_reorders(fake, http, sleeps):
    fake.reverse_embeddings = True
    texts = ["a" * (i + 1) for i in range(7)]
    vectors = embedder(http, sleeps, batch_size=3, dimensions=256).embed(texts)
    bodies = fake.bodies("/v1/embeddings")
    assert [len(b["input"]) for b in bodies] == [3, 3, 1]
    assert [v[0] for v in vectors] == [float(i + 1) for i in range(7)]
    assert all(len(v) == 256 for v in vectors)
    assert bodies[0]["model"] == "text-embedding-3-small"
    assert bodies[0]["encoding_format"] == "float" and bodies[0]["dimensions"] == 256
    assert fake.requests[0].headers["authorization"] == "Bearer test-key"
    assert sleeps == []


def test_known_model_sizes_and_names(http, sleeps):
    small = embedder(http, sleeps)
    large = embedder(http, sleeps, model="text-embedding-3-large")
    assert (small.dimensions, small.name) == (1536, "openai-text-embedding-3-small-1536")
    assert large.dimensions == 3072
    assert isinstance(small, EmbeddingProvider)
    with pytest.raises(ConfigurationError, match="1536 dimensions"):
        embedder(http, sleeps, model="text-embedding-ada-002", dimensions=512)
    with pytest.raises(ConfigurationError, match="at most"):
        embedder(http, sleeps, dimensions=4096)


def test_a_local_model_needs_its_size_and_is_never_sent_dimensions(fake, http, sleeps):
    with pytest.raises(ConfigurationError, match="OPENAI_EMBEDDING_DIMENSIONS"):
        OpenAIEmbedder("nomic-embed-text", base_url=LOCAL, http_client=http, env={})
    e = OpenAIEmbedder(
        http_client=http, sleep=sleeps.append,
        env={"OPENAI_BASE_URL": LOCAL, "OPENAI_EMBEDDING_MODEL": "nomic-embed-text", "OPENAI_EMBEDDING_DIMENSIONS": "768"},
        query_prefix="search_query: ", document_prefix="search_document: ",
    )  # fmt: skip
    assert e.dimensions == 768 and e.name == "openai-nomic-embed-text-768"
    e.embed(["which index?"], input_type="query")
    e.embed(["a document"])
    request = fake.requests[0]
    assert str(request.url) == LOCAL + "/embeddings"
    # no key configured: the SDK still sends one, a placeholder a local server ignores
    assert request.headers["authorization"] == "Bearer not-needed"
    first, second = fake.bodies("/v1/embeddings")
    assert "dimensions" not in first
    assert first["input"] == ["search_query: which index?"] and second["input"] == ["search_document: a document"]
    assert "OpenAI-compatible API at http://127.0.0.1:11434/v1" in e.description


def test_an_answer_of_the_wrong_size_is_refused(fake, http, sleeps):
    fake.queue(
        "/v1/embeddings",
        httpx.Response(200, json={"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [0.1, 0.2]}],
                                  "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1}}),
    )  # fmt: skip
    with pytest.raises(ProviderResponseError, match="2 values, expected 1536"):
        embedder(http, sleeps).embed(["x"])


def test_bad_input_is_refused_before_any_request(fake, http, sleeps):
    e = embedder(http, sleeps)
    with pytest.raises(InputError, match="input_type"):
        e.embed(["x"], input_type="search_query")
    with pytest.raises(InputError, match="single string"):
        e.embed("x")
    assert fake.requests == []


# --- configuration -------------------------------------------------------------------------------


def test_no_key_and_no_server_says_how_to_configure(http):
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY.*OPENAI_BASE_URL"):
        OpenAIChat(http_client=http, env={})
    assert not openai_configured({})
    assert openai_configured({"OPENAI_BASE_URL": LOCAL}) and openai_configured({"OPENAI_API_KEY": "k"})


def test_environment_names_the_server_key_and_model(fake, http, sleeps):
    env = {"OPENAI_API_KEY": SECRET, "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1", "OPENAI_MODEL": "qwen2.5-7b"}
    c = OpenAIChat(http_client=http, sleep=sleeps.append, env=env)
    assert c.chat([{"role": "user", "content": "hi"}]) == '{"ok": true}'
    request = fake.requests[0]
    assert str(request.url) == "http://127.0.0.1:8000/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert json.loads(request.content)["model"] == "qwen2.5-7b"
    assert SECRET not in repr(c) and SECRET not in repr(vars(c))


def test_a_client_the_caller_built_is_used_with_our_retries_only(fake, http, sleeps):
    import openai

    theirs = openai.OpenAI(api_key="theirs", base_url=LOCAL, http_client=http, max_retries=5)
    c = OpenAIChat("llama3.1", client=theirs, sleep=sleeps.append, max_retries=1, env={})
    fake.queue("/v1/chat/completions", error(503, "busy"), error(503, "busy"))
    with pytest.raises(ProviderError, match="HTTP 503 after 2 attempts"):
        c.chat([{"role": "user", "content": "hi"}])
    assert len(fake.requests) == 2


# --- retries and errors --------------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_a_transient_status_is_retried_then_succeeds(fake, http, sleeps, status):
    fake.queue("/v1/embeddings", error(status, "try later"))
    vectors = embedder(http, sleeps).embed(["abc"])
    assert vectors[0][0] == 3.0
    assert len(fake.bodies("/v1/embeddings")) == 2
    assert len(sleeps) == 1 and 0.25 <= sleeps[0] <= 0.5


def test_retry_after_is_honoured_and_429_ends_as_rate_limit(fake, http, sleeps):
    fake.queue("/v1/chat/completions", *[error(429, "slow down", {"retry-after": "3"})] * 3)
    with pytest.raises(RateLimitError, match="after 3 attempts: slow down"):
        chat(http, sleeps, max_retries=2).chat([{"role": "user", "content": "hi"}])
    assert sleeps == [3.0, 3.0]


@pytest.mark.parametrize("status", [400, 403, 404, 422])
def test_other_client_errors_are_not_retried(fake, http, sleeps, status):
    fake.queue("/v1/embeddings", error(status, "model not found"))
    with pytest.raises(ProviderError, match=f"HTTP {status}: model not found") as info:
        embedder(http, sleeps).embed(["x"])
    assert type(info.value) is ProviderError and not info.value.retryable
    assert len(fake.requests) == 1 and sleeps == []


def test_a_rejected_key_names_the_variable_and_never_shows_the_key(fake, http, sleeps):
    fake.queue("/v1/chat/completions", error(401, f"Incorrect API key provided: {SECRET}"))
    with pytest.raises(ProviderError) as info:
        chat(http, sleeps, api_key=SECRET).chat([{"role": "user", "content": "hi"}])
    text = str(info.value)
    assert "OPENAI_API_KEY" in text and SECRET not in text and "<secret>" in text
    assert info.value.__cause__ is None  # the SDK error echoed the key: not chained


def test_timeouts_and_dead_servers_are_retried_then_named(fake, http, sleeps):
    fake.queue("/v1/embeddings", *[httpx.ReadTimeout("slow")] * 3)
    with pytest.raises(ProviderTimeout, match="timed out"):
        embedder(http, sleeps, max_retries=2).embed(["x"])
    fake.queue("/v1/embeddings", httpx.ConnectError("refused"), httpx.ConnectError("refused"))
    with pytest.raises(ProviderError, match="could not reach") as info:
        embedder(http, sleeps, max_retries=1).embed(["x"])
    assert info.value.retryable


def test_a_reply_without_choices_is_a_response_error(fake, http, sleeps):
    fake.queue(
        "/v1/chat/completions",
        httpx.Response(200, json={"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": []}),
    )
    with pytest.raises(ProviderResponseError, match="no choices"):
        chat(http, sleeps).chat([{"role": "user", "content": "hi"}])


# --- chat ----------------------------------------------------------------------------------------


def test_chat_sends_messages_and_options_and_returns_the_text(fake, http, sleeps):
    fake.chat_text = "Hello."
    c = chat(http, sleeps, model="gpt-4o", temperature=0.0, max_tokens=50)
    assert isinstance(c, ChatProvider)
    assert c.chat([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]) == "Hello."
    body = fake.bodies("/v1/chat/completions")[0]
    assert body["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert body["model"] == "gpt-4o" and body["temperature"] == 0.0
    assert body["max_completion_tokens"] == 50 and "response_format" not in body
    with pytest.raises(InputError, match="role"):
        c.chat([{"role": "tool", "content": "x"}])


def test_json_schema_is_asked_for_and_a_server_without_it_is_asked_again_more_simply(fake, http, sleeps):
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    c = chat(http, sleeps, base_url=LOCAL)
    assert json.loads(c.chat([{"role": "user", "content": "json please"}], json_schema=schema)) == {"ok": True}
    first = fake.bodies("/v1/chat/completions")[0]["response_format"]
    assert first == {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": False}}

    fake.queue("/v1/chat/completions", error(400, "response_format json_schema is not supported"))
    assert c.chat([{"role": "user", "content": "json please"}], json_schema=schema) == '{"ok": true}'
    formats = [b.get("response_format") for b in fake.bodies("/v1/chat/completions")]
    assert formats[1:] == [first, {"type": "json_object"}]
    assert c.json_mode == "json_object"  # remembered: the next call starts there
    fake.queue("/v1/chat/completions", error(422, "response_format is not supported"))
    c.chat([{"role": "user", "content": "json please"}], json_schema=schema)
    assert "response_format" not in fake.bodies("/v1/chat/completions")[-1] and c.json_mode == "none"
    fake.queue("/v1/chat/completions", error(400, "bad request"))
    with pytest.raises(ProviderError, match="HTTP 400"):
        c.chat([{"role": "user", "content": "json please"}], json_schema=schema)


def test_chat_stream_yields_the_server_sent_pieces(fake, http, sleeps):
    c = chat(http, sleeps)
    pieces = list(c.chat_stream([{"role": "user", "content": "what is neo4j?"}]))
    assert pieces == ["Neo4j ", "stores ", "graphs [1]."]
    body = fake.bodies("/v1/chat/completions")[0]
    assert body["stream"] is True
    assert fake.requests[0].headers["accept"] != "" and body["messages"][0]["content"] == "what is neo4j?"


def test_chat_stream_opening_is_retried_but_a_broken_stream_raises(fake, http, sleeps):
    fake.queue("/v1/chat/completions", error(503, "warming up"))
    assert "".join(chat(http, sleeps).chat_stream([{"role": "user", "content": "q"}])) == "Neo4j stores graphs [1]."
    assert len(sleeps) == 1

    def broken(request: httpx.Request) -> httpx.Response:
        first = {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": "part"}, "finish_reason": None}],
        }
        body = f"data: {json.dumps(first)}\n\ndata: {json.dumps({'error': {'message': 'overloaded'}})}\n\n"
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())

    fake.queue("/v1/chat/completions", broken)
    got: list[str] = []
    with pytest.raises(ProviderError, match="overloaded"):
        for piece in chat(http, sleeps).chat_stream([{"role": "user", "content": "q"}]):
            got.append(piece)
    assert got == ["part"]


def test_entity_extraction_runs_on_the_openai_chat(fake, http, sleeps):
    from kgrag_neo4j.entities.extract_llm import LLMEntityExtractor
    from kgrag_neo4j.types import Chunk

    fake.chat_text = json.dumps(
        {
            "entities": [
                {"name": "Ada Lovelace", "type": "PERSON", "description": "mathematician", "chunk_ids": ["c1"]},
                {"name": "Analytical Engine", "type": "CONCEPT", "description": "a machine", "chunk_ids": ["c1"]},
            ],
            "relationships": [{"source": "Ada Lovelace", "target": "Analytical Engine", "type": "WROTE_ABOUT", "strength": 0.9}],
        }
    )
    result = LLMEntityExtractor(chat(http, sleeps)).extract(
        [Chunk(id="c1", document_id="d", content="Ada Lovelace wrote about the Analytical Engine.")]
    )
    assert sorted(e.name for e in result.entities) == ["Ada Lovelace", "Analytical Engine"]
    assert [r.type for r in result.relations] == ["WROTE_ABOUT"]
    assert fake.bodies("/v1/chat/completions")[0]["response_format"]["type"] == "json_schema"


def test_importing_the_module_does_not_import_the_sdk():
    code = "import sys, kgrag_neo4j.providers.openai, kgrag_neo4j; print('openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
