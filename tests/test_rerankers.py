"""ScoreReranker, LLMReranker (with a scripted chat model, and with CohereChat through the real
SDK on a fake transport) and choosing a reranker by name (providers.select)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import cohere
import httpx
import pytest

from kgrag_neo4j.errors import ConfigurationError, InputError, ProviderError, ProviderResponseError
from kgrag_neo4j.protocols import Reranker
from kgrag_neo4j.providers import CohereChat
from kgrag_neo4j.retrieval import LLMReranker, ScoreReranker
from kgrag_neo4j.retrieval import rerank as rerank_module
from kgrag_neo4j.retrieval.rerank import RATINGS_SCHEMA, parse_ratings
from kgrag_neo4j.types import ComponentScores, RetrievalResult


def make(scores: Sequence[float]) -> list[RetrievalResult]:
    return [
        RetrievalResult(id=f"r{i}", content=f"passage {i}", score=s, scores=ComponentScores(fused=s))
        for i, s in enumerate(scores)
    ]


def ids(results: Sequence[RetrievalResult]) -> list[str]:
    return [r.id for r in results]


# --- ScoreReranker -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "scores, min_score, top_k, expected",
    [
        ([0.3, 0.9, 0.5], 0.0, 10, ["r1", "r2", "r0"]),
        ([0.3, 0.9, 0.5], 0.4, 10, ["r1", "r2"]),
        ([0.3, 0.9, 0.5], 0.5, 10, ["r1", "r2"]),  # the threshold itself is kept
        ([0.3, 0.9, 0.5], 0.95, 10, []),
        ([0.3, 0.9, 0.5], 0.0, 1, ["r1"]),
        ([0.5, 0.7, 0.5, 0.5], 0.1, 3, ["r1", "r0", "r2"]),  # ties keep incoming order
        ([], 0.1, 5, []),
        ([-0.2, 0.1], -0.5, 5, ["r1", "r0"]),
    ],
)
def test_score_reranker(scores, min_score, top_k, expected):
    incoming = make(scores)
    out = ScoreReranker(min_score).rerank("q", incoming, top_k)
    assert ids(out) == expected
    assert ids(incoming) == [f"r{i}" for i in range(len(scores))]  # the input list is untouched


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "0.1", None, True])
def test_score_reranker_refuses_a_bad_threshold(bad):
    with pytest.raises(ConfigurationError, match="min_score"):
        ScoreReranker(bad)


@pytest.mark.parametrize("top_k", [0, -1, 2.0, None])
def test_rerankers_refuse_a_bad_top_k(top_k):
    with pytest.raises(InputError, match="top_k"):
        ScoreReranker(0.0).rerank("q", make([0.5]), top_k)
    with pytest.raises(InputError, match="top_k"):
        LLMReranker(ScriptedChat()).rerank("q", make([0.5]), top_k)


# --- parse_ratings -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected, ratings",
    [
        ('{"scores": [3, 9.5, 0]}', 3, [3.0, 9.5, 0.0]),
        ("[10, 1]", 2, [10.0, 1.0]),
        ('```json\n{"scores": [7]}\n```', 1, [7.0]),
        ("```\n[4, 5]\n```", 2, [4.0, 5.0]),
        ('  {"scores": [], "note": "none"}  ', 0, []),
        ('Here are the ratings: {"scores": [2, 8]} as asked.', 2, [2.0, 8.0]),
    ],
)
def test_parse_ratings_accepts(text, expected, ratings):
    assert parse_ratings(text, expected) == ratings


@pytest.mark.parametrize(
    "text, expected, reason",
    [
        ("seven", 1, "not JSON"),
        ('{"ratings": [1]}', 1, "has no 'scores'"),
        ('{"scores": "1,2"}', 2, "scores is '1,2': must be a list"),
        ('{"scores": [1, 2, 3]}', 2, "3 ratings for 2 passages"),
        ('{"scores": [11]}', 1, r"scores\[0\] is 11: must be a number in 0..10"),
        ('{"scores": [-1]}', 1, r"scores\[0\] is -1"),
        ('{"scores": [true]}', 1, r"scores\[0\] is True"),
        ('{"scores": ["8"]}', 1, r"scores\[0\] is '8'"),
        ('{"scores": [null]}', 1, r"scores\[0\] is None"),
        ('{"scores": [NaN]}', 1, r"scores\[0\] is nan"),
    ],
)
def test_parse_ratings_rejects(text, expected, reason):
    # the project's provider error, one line naming the place and the value
    with pytest.raises(ProviderResponseError, match=reason):
        parse_ratings(text, expected)


# --- LLMReranker with a scripted chat model ---------------------------------------------------------


class ScriptedChat:
    """A ChatProvider that answers from a list (an Exception in the list is raised)."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[list[Mapping[str, str]], Mapping[str, Any] | None]] = []

    def chat(self, messages, *, json_schema=None) -> str:
        self.calls.append((list(messages), json_schema))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def test_llm_reranker_reorders_by_rating_over_ten():
    incoming = make([0.9, 0.8, 0.7, 0.6])
    chat = ScriptedChat(json.dumps({"scores": [2, 9, 5, 9]}))
    out = LLMReranker(chat).rerank("what is a graph?", incoming, 3)
    assert ids(out) == ["r1", "r3", "r2"]
    assert [r.score for r in out] == [0.9, 0.9, 0.5]
    assert [r.scores.rerank for r in out] == [0.9, 0.9, 0.5]
    assert out[0].scores.fused == 0.8 and out[0].explanation == ["rerank: LLM rated 9/10"]
    assert [r.score for r in incoming] == [0.9, 0.8, 0.7, 0.6] and incoming[1].scores.rerank is None
    assert isinstance(LLMReranker(chat), Reranker)


