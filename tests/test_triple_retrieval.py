"""Two-phase graph RAG over triples: extraction through a scripted chat model into the buffer and the real
store, two-phase retrieval (vector search, then expansion over the triple graph), and the
formatted context block."""

from __future__ import annotations

import logging

import pytest

from kgrag_neo4j.errors import ConfigurationError, InputError
from kgrag_neo4j.protocols import ChatProvider, Retriever
from kgrag_neo4j.retrieval.triples import GraphRAGResult, TripleGraphRetriever, format_context
from kgrag_neo4j.triples import GraphBuffer
from kgrag_neo4j.triples.store_writer import buffer_for_store, extract_and_enqueue
from kgrag_neo4j.types import Chunk, Document, RetrievalResult
from kgrag_neo4j.types.triples import ExpandedNode, PredicateRegistry, Triple

SEED_BLOCK = """\
## Semantic Context (RAG)
### [knowledge] doc_abc
Content from vector search...

## Graph-Expanded Context
The following related items were discovered through knowledge graph traversal:
- **error:timeout** (via caused_by from tool:http_client)
- **fix:retry_logic** (via resolved_by from error:timeout)"""


class ScriptedChat:
    """A ChatProvider that answers with a fixed reply per text (the last user message) and
    records what it was asked."""

    def __init__(self, replies: dict[str, str]):
        self.replies = replies
        self.calls: list[list[dict[str, str]]] = []

    def chat(self, messages, *, json_schema=None):
        self.calls.append([dict(m) for m in messages])
        return self.replies.get(messages[-1]["content"], "")


HTTP_TEXT = "The HTTP client failed while calling the billing API."
GO_TEXT = "Goroutines make Go concurrency cheap."
SOUP_TEXT = "A recipe for lentil soup with cumin and lemon."

REPLIES = {
    HTTP_TEXT: "\n".join(
        [
            "tool:http_client|related_to|billing_api",
            "tool:http_client|depends_on|billing_api",  # undeclared predicate: dropped
            "just a sentence, not a triple",  # malformed: dropped
            "| tool:http_client | Related To | http |",  # table pipes and spacing: kept, normalised
            "billing_api||",  # empty parts: dropped
        ]
    ),
    GO_TEXT: "```\ngo_concurrency|related_to|goroutines\n```",
    SOUP_TEXT: "",
}

# what a learning session recorded, from no chunk in particular
SESSION_TRIPLES = [
    Triple("error:timeout", "caused_by", "tool:http_client"),
    Triple("error:timeout", "resolved_by", "fix:retry_logic"),
    Triple("error:timeout", "in_session", "session:abc"),
    Triple("fix:retry_logic", "learned_from", "session:abc"),
]


def semantic(doc_id: str, content: str, **meta) -> RetrievalResult:
    return RetrievalResult(id=f"{doc_id}-0", content=content, score=0.9, document_id=doc_id, metadata=meta)


# --- format_context (pure) -------------------------------------------------------------------


def test_format_is_the_seed_block_exactly():
    expanded = [
        ExpandedNode("error:timeout", "caused_by", "tool:http_client", 1),
        ExpandedNode("fix:retry_logic", "resolved_by", "error:timeout", 2),
    ]
    assert format_context([semantic("doc_abc", "Content from vector search...")], expanded) == SEED_BLOCK
    assert GraphRAGResult([semantic("doc_abc", "Content from vector search...")], expanded).format() == SEED_BLOCK


@pytest.mark.parametrize(
    "results, expanded, want",
    [
        ([], [], ""),
        ([semantic("d1", "   ")], [], ""),  # empty content is skipped
        (
            [semantic("d1", "one"), semantic("d2", " two \n")],
            [],
            "## Semantic Context (RAG)\n### [knowledge] d1\none\n\n### [knowledge] d2\ntwo",
        ),
        (
            [semantic("d1", "one", collection="learning")],
            [],
            "## Semantic Context (RAG)\n### [learning] d1\none",
        ),
        (
            [],
            [ExpandedNode("b", "related_to", "a", 1)],
            "## Graph-Expanded Context\n"
            "The following related items were discovered through knowledge graph traversal:\n"
            "- **b** (via related_to from a)",
        ),
    ],
)
def test_format_sections(results, expanded, want):
    assert format_context(results, expanded) == want


