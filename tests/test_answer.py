"""answer(): the prompt, the citations, streaming, and the chat model selection; the chat
model is the real OpenAIChat against the fake OpenAI wire format."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from kgrag_neo4j.errors import ConfigurationError, InputError
from kgrag_neo4j.providers.openai import OpenAIChat
from kgrag_neo4j.providers.select import select_chat
from kgrag_neo4j.retrieval.answer import NOTHING_FOUND, Answer, AnswerStream, aanswer, answer, cited_numbers
from kgrag_neo4j.types import EdgeContext, RetrievalResult

from .openai_fake import FakeOpenAI


class ListRetriever:
    def __init__(self, results):
        self.results = results
        self.calls = []

    def retrieve(self, query, top_k=5):
        self.calls.append((query, top_k))
        return self.results[:top_k]


RESULTS = [
    RetrievalResult(
        id="c1",
        content="Vector indexes are created with CREATE VECTOR INDEX.",
        score=0.9,
        document_id="d1",
        source="docs/indexes.md",
        title="Indexes",
    ),
    RetrievalResult(
        id="c2",
        content="Full-text indexes use Lucene.",
        score=0.5,
        document_id="d1",
        source="docs/indexes.md",
        title="Indexes",
        graph_context=[EdgeContext("c1", "sequence", "next paragraph", 1, 1.0)],
    ),
    RetrievalResult(id="c3", content="Cats purr.", score=0.1, document_id="d2", source="cats.md"),
]


@pytest.fixture
def fake():
    return FakeOpenAI()


@pytest.fixture
def chat(fake):
    with httpx.Client(transport=httpx.MockTransport(fake)) as http:
        yield OpenAIChat("gpt-test", api_key="k", http_client=http, env={})


def test_answer_prompts_with_numbered_passages_and_marks_what_it_cites(fake, chat):
    fake.chat_text = "Use CREATE VECTOR INDEX [1]; keyword search is Lucene [2, 1]. Not [9]."
    retriever = ListRetriever(RESULTS)
    result = answer("How are indexes created?", retriever=retriever, chat=chat, top_k=3)
    assert isinstance(result, Answer) and retriever.calls == [("How are indexes created?", 3)]
    assert result.text == fake.chat_text and result.model == "gpt-test"
    assert [(c.number, c.chunk_id, c.cited) for c in result.citations] == [(1, "c1", True), (2, "c2", True), (3, "c3", False)]
    assert [c.source for c in result.cited] == ["docs/indexes.md", "docs/indexes.md"]
    system, user = fake.bodies("/v1/chat/completions")[0]["messages"]
    assert "Cite every passage" in system["content"]
    assert "[1] (Indexes - docs/indexes.md)\nVector indexes are created" in user["content"]
    assert '(reached from [1] through a sequence link: "next paragraph")' in user["content"]
    assert user["content"].endswith("Question: How are indexes created?")
    data = result.to_json()
    assert data["citations"][0] == {
        "number": 1,
        "chunk_id": "c1",
        "document_id": "d1",
        "source": "docs/indexes.md",
        "title": "Indexes",
        "score": 0.9,
        "cited": True,
    }
    assert [r["id"] for r in data["results"]] == ["c1", "c2", "c3"]


def test_answer_streams_and_marks_citations_at_the_end(fake, chat):
    fake.stream_pieces = ["Lucene ", "serves ", "keywords [2]."]
    streamed = answer("keyword search?", retriever=ListRetriever(RESULTS), chat=chat, stream=True)
    assert isinstance(streamed, AnswerStream) and len(streamed.citations) == 3
    assert list(streamed) == ["Lucene ", "serves ", "keywords [2]."]
    assert streamed.answer.text == "Lucene serves keywords [2]." and [c.number for c in streamed.answer.cited] == [2]
    assert fake.bodies("/v1/chat/completions")[0]["stream"] is True


def test_a_chat_model_without_streaming_streams_its_whole_reply():
    class Plain:
        model = "plain"

        def chat(self, messages, *, json_schema=None):
            return "All at once [1]."

    streamed = answer("q", retriever=ListRetriever(RESULTS), chat=Plain(), stream=True)
    assert list(streamed) == ["All at once [1]."] and streamed.answer.cited[0].chunk_id == "c1"


def test_nothing_retrieved_means_no_model_call(fake, chat):
    result = answer("unknown?", retriever=ListRetriever([]), chat=chat)
    assert result.text == NOTHING_FOUND and result.citations == [] and fake.requests == []


def test_async_answer(fake, chat):
    fake.chat_text = "Async [1]."
    result = asyncio.run(aanswer("q", retriever=ListRetriever(RESULTS), chat=chat, top_k=1))
    assert result.text == "Async [1]." and [c.chunk_id for c in result.cited] == ["c1"]


def test_bad_calls_are_refused_with_one_clear_line(chat):
    with pytest.raises(ConfigurationError, match="no chat model configured.*OPENAI_BASE_URL"):
        answer("q", retriever=ListRetriever(RESULTS), chat=None)
    with pytest.raises(InputError, match="question"):
        answer("  ", retriever=ListRetriever(RESULTS), chat=chat)
    with pytest.raises(ConfigurationError, match="retrieve"):
        answer("q", retriever=object(), chat=chat)


def test_cited_numbers_reads_the_usual_forms():
    assert cited_numbers("a [1] b [2][3] c [4, 5] d [6;1] e [0] f [12]", 6) == {1, 2, 3, 4, 5, 6}


def test_select_chat_follows_the_environment():
    assert type(select_chat(env={"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"})).__name__ == "OpenAIChat"
    assert type(select_chat(env={"CO_API_KEY": "k", "OPENAI_API_KEY": "o"})).__name__ == "CohereChat"
    assert type(select_chat("openai", env={"CO_API_KEY": "k", "OPENAI_API_KEY": "o"})).__name__ == "OpenAIChat"
    with pytest.raises(ConfigurationError, match="no chat model configured"):
        select_chat(env={})
    with pytest.raises(ConfigurationError, match="cohere, openai"):
        select_chat("claude", env={})