def test_llm_reranker_prompt_carries_query_passages_and_schema():
    chat = ScriptedChat('{"scores": [1, 2]}')
    incoming = make([0.5, 0.4])
    incoming[1].content = "x" * 5000
    LLMReranker(chat, max_chars=100).rerank("graph databases", incoming, 2)
    ((messages, schema),) = chat.calls
    assert schema == RATINGS_SCHEMA
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert "Query: graph databases" in user and "[1] passage 0" in user and "[2] " + "x" * 100 + "\n" in user
    assert "x" * 101 not in user
    assert "exactly 2 scores" in user


def test_llm_reranker_sends_batches_and_merges_them():
    incoming = make([0.1] * 25)
    chat = ScriptedChat(
        json.dumps({"scores": [1] * 10}),
        json.dumps({"scores": [1] * 9 + [8]}),  # r19
        json.dumps({"scores": [3, 3, 3, 3, 10]}),  # r24
    )
    out = LLMReranker(chat, batch=10).rerank("q", incoming, 3)
    assert [m[1]["content"].count("\n[") for m, _ in chat.calls] == [10, 10, 5]
    assert ids(out) == ["r24", "r19", "r20"]


@pytest.mark.parametrize(
    "reply",
    [
        ProviderError("Cohere chat failed with HTTP 500"),
        RuntimeError("unexpected"),
        "I think passage 2 is best",
        '{"scores": [5]}',  # wrong count
        '{"scores": [5, 50, 1]}',  # out of range
        '{"ranking": [1, 2, 3]}',
    ],
)
def test_llm_reranker_passes_results_through_on_any_failure(reply, caplog):
    incoming = make([0.2, 0.9, 0.5])
    with caplog.at_level(logging.WARNING, logger="kgrag_neo4j.retrieval.rerank"):
        out = LLMReranker(ScriptedChat(reply)).rerank("q", incoming, 2)
    assert out == incoming[:2] and out[0] is incoming[0]
    assert all(r.scores.rerank is None for r in out)
    assert [rec.levelno for rec in caplog.records] == [logging.WARNING]
    assert "pass through unchanged" in caplog.records[0].getMessage()


def test_a_failure_in_a_later_batch_discards_the_earlier_ratings():
    incoming = make([0.3, 0.2, 0.1])
    chat = ScriptedChat('{"scores": [1, 10]}', "not json")
    out = LLMReranker(chat, batch=2).rerank("q", incoming, 3)
    assert out == incoming and len(chat.calls) == 2


def test_llm_reranker_of_nothing_asks_nothing():
    chat = ScriptedChat()
    assert LLMReranker(chat).rerank("q", [], 4) == [] and chat.calls == []


@pytest.mark.parametrize("options, message", [({"batch": 0}, "batch"), ({"max_chars": 0}, "max_chars")])
def test_llm_reranker_refuses_bad_options(options, message):
    with pytest.raises(ConfigurationError, match=message):
        LLMReranker(ScriptedChat(), **options)


def test_llm_reranker_needs_a_chat_provider():
    with pytest.raises(ConfigurationError, match="ChatProvider"):
        LLMReranker(object())


# --- LLMReranker over CohereChat through the real SDK --------------------------------------------


def cohere_chat_answer(text: str) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "id": "chat-1",
            "finish_reason": "COMPLETE",
            "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
            "usage": {
                "billed_units": {"input_tokens": 40, "output_tokens": 8},
                "tokens": {"input_tokens": 90, "output_tokens": 8},
            },
        },
    )


def test_llm_reranker_over_cohere_chat_end_to_end():
    bodies = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return cohere_chat_answer('{"scores": [1, 8]}')

    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        chat = CohereChat(client=cohere.ClientV2(api_key="test-key", httpx_client=http), sleep=lambda s: None)
        out = LLMReranker(chat).rerank("neo4j", make([0.9, 0.1]), 2)
    assert ids(out) == ["r1", "r0"] and [r.score for r in out] == [0.8, 0.1]
    assert bodies[0]["response_format"] == {"type": "json_object", "json_schema": RATINGS_SCHEMA}


def test_llm_reranker_over_cohere_chat_degrades_when_the_api_fails(caplog):
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json={"message": "model not found"})

    incoming = make([0.4, 0.6])
    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        chat = CohereChat(client=cohere.ClientV2(api_key="test-key", httpx_client=http), sleep=lambda s: None)
        with caplog.at_level(logging.WARNING, logger="kgrag_neo4j.retrieval.rerank"):
            out = LLMReranker(chat).rerank("q", incoming, 2)
    assert out == incoming
    assert "model not found" in caplog.text


# --- choosing a reranker by name ------------------------------------------------------------------


def test_select_reranker_builds_each_kind_by_name():
    from kgrag_neo4j.providers.cohere import CohereReranker
    from kgrag_neo4j.providers.select import RERANKER_NAMES, select_reranker

    assert select_reranker("none") is None
    score = select_reranker("score", min_score=0.25)
    assert isinstance(score, ScoreReranker) and score.min_score == 0.25
    cohere_reranker = select_reranker("Cohere", env={"CO_API_KEY": "test-key"})
    assert isinstance(cohere_reranker, CohereReranker) and isinstance(cohere_reranker, Reranker)
    assert set(RERANKER_NAMES) == {"none", "score", "cohere"}
    with pytest.raises(ConfigurationError, match="unknown reranker 'bm25'"):
        select_reranker("bm25")


def test_the_rerank_module_imports_no_provider():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(rerank_module))
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if "providers" in m or m.split(".")[0] in {"cohere", "openai"}]
    assert not hasattr(rerank_module, "CohereReranker")