def test_format_falls_back_to_the_chunk_id_and_takes_a_collection():
    r = RetrievalResult(id="chunk-7", content="x", score=1.0)
    assert format_context([r], [], collection="docs") == "## Semantic Context (RAG)\n### [docs] chunk-7\nx"


# --- extraction through the buffer into the store -------------------------------------------


def put_chunks(store, embedder, texts: dict[str, str]) -> dict[str, str]:
    """One document per text; returns key -> chunk id."""
    ids = {}
    vectors = embedder.embed(list(texts.values()))
    for (key, text), vec in zip(texts.items(), vectors):
        doc = Document(id=f"doc_{key}-{store.namespace}", source=f"{key}.md", title=key, content=text, content_hash=key)
        chunk = Chunk(id=f"{store.namespace}-{key}", document_id=doc.id, content=text, chunk_index=0, embedding=vec)
        assert store.store_document(doc, [chunk]) == "new"
        ids[key] = chunk.id
    return ids


@pytest.fixture
def corpus(store, hashing_embedder):
    ids = put_chunks(store, hashing_embedder, {"http": HTTP_TEXT, "go": GO_TEXT, "soup": SOUP_TEXT})
    chat = ScriptedChat(REPLIES)
    registry = PredicateRegistry()
    with buffer_for_store(store, batch_size=64, flush_interval=60) as buffer:
        for key, text in (("http", HTTP_TEXT), ("go", GO_TEXT), ("soup", SOUP_TEXT)):
            extract_and_enqueue(text, chat, buffer, registry, chunk_id=ids[key], metadata={"session": "abc"})
    store.add_triples(SESSION_TRIPLES)
    return ids, chat


def test_extraction_keeps_only_valid_triples(store, corpus):
    ids, chat = corpus
    from_http = store.query_triples(subject="tool:http_client")
    assert [t.key() for t in from_http] == [
        ("tool:http_client", "related_to", "billing_api"),
        ("tool:http_client", "related_to", "http"),
    ]
    assert dict(from_http[0].metadata) == {"chunk_id": ids["http"], "session": "abc"}
    assert store.query_triples(subject="go_concurrency") == [Triple("go_concurrency", "related_to", "goroutines")]
    assert store.count_triples() == 3 + len(SESSION_TRIPLES)
    # the prompt lists the allowed predicates; the chunk is linked to the ends of its triples
    system = chat.calls[0][0]["content"]
    assert "- caused_by:" in system and "depends_on" not in system
    assert store.graph_stats()["edges"]["MENTIONS"] == 3 + 2


def test_a_declared_extra_predicate_survives_extraction(store):
    registry = PredicateRegistry(extra=["depends_on"])
    chat = ScriptedChat({HTTP_TEXT: REPLIES[HTTP_TEXT]})
    with buffer_for_store(store, registry=registry, flush_interval=60) as buffer:
        assert extract_and_enqueue(HTTP_TEXT, chat, buffer, registry) == 3
    assert "- depends_on:" in chat.calls[0][0]["content"]
    assert store.query_triples(predicate="depends_on") == [Triple("tool:http_client", "depends_on", "billing_api")]
    with pytest.raises(InputError, match="chunk_id"):
        extract_and_enqueue(HTTP_TEXT, chat, GraphBuffer(store.add_triples), registry, chunk_id="")


# --- two-phase retrieval --------------------------------------------------------------------


