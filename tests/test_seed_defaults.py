"""Every option of the five original designs with its default: one table to read them all, and
tests that fail when a default or a boundary of them changes.

The table (``SEED_DEFAULTS``) names, per part, where the option lives (a class, function or
dataclass), the option, and the original default; ``test_seed_default`` asserts each one. The
behaviour tests below pin what a signature cannot: the ``k * 2`` candidates, the ``<=`` and
``>=`` of the filters, the sizes local search and triple expansion return by default, the
hybrid retriever's overfetch, minimum score and parent resolution, the cross-document
threshold and same-document exclusion, and the ``↳ Related`` lines of the formatter.

Parts: graph (the chunk graph and hop-decayed traversal), entity (entity-boosted retrieval),
local (GraphRAG local search), triples (the triple knowledge graph), pipeline (the RAG
pipeline: ingestion, hybrid retrieval, the knowledge tool).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import threading

import pytest

from kgrag_neo4j.communities import Community, CommunityReport
from kgrag_neo4j.ingestion.chunkers import MarkdownChunker, RecursiveChunker, SemanticChunker
from kgrag_neo4j.ingestion.edges import extract_llm_edges, make_batches, prune_edges
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.options import IngestGraphOptions, IngestOptions
from kgrag_neo4j.retrieval.entity import EntityGraphRetriever
from kgrag_neo4j.retrieval.format import format_knowledge
from kgrag_neo4j.retrieval.knowledge_tool import KnowledgeTool
from kgrag_neo4j.retrieval.local_search import LocalSearchRetriever
from kgrag_neo4j.retrieval.retrievers import GraphRetriever, HybridRetriever
from kgrag_neo4j.retrieval.scoring import (
    DEFAULT_HOP_DECAY,
    RRF_K,
    GraphOptions,
    entity_boost,
    hop_score,
    reciprocal_rank_fusion,
    seed_score,
)
from kgrag_neo4j.retrieval.triples import TripleGraphRetriever
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.triples.buffer import GraphBuffer
from kgrag_neo4j.triples.learning import ErrorResolutionRecorder
from kgrag_neo4j.types import ChunkEdge, EdgeContext, RelationType, RetrievalResult
from kgrag_neo4j.types.triples import DEFAULT_PREDICATES, EXPANSION_PREDICATES, Triple

from .entity_helpers import FixedEmbedder, make_entity, mention, put_document, relate, unit
from .test_entity_retrieval import QUERY as ENTITY_QUERY
from .test_entity_retrieval import build_world as build_entity_world
from .test_graph_retrieval import put_graph

M = "missing"  # marker: a dataclass field or parameter that must exist

# (part, where, option, default)
SEED_DEFAULTS = [
    # --- graph: chunk graph, ingestion (WithGraph* options) ---
    ("graph", IngestGraphOptions, "graph_extraction", None),
    ("graph", IngestGraphOptions, "graph_batch_size", 5),
    ("graph", IngestGraphOptions, "graph_batch_overlap", 0),
    ("graph", IngestGraphOptions, "graph_extraction_workers", 3),
    ("graph", IngestGraphOptions, "min_edge_weight", 0.0),
    ("graph", IngestGraphOptions, "max_edges_per_chunk", 0),
    ("graph", IngestGraphOptions, "sequence_edges", False),
    ("graph", IngestGraphOptions, "cross_document_edges", False),
    ("graph", IngestGraphOptions, "cross_document_threshold", 0.5),
    ("graph", IngestGraphOptions, "cross_document_max_pairs", 3),
    ("graph", IngestGraphOptions, "cross_document_batch_size", 5),
    ("graph", make_batches, "batch_size", 5),
    ("graph", make_batches, "overlap", 0),
    ("graph", extract_llm_edges, "batch_size", 5),
    ("graph", extract_llm_edges, "workers", 3),
    ("graph", prune_edges, "min_weight", 0.0),
    ("graph", prune_edges, "max_edges_per_chunk", 0),
    # cross-document extraction (CrossDocWith* options)
    ("graph", Ingestor.extract_cross_document_edges, "similarity_threshold", 0.5),
    ("graph", Ingestor.extract_cross_document_edges, "max_pairs_per_chunk", 3),
    ("graph", Ingestor.extract_cross_document_edges, "batch_size", 5),
    ("graph", Ingestor.extract_cross_document_edges, "document_ids", None),
    ("graph", Neo4jStore.similar_chunk_pairs, "threshold", 0.5),
    ("graph", Neo4jStore.similar_chunk_pairs, "max_pairs", 3),
    # --- graph: GraphRetriever ---
    ("graph", GraphOptions, "max_hops", 2),
    ("graph", GraphOptions, "graph_weight", 0.3),
    ("graph", GraphOptions, "vector_weight", 0.7),
    ("graph", GraphOptions, "hop_decay", (1.0, 0.7, 0.5)),
    ("graph", GraphOptions, "bidirectional", False),
    ("graph", GraphOptions, "relation_filter", ()),
    ("graph", GraphOptions, "min_traversal_score", 0.0),
    ("graph", GraphOptions, "seed_top_k", 10),
    ("graph", GraphOptions, "seed_keyword_weight", 0.0),
    ("graph", GraphRetriever, "filters", ()),
    ("graph", GraphRetriever, "tracer", None),
    ("graph", GraphRetriever, "logger", None),
    ("graph", seed_score, "vector_weight", 0.7),
    ("graph", seed_score, "graph_weight", 0.3),
    ("graph", hop_score, "graph_weight", 0.3),
    ("graph", hop_score, "hop_decay", (1.0, 0.7, 0.5)),
    # --- entity: entity-boosted retrieval ---
    ("entity", EntityGraphRetriever, "max_hops", 1),
    ("entity", EntityGraphRetriever, "entity_boost_direct", 0.3),
    ("entity", EntityGraphRetriever, "entity_boost_indirect", 0.1),
    ("entity", EntityGraphRetriever, "use_relationship_strength", True),
    ("entity", EntityGraphRetriever, "query_entities_top_k", 3),
    ("entity", EntityGraphRetriever, "relationship_types", None),
    ("entity", EntityGraphRetriever, "max_sequence", None),
    ("entity", EntityGraphRetriever, "centrality", None),
    ("entity", EntityGraphRetriever, "expand", True),
    ("entity", entity_boost, "direct", 0.3),
    ("entity", entity_boost, "indirect", 0.1),
    ("entity", entity_boost, "use_strength", True),
    ("entity", Neo4jStore.entity_boost_context, "entity_k", 3),
    ("entity", Neo4jStore.entity_boost_context, "max_hops", 1),
    # --- local: GraphRAG local search (RetrievalConfig, token budget) ---
    ("local", LocalSearchRetriever, "top_k_entities", 10),
    ("local", LocalSearchRetriever, "top_k_relationships", 20),
    ("local", LocalSearchRetriever, "top_k_community_reports", 3),
    ("local", LocalSearchRetriever, "top_k_text_units", 10),
    ("local", LocalSearchRetriever, "max_text_unit_tokens", 4000),
    ("local", Neo4jStore.local_context, "entity_k", 10),
    ("local", Neo4jStore.local_context, "max_tokens", 4000),
    ("local", Neo4jStore.local_context, "relationship_k", 20),
    ("local", Neo4jStore.local_context, "report_k", 3),
    ("local", Neo4jStore.community_reports_for_entities, "top_k", 3),
    # --- triples: triples knowledge graph ---
    ("triples", GraphBuffer, "batch_size", 64),
    ("triples", GraphBuffer, "flush_interval", 2.0),
    ("triples", TripleGraphRetriever, "max_traversal_depth", 2),
    ("triples", TripleGraphRetriever, "max_expansion_results", 10),
    ("triples", TripleGraphRetriever, "predicates", ("related_to", "resolved_by", "caused_by", "similar_to")),
    ("triples", Neo4jStore.expand_triples, "max_depth", 2),
    ("triples", Neo4jStore.expand_triples, "limit", 10),
    ("triples", Neo4jStore.expand_triples, "predicates", ("related_to", "resolved_by", "caused_by", "similar_to")),
    ("triples", Neo4jStore.propagate_confidence, "propagation_rate", 0.3),
    ("triples", ErrorResolutionRecorder, "propagation_rate", 0.3),
    # --- pipeline: RAG pipeline ---
    ("pipeline", IngestOptions, "strategy", "flat"),
    ("pipeline", IngestOptions, "chunker", None),
    ("pipeline", IngestOptions, "parent_tokens", 1024),
    ("pipeline", IngestOptions, "child_tokens", 256),
    ("pipeline", IngestOptions, "batch_size", 64),
    ("pipeline", RecursiveChunker, "max_tokens", 512),
    ("pipeline", RecursiveChunker, "overlap_tokens", 50),
    ("pipeline", MarkdownChunker, "max_tokens", 1024),
    ("pipeline", SemanticChunker, "max_tokens", 512),
    ("pipeline", SemanticChunker, "breakpoint_percentile", 25),
    ("pipeline", HybridRetriever, "keyword_weight", 0.3),
    ("pipeline", HybridRetriever, "overfetch", 3),
    ("pipeline", HybridRetriever, "reranker", None),
    ("pipeline", HybridRetriever, "min_score", 0.0),
    ("pipeline", HybridRetriever, "filters", ()),
    ("pipeline", reciprocal_rank_fusion, "keyword_weight", 0.3),
    ("pipeline", reciprocal_rank_fusion, "k", 60),
    ("pipeline", KnowledgeTool, "top_k", 5),
    ("pipeline", KnowledgeTool, "retriever", None),
]


def _default(where, option):
    if dataclasses.is_dataclass(where):
        for f in dataclasses.fields(where):
            if f.name == option:
                if f.default is not dataclasses.MISSING:
                    return f.default
                if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
                    return f.default_factory()  # type: ignore[misc]
        return M
    target = where.__init__ if inspect.isclass(where) else where
    parameter = inspect.signature(target).parameters.get(option)
    return M if parameter is None else parameter.default


@pytest.mark.parametrize(
    "part, where, option, default",
    SEED_DEFAULTS,
    ids=[f"{s}-{getattr(w, '__qualname__', w)}.{o}" for s, w, o, _ in SEED_DEFAULTS],
)
def test_seed_default(part, where, option, default):
    got = _default(where, option)
    assert got is not M, f"{where.__qualname__} has no option {option!r}"
    if isinstance(default, tuple):
        got = tuple(got)
    if default is None or isinstance(default, bool):
        assert got is default
    else:
        assert got == default


def test_seed_constants():
    assert RRF_K == 60
    assert DEFAULT_HOP_DECAY == (1.0, 0.7, 0.5)
    assert sorted(DEFAULT_PREDICATES) == sorted(
        [
            "related_to",
            "caused_by",
            "resolved_by",
            "follows",
            "similar_to",
            "contains",
            "in_session",
            "reflects_on",
            "learned_from",
        ]
    )
    assert EXPANSION_PREDICATES == ("related_to", "resolved_by", "caused_by", "similar_to")
    assert GraphBuffer(lambda triples: len(triples)).flush_interval == 2.0
    assert KnowledgeTool.name == "knowledge_search"


# --- 001: k * 2 candidates, max_hops 1, the <= of the sequence filter -----------------------


def test_entity_retrieval_takes_k_times_two_candidates(store):
    w = build_entity_world(store)
    # two more chunks, nearer the query than any of the world's four: six in all
    put_document(store, "three.txt", ["Nothing to see.", "Still nothing."], embeddings=[unit(0, 14, 0.9), unit(0, 15, 0.85)])
    embedder = FixedEmbedder({ENTITY_QUERY: unit(0)})
    retriever = EntityGraphRetriever(store, embedder)
    for top_k, candidates in ((1, 2), (2, 4)):
        retriever.retrieve(ENTITY_QUERY, top_k=top_k)
        assert retriever.last_trace.candidates == candidates
    assert w  # the world is there


def test_entity_retrieval_default_is_one_hop(store):
    w = build_entity_world(store)
    results = EntityGraphRetriever(store, FixedEmbedder({ENTITY_QUERY: unit(0)})).retrieve(ENTITY_QUERY, top_k=4)
    boosts = {r.id: round(r.scores.boost, 6) for r in results}
    # Cersei (one hop from Robert, SPOUSE 0.7) boosts D; Tywin (two hops) does not boost B
    assert boosts[w["D"]] == pytest.approx(0.07) and boosts[w["B"]] == 0.0


@pytest.mark.parametrize("max_sequence, d_boost", [(5, 0.07), (4, 0.0)])
def test_sequence_filter_keeps_relationships_at_the_bound(store, max_sequence, d_boost):
    w = build_entity_world(store)  # Robert -SPOUSE (sequence 5)- Cersei
    embedder = FixedEmbedder({ENTITY_QUERY: unit(0)})
    results = EntityGraphRetriever(store, embedder, max_sequence=max_sequence).retrieve(ENTITY_QUERY, top_k=4)
    assert {r.id: round(r.scores.boost, 6) for r in results}[w["D"]] == pytest.approx(d_boost)
    near = store.entity_neighbours([w["Robert"].id], 1, max_sequence=max_sequence)
    assert (w["Cersei"].id in near) is (max_sequence >= 5)


def test_entity_results_carry_mentions_path_and_boost_stats(store):
    w = build_entity_world(store)
    retriever = EntityGraphRetriever(store, FixedEmbedder({ENTITY_QUERY: unit(0)}), max_hops=2)
    by_id = {r.id: r for r in retriever.retrieve(ENTITY_QUERY, top_k=4)}
    a, b, c, d = (by_id[w[k]] for k in "ABCD")
    assert a.mentioned_entity_ids == sorted([w["Ned"].id, w["Robert"].id])
    assert a.graph_path in ([("Ned Stark", "")], [("Robert Baratheon", "")])
    assert b.mentioned_entity_ids == [w["Tywin"].id]
    assert b.graph_path == [("Robert Baratheon", "SPOUSE"), ("Cersei Lannister", "PARENT"), ("Tywin Lannister", "")]
    assert d.graph_path == [("Robert Baratheon", "SPOUSE"), ("Cersei Lannister", "")]
    assert c.graph_path == [] and c.mentioned_entity_ids == [w["Varys"].id]
    assert b.to_json()["graph_path"] == [["Robert Baratheon", "SPOUSE"], ["Cersei Lannister", "PARENT"], ["Tywin Lannister", ""]]
    trace = retriever.last_trace
    assert trace.returned == 4
    assert trace.max_boost == pytest.approx(0.6)
    assert trace.avg_boost == pytest.approx((0.6 + 0.045 + 0.07 + 0.0) / 4)


# --- 002: local search sizes and token budget ----------------------------------------------

LOCAL_QUERY = "local search query"


def build_local_world(store):
    entities = [make_entity(store, f"E{i:02d}", "CONCEPT", unit(0, i + 1, 0.95 - 0.05 * i)) for i in range(12)]
    store.upsert_entities(entities)
    # five text units of 1000 tokens each, nearest first; all mention E00
    _, units = put_document(
        store,
        "units.txt",
        [f"Unit {i} about E00." for i in range(5)],
        embeddings=[unit(0, 20 + i, 0.9 - 0.1 * i) for i in range(5)],
        token_counts=[1000] * 5,
    )
    store.upsert_mentions([mention(u, entities[0]) for u in units])
    # 25 relationships among the entities, all of different weights
    pairs = [(i, j) for i in range(12) for j in range(i + 1, 12)][:25]
    store.upsert_relations([relate(entities[i], entities[j], "LINKS", 0.99 - 0.01 * k) for k, (i, j) in enumerate(pairs)])
    ids = [f"com_{k}_{store.namespace}" for k in range(4)]
    store.write_communities(
        [Community(ids[k], 0, (entities[k].id,), None, 1) for k in range(4)],
        [CommunityReport(ids[k], f"C{k}", f"About C{k}.", f"# C{k}", 4.0 - k) for k in range(4)],
    )
    return entities, units


def test_local_search_default_sizes_and_budget(store):
    entities, units = build_local_world(store)
    ctx = LocalSearchRetriever(store, FixedEmbedder({LOCAL_QUERY: unit(0)})).context(LOCAL_QUERY)
    assert [e.name for e in ctx.entities] == [f"E{i:02d}" for i in range(10)]
    assert len(ctx.relationships) == 20
    assert [r.title for r in ctx.community_reports] == ["C0", "C1", "C2"]
    # 4 x 1000 tokens fill the 4000 budget exactly; the fifth unit would overflow it
    assert [u.id for u in ctx.text_units] == units[:4] and ctx.total_tokens == 4000
    capped = LocalSearchRetriever(store, FixedEmbedder({LOCAL_QUERY: unit(0)}), top_k_text_units=2).context(LOCAL_QUERY)
    assert [u.id for u in capped.text_units] == units[:2]


# --- 003: triple expansion depth and size ---------------------------------------------------


def _triple_world(store, triples):
    _, (chunk,) = put_document(store, "t.txt", ["The session log."], embeddings=[unit(0)])
    first, *rest = triples
    store.add_triples([Triple(*first, {"chunk_id": chunk}), *(Triple(*t) for t in rest)])


def test_triple_expansion_goes_two_hops_by_default(store):
    # the chunk mentions S and S2 (both ends of its triple); then S2 -> X1 -> X2 -> X3
    _triple_world(
        store, [("S", "related_to", "S2"), ("S2", "related_to", "X1"), ("X1", "related_to", "X2"), ("X2", "related_to", "X3")]
    )
    found = TripleGraphRetriever(store, FixedEmbedder({"q": unit(0)})).search("q").expanded
    assert [(n.name, n.depth) for n in found] == [("X1", 1), ("X2", 2)]


def test_triple_expansion_returns_ten_results_by_default(store):
    _triple_world(store, [("S", "related_to", "H")] + [("H", "related_to", f"L{i:02d}") for i in range(12)])
    found = TripleGraphRetriever(store, FixedEmbedder({"q": unit(0)})).search("q").expanded
    assert [n.name for n in found] == [f"L{i:02d}" for i in range(10)]


def test_buffer_flushes_a_lone_triple_after_its_interval():
    written = []
    done = threading.Event()

    def write(batch):
        written.append(len(batch))
        done.set()

    buffer = GraphBuffer(write, flush_interval=0.2)
    buffer.start()
    try:
        buffer.enqueue([Triple("a", "related_to", "b")])
        assert done.wait(5.0) and written == [1]
    finally:
        buffer.stop()


# --- 000: the >= of the minimum traversal score on the native path ------------------------


@pytest.mark.parametrize("threshold, reached", [(0.5, True), (0.51, False)])
def test_native_min_traversal_score_is_inclusive(store, threshold, reached):
    put_graph(store, {"a": unit(0), "b": unit(1)}, [ChunkEdge("a", "b", RelationType.ELABORATES, 0.5, "b explains a")])
    retriever = GraphRetriever(store, FixedEmbedder({"q": unit(0)}), seed_top_k=1, min_traversal_score=threshold)
    assert retriever.uses_native
    ids = [r.id.removeprefix(store.namespace + "-") for r in retriever.retrieve("q", 5)]
    assert ids == (["a", "b"] if reached else ["a"])


# --- 004: hybrid overfetch, minimum score, parent resolution --------------------------------


class SpyStore:
    """Passes every call to the real store and records the sizes the searches ask for."""

    def __init__(self, store):
        self._store, self.calls = store, []

    def __getattr__(self, name):
        return getattr(self._store, name)

    def search_chunks(self, embedding, top_k, filters=()):
        self.calls.append(("vector", top_k))
        return self._store.search_chunks(embedding, top_k, filters)

    def search_chunks_keyword(self, query, top_k, filters=()):
        self.calls.append(("keyword", top_k))
        return self._store.search_chunks_keyword(query, top_k, filters)


def test_hybrid_overfetches_three_times_top_k(store, hashing_embedder):
    Ingestor(store, hashing_embedder).ingest_text("Graphs link chunks.\n\nVectors find chunks.", "h.txt")
    spy = SpyStore(store)
    HybridRetriever(spy, hashing_embedder).retrieve("graphs", 2)
    assert sorted(spy.calls) == [("keyword", 6), ("vector", 6)]


def test_hybrid_min_score_keeps_a_result_at_the_bound(store, hashing_embedder):
    import math

    Ingestor(store, hashing_embedder).ingest_text("Graphs link chunks together.", "one.txt")
    query = "graphs link chunks together"
    (best,) = HybridRetriever(store, hashing_embedder).retrieve(query, 3)
    at_bound = HybridRetriever(store, hashing_embedder, min_score=best.score).retrieve(query, 3)
    assert [r.id for r in at_bound] == [best.id]
    above = HybridRetriever(store, hashing_embedder, min_score=math.nextafter(best.score, 2.0)).retrieve(query, 3)
    assert above == []


def test_hybrid_resolves_children_to_their_parents(store, hashing_embedder):
    text = "\n\n".join(f"Section {i} on topic {i}. " + "Many words about the topic follow here. " * 12 for i in range(4))
    r = Ingestor(store, hashing_embedder, strategy="parent-child", parent_tokens=200, child_tokens=60).ingest_text(text, "pc.txt")
    parents = {c.id for c in store.list_document_chunks(r.document_id) if c.parent_id is None}
    results = HybridRetriever(store, hashing_embedder).retrieve("Section 2 on topic 2", 3)
    assert results and {x.id for x in results} <= parents
    assert any("resolved from child chunk" in line for x in results for line in x.explanation)


# --- 000: cross-document threshold and same-document exclusion -----------------------------


class PromptRecorder:
    def __init__(self):
        self.prompts = []

    def chat(self, messages, *, json_schema=None):
        import re

        self.prompts.append(sorted(re.findall(r"^\[([^\]]+)\]: ", messages[-1]["content"], re.MULTILINE)))
        return json.dumps({"edges": []})


def test_cross_document_threshold_and_same_document_exclusion(store, hashing_embedder):
    doc_a, (a, a2) = put_document(store, "a.txt", ["A one.", "A two."], embeddings=[unit(0), unit(0, 3, 0.9)])
    _, (b,) = put_document(store, "b.txt", ["B."], embeddings=[unit(0, 1, 0.55)])  # cos to A: 0.55
    _, (c,) = put_document(store, "c.txt", ["C."], embeddings=[unit(0, 2, 0.45)])  # cos to A: 0.45
    pairs = store.similar_chunk_pairs(document_ids=[doc_a])
    assert [(p.source.id, p.target.id) for p in pairs] == [(a, b)]  # not a2 (same document), not c
    chat = PromptRecorder()
    Ingestor(store, hashing_embedder, graph=IngestGraphOptions(graph_extraction=chat)).extract_cross_document_edges(
        document_ids=[doc_a]
    )
    assert chat.prompts == [sorted([a, b])]


# --- 004: the formatter's ↳ Related lines and the knowledge_search tool ---------------------


def _results():
    seed = RetrievalResult(id="c1", content="OAuth setup flow", score=0.93, title="Auth guide", source="docs/auth.md")
    found = RetrievalResult(
        id="c2",
        content="Token refresh mechanism",
        score=0.12,
        title="Tokens",
        source="docs/tokens.md",
        graph_context=[
            EdgeContext(from_chunk_id="c1", relation="depends_on", description="requires auth configuration", hops=1),
            EdgeContext(from_chunk_id="c1", relation="elaborates", description="", hops=1),
        ],
    )
    return [seed, found]


def test_format_knowledge_writes_the_related_lines():
    assert format_knowledge(_results()) == (
        "1. Auth guide (docs/auth.md)\n"
        "   OAuth setup flow\n"
        "\n"
        "2. Tokens (docs/tokens.md)\n"
        "   Token refresh mechanism\n"
        '   ↳ Related: "requires auth configuration" (depends_on)\n'
        '   ↳ Related: "from c1" (elaborates)'
    )
    assert format_knowledge([]) == "No relevant knowledge found."


class ListRetriever:
    def __init__(self, results, error=None):
        self.results, self.error, self.calls = results, error, []

    def retrieve(self, query, top_k=5):
        self.calls.append((query, top_k))
        if self.error is not None:
            raise self.error
        return self.results[:top_k]


def test_knowledge_tool_is_knowledge_search_with_the_seeds_output():
    retriever = ListRetriever(_results())
    tool = KnowledgeTool(retriever=retriever)
    spec = tool.definition()
    assert spec["type"] == "function" and spec["function"]["name"] == "knowledge_search"
    assert spec["function"]["parameters"]["required"] == ["query"]
    out = tool.execute('{"query": "token refresh"}')
    assert out.ok and out.count == 2 and retriever.calls == [("token refresh", 5)]
    assert out.content.startswith("From knowledge base:\n1. Auth guide (docs/auth.md)\n")
    assert '   ↳ Related: "requires auth configuration" (depends_on)' in out.content
    assert tool("token refresh") == out.content
    assert KnowledgeTool(retriever=ListRetriever([])).run("nothing") == "No relevant information found for 'nothing'."


@pytest.mark.parametrize(
    "arguments, error",
    [
        ("not json", "invalid args: not JSON"),
        ('["query"]', "invalid args: expected an object"),
        ('{"query": ""}', "invalid args: query must be non-empty"),
        ('{"query": "x", "top_k": 9}', "invalid args: unknown argument(s) top_k"),
    ],
)
def test_knowledge_tool_reports_bad_arguments_without_raising(arguments, error):
    result = KnowledgeTool(retriever=ListRetriever(_results())).execute(arguments)
    assert not result.ok and result.error.startswith(error) and result.text().startswith("Error: ")


def test_knowledge_tool_reports_retrieval_errors_and_defaults_to_hybrid(store, hashing_embedder):
    from kgrag_neo4j.errors import StoreError

    failing = KnowledgeTool(retriever=ListRetriever([], error=StoreError("database unavailable")))
    assert failing.execute({"query": "x"}).error == "retrieval error: StoreError: database unavailable"
    Ingestor(store, hashing_embedder).ingest_text("Graphs link chunks.", "k.txt")
    tool = KnowledgeTool(store, hashing_embedder)
    assert isinstance(tool.retriever, HybridRetriever) and tool.top_k == 5
    assert tool.run("graphs").startswith("From knowledge base:\n1. ")