def test_two_phase_retrieval_and_its_context(store, hashing_embedder, corpus):
    ids, _ = corpus
    retriever = TripleGraphRetriever(store, hashing_embedder, top_k=1)
    before = store.runner.round_trips
    result = retriever.search("the HTTP client failed")
    assert store.runner.round_trips - before == 2  # vector search, then ONE expansion statement
    assert [r.id for r in result.semantic] == [ids["http"]]
    assert [(n.name, n.predicate, n.from_name, n.depth, n.seed) for n in result.expanded] == [
        ("error:timeout", "caused_by", "tool:http_client", 1, ids["http"]),
        ("fix:retry_logic", "resolved_by", "error:timeout", 2, ids["http"]),
    ]  # in_session / learned_from are not expansion predicates
    doc_id = result.semantic[0].document_id
    assert retriever.context("the HTTP client failed") == SEED_BLOCK.replace("doc_abc", doc_id).replace(
        "Content from vector search...", HTTP_TEXT
    )


@pytest.mark.parametrize(
    "options, names",
    [
        ({"max_traversal_depth": 1}, ["error:timeout"]),
        ({"max_expansion_results": 1}, ["error:timeout"]),
        ({"max_expansion_results": 0}, []),
        ({"predicates": ("resolved_by", "similar_to")}, []),  # caused_by is the only way in
        ({"predicates": ("caused_by", "in_session")}, ["error:timeout", "session:abc"]),
        (
            {"max_traversal_depth": 3, "predicates": ("caused_by", "in_session", "learned_from")},
            ["error:timeout", "session:abc", "fix:retry_logic"],
        ),
    ],
)
def test_expansion_options(store, hashing_embedder, corpus, options, names):
    retriever = TripleGraphRetriever(store, hashing_embedder, top_k=1, **options)
    assert [n.name for n in retriever.search("the HTTP client failed").expanded] == names


def test_results_without_triples_expand_to_nothing(store, hashing_embedder, corpus):
    ids, _ = corpus
    result = TripleGraphRetriever(store, hashing_embedder, top_k=1).search("lentil soup with cumin")
    assert [r.id for r in result.semantic] == [ids["soup"]] and result.expanded == []
    assert result.format().startswith("## Semantic Context (RAG)\n### [knowledge] doc_soup")
    assert "Graph-Expanded" not in result.format()


class NoGraph:
    def __init__(self, inner):
        self.inner = inner

    def search_chunks(self, embedding, top_k, filters=()):
        return self.inner.search_chunks(embedding, top_k, filters)


class BrokenGraph(NoGraph):
    def expand_triples(self, *args, **kwargs):
        raise RuntimeError("graph unavailable")


def test_a_store_without_the_triple_graph_degrades_to_vector_results(store, hashing_embedder, corpus, caplog):
    ids, _ = corpus
    plain = TripleGraphRetriever(NoGraph(store), hashing_embedder, top_k=1).search("the HTTP client failed")
    assert [r.id for r in plain.semantic] == [ids["http"]] and plain.expanded == []
    with caplog.at_level(logging.WARNING, logger="kgrag_neo4j.retrieval.triples"):
        broken = TripleGraphRetriever(BrokenGraph(store), hashing_embedder, top_k=1).search("the HTTP client failed")
    assert [r.id for r in broken.semantic] == [ids["http"]] and broken.expanded == []
    assert "graph unavailable" in caplog.text


def test_retrieve_is_phase_one_and_options_are_checked(store, hashing_embedder, corpus):
    retriever = TripleGraphRetriever(store, hashing_embedder)
    assert isinstance(retriever, Retriever) and isinstance(ScriptedChat({}), ChatProvider)
    assert [r.id for r in retriever.retrieve("the HTTP client failed", top_k=2)] == [
        r.id for r in retriever.search("the HTTP client failed", top_k=2).semantic
    ]
    with pytest.raises(InputError, match="query"):
        retriever.search("  ")
    for bad in (
        {"max_traversal_depth": 0},
        {"max_traversal_depth": 4},
        {"max_expansion_results": -1},
        {"top_k": 0},
        {"predicates": ()},
        {"predicates": "caused_by"},
    ):
        with pytest.raises(ConfigurationError):
            TripleGraphRetriever(store, hashing_embedder, **bad)
