"""Hop-decayed graph retrieval on the real server: the one-statement GraphRetriever, the per-hop fallback, the
GraphStore edge operations and the degradation table."""

from __future__ import annotations

import logging
import math
import re

import pytest

from kgrag_neo4j.errors import ConfigurationError, InputError
from kgrag_neo4j.options import GraphOptions
from kgrag_neo4j.protocols import GraphStore, GraphTraverser, KeywordSearcher
from kgrag_neo4j.retrieval.retrievers import GraphRetriever
from kgrag_neo4j.types import Chunk, ChunkEdge, Document, RelationType, by_meta

from .conftest import TEST_DIMENSIONS


def seed_retriever(store, embedder, **options):
    """The graph retriever with the original formula (``blend="seed"``): these tests pin it."""
    options.setdefault("blend", "seed")
    return GraphRetriever(store, embedder, **options)


def unit(i: int, j: int | None = None, cos: float = 1.0) -> list[float]:
    """A vector along axis i, tilted toward axis j so its cosine with axis i is ``cos``."""
    v = [0.0] * TEST_DIMENSIONS
    v[i] = cos
    if j is not None:
        v[j] = math.sqrt(max(0.0, 1 - cos * cos))
    return v


class FixedEmbedder:
    """Maps known query strings to fixed vectors (what the graph arithmetic needs)."""

    name = "fixed"
    dimensions = TEST_DIMENSIONS

    def __init__(self, table: dict[str, list[float]]):
        self.table = table

    def embed(self, texts, *, input_type="document"):
        return [self.table[t] for t in texts]


class PerHopStore:
    """A GraphStore without the native traversal: forces the original per-hop loop."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        if name == "graph_retrieve":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def store_document(self, document, chunks):
        return self.inner.store_document(document, chunks)

    def get_document(self, document_id):
        return self.inner.get_document(document_id)

    def list_documents(self, *, limit=None):
        return self.inner.list_documents(limit=limit)

    def delete_document(self, document_id):
        return self.inner.delete_document(document_id)

    def search_chunks(self, embedding, top_k, filters=()):
        return self.inner.search_chunks(embedding, top_k, filters)

    def search_chunks_keyword(self, query, top_k, filters=()):
        return self.inner.search_chunks_keyword(query, top_k, filters)

    def get_chunks_by_ids(self, ids):
        return self.inner.get_chunks_by_ids(ids)

    def store_edges(self, edges):
        return self.inner.store_edges(edges)

    def get_edges(self, ids):
        return self.inner.get_edges(ids)

    def get_incoming_edges(self, ids):
        return self.inner.get_incoming_edges(ids)

    def prune_orphan_edges(self, *, dry_run=False):
        return self.inner.prune_orphan_edges(dry_run=dry_run)


class VectorOnlyStore:
    """A plain Store: no GraphStore capability at all."""

    def __init__(self, inner):
        self.inner = inner

    def search_chunks(self, embedding, top_k, filters=()):
        return self.inner.search_chunks(embedding, top_k, filters)

    def get_chunks_by_ids(self, ids):
        return self.inner.get_chunks_by_ids(ids)


class FailingEdgesStore(PerHopStore):
    def get_edges(self, ids):
        raise RuntimeError("edge table unavailable")


class FailingFetchStore(PerHopStore):
    def get_chunks_by_ids(self, ids):
        raise RuntimeError("fetch failed")


def put_graph(store, chunk_vectors: dict[str, list[float]], edges: list[ChunkEdge], *, meta=None) -> Document:
    doc = Document(id=f"doc-{store.namespace}", source="graph.txt", title="Graph", content="g", content_hash="h")
    chunks = [
        Chunk(
            id=f"{store.namespace}-{cid}",
            document_id=doc.id,
            content=f"text of {cid}",
            chunk_index=i,
            embedding=vec,
            metadata=(meta or {}).get(cid, {}),
        )
        for i, (cid, vec) in enumerate(chunk_vectors.items())
    ]
    assert store.store_document(doc, chunks) == "new"
    ns = store.namespace
    store.store_edges(
        [ChunkEdge(f"{ns}-{e.source_id}", f"{ns}-{e.target_id}", e.relation, e.weight, e.description) for e in edges]
    )
    return doc


def short(store, results):
    return [(r.id.removeprefix(store.namespace + "-"), round(r.score, 6)) for r in results]


@pytest.fixture
def chain(store):
    """a -> b -> c -> d, plus e -> a; only a is similar to the query."""
    put_graph(
        store,
        {"a": unit(0, 1, 0.8), "b": unit(2), "c": unit(3), "d": unit(4), "e": unit(5)},
        [
            ChunkEdge("a", "b", RelationType.ELABORATES, 0.8, "b explains a"),
            ChunkEdge("b", "c", RelationType.DEPENDS_ON, 0.8, "c needs b"),
            ChunkEdge("c", "d", RelationType.SEQUENCE, 1.0, "d follows c"),
            ChunkEdge("e", "a", RelationType.REFERENCES, 0.9, "e cites a"),
        ],
    )
    return FixedEmbedder({"q": unit(0)})


def test_the_seeds_worked_examples(store, chain):
    r = seed_retriever(store, chain, seed_top_k=1).retrieve("q", 10)
    scores = dict(short(store, r))
    # cosine 0.8 is Neo4j's normalised similarity (1 + 0.8) / 2 = 0.9 -> 0.7 * 0.9 + 0.3
    assert scores["a"] == pytest.approx(0.93)
    assert scores["b"] == pytest.approx(0.3 * 0.8 * 0.7)
    assert scores["c"] == pytest.approx(0.12)  # hop 2 through a 0.8 edge
    assert "d" not in scores  # max_hops 2
    assert [x for x, _ in short(store, r)] == ["a", "b", "c"]


def test_graph_context_says_how_a_chunk_was_found(store, chain):
    r = {x.id.split("-")[-1]: x for x in seed_retriever(store, chain, seed_top_k=1).retrieve("q", 10)}
    assert r["a"].graph_context == []
    (ctx,) = r["c"].graph_context
    assert (ctx.from_chunk_id.split("-")[-1], ctx.relation, ctx.description, ctx.hops) == ("b", "depends_on", "c needs b", 2)


@pytest.mark.parametrize(
    "options, expected",
    [
        (dict(max_hops=0), ["a"]),
        (dict(max_hops=1), ["a", "b"]),
        (dict(max_hops=3), ["a", "b", "d", "c"]),  # d: 0.3*1.0*0.5 = 0.15 > c: 0.12
        (dict(max_hops=2, bidirectional=True), ["a", "e", "b", "c"]),
        (dict(max_hops=3, relation_filter=("elaborates", "sequence")), ["a", "b"]),
        (dict(max_hops=3, min_traversal_score=0.85), ["a"]),
        (dict(max_hops=3, hop_decay=(1.0, 0.5)), ["a", "d", "b", "c"]),  # b, c tie at 0.12: by id
    ],
)
def test_traversal_options(store, chain, options, expected):
    got = [x for x, _ in short(store, seed_retriever(store, chain, seed_top_k=1, **options).retrieve("q", 10))]
    assert got == expected


def test_native_and_per_hop_agree(store, chain):
    for options in (
        dict(max_hops=2),
        dict(max_hops=3, bidirectional=True),
        dict(max_hops=2, relation_filter=("depends_on", "elaborates")),
    ):
        native = seed_retriever(store, chain, seed_top_k=2, **options)
        loop = seed_retriever(PerHopStore(store), chain, seed_top_k=2, **options)
        assert native.uses_native and not loop.uses_native
        a, b = native.retrieve("q", 10), loop.retrieve("q", 10)
        assert short(store, a) == short(store, b)
        assert [[(g.from_chunk_id, g.relation, g.hops) for g in r.graph_context] for r in a] == [
            [(g.from_chunk_id, g.relation, g.hops) for g in r.graph_context] for r in b
        ]


def test_cycles_terminate_and_score_at_first_hop(store):
    emb = FixedEmbedder({"q": unit(0)})
    put_graph(
        store,
        {"x": unit(0), "y": unit(1), "z": unit(2)},
        [
            ChunkEdge("x", "y", RelationType.SIMILAR_TO, 0.5),
            ChunkEdge("y", "z", RelationType.SIMILAR_TO, 1.0),
            ChunkEdge("z", "x", RelationType.SIMILAR_TO, 1.0),
            ChunkEdge("x", "z", RelationType.SIMILAR_TO, 0.2),
        ],
    )
    got = dict(short(store, seed_retriever(store, emb, seed_top_k=1, max_hops=4).retrieve("q", 10)))
    # z is first reached at hop 1 through the weak 0.2 edge: BFS keeps that, not hop 2's 1.0
    assert got["z"] == pytest.approx(0.3 * 0.2 * 0.7)
    assert got["y"] == pytest.approx(0.3 * 0.5 * 0.7)
    assert set(got) == {"x", "y", "z"}


def test_best_edge_at_a_hop_wins(store):
    emb = FixedEmbedder({"q": unit(0)})
    put_graph(
        store,
        {"s1": unit(0), "s2": unit(0, 1, 0.99), "t": unit(5)},
        [ChunkEdge("s1", "t", RelationType.REFERENCES, 0.4), ChunkEdge("s2", "t", RelationType.ELABORATES, 0.9)],
    )
    (t,) = [r for r in seed_retriever(store, emb, seed_top_k=2).retrieve("q", 10) if r.id.endswith("-t")]
    assert t.score == pytest.approx(0.3 * 0.9 * 0.7)
    assert t.graph_context[0].relation == "elaborates"


def test_tied_best_edges_resolve_by_from_chunk_then_relation(store):
    emb = FixedEmbedder({"q": unit(0)})
    put_graph(
        store,
        {"s2": unit(0), "s1": unit(0, 1, 0.99), "t": unit(5)},
        [
            ChunkEdge("s2", "t", RelationType.ELABORATES, 0.6),
            ChunkEdge("s1", "t", RelationType.REFERENCES, 0.6),
            ChunkEdge("s1", "t", RelationType.DEPENDS_ON, 0.6),
        ],
    )
    for store_ in (store, PerHopStore(store)):
        (t,) = [r for r in seed_retriever(store_, emb, seed_top_k=2).retrieve("q", 10) if r.id.endswith("-t")]
        via = t.graph_context[0]
        assert (via.from_chunk_id, via.relation) == (f"{store.namespace}-s1", "depends_on")


def test_relates_to_into_foreign_nodes_is_not_followed(store, driver, chain):
    # a RELATES_TO written outside the library, to a node of no namespace and to another
    # tenant's chunk, must not leak either into the results
    ns = store.namespace
    with driver.session() as s:
        s.run(
            "MATCH (a:Chunk {id: $a}) CREATE (a)-[:RELATES_TO {relation: 'references', weight: 1.0}]->(:Note {id: 'n1'}) "
            "CREATE (a)<-[:RELATES_TO {relation: 'references', weight: 1.0}]-(:Chunk {id: $other, namespace: $other_ns, content: 'x'})",
            a=f"{ns}-a",
            other=f"{ns}-foreign",
            other_ns=ns + "-other",
        ).consume()
    try:
        for bidirectional in (False, True):
            got = [
                r.id
                for r in seed_retriever(store, chain, seed_top_k=1, max_hops=2, bidirectional=bidirectional).retrieve("q", 10)
            ]
            assert f"{ns}-a" in got and f"{ns}-b" in got
            assert "n1" not in got and f"{ns}-foreign" not in got
    finally:
        with driver.session() as s:
            s.run(
                "MATCH (n) WHERE (n:Note AND n.id = 'n1') OR (n:Chunk AND n.id = $other) DETACH DELETE n", other=f"{ns}-foreign"
            ).consume()


def test_hybrid_seeding_finds_keyword_only_seeds(store):
    emb = FixedEmbedder({"zebra crossing": unit(0)})
    doc = Document(id=f"doc-{store.namespace}", source="k.txt", title="K", content="k", content_hash="h")
    chunks = [
        Chunk(
            id=f"{store.namespace}-v{i}",
            document_id=doc.id,
            content=f"plain text {i}",
            chunk_index=i,
            embedding=unit(0, i + 1, 0.9 - i * 0.01),
        )
        for i in range(5)
    ]
    chunks.append(
        Chunk(
            id=f"{store.namespace}-kw", document_id=doc.id, content="the zebra crossing rule", chunk_index=9, embedding=unit(100)
        )
    )
    store.store_document(doc, chunks)
    plain = [r.id for r in seed_retriever(store, emb, seed_top_k=2, max_hops=0).retrieve("zebra crossing", 10)]
    hybrid = seed_retriever(store, emb, seed_top_k=2, max_hops=0, seed_keyword_weight=0.5).retrieve("zebra crossing", 10)
    assert f"{store.namespace}-kw" not in plain
    assert f"{store.namespace}-kw" in [r.id for r in hybrid]
    per_hop = seed_retriever(PerHopStore(store), emb, seed_top_k=2, max_hops=0, seed_keyword_weight=0.5).retrieve(
        "zebra crossing", 10
    )
    assert sorted(r.id for r in hybrid) == sorted(r.id for r in per_hop)
    assert {r.id: round(r.score, 6) for r in hybrid} == {r.id: round(r.score, 6) for r in per_hop}


def test_filters_scope_the_seeds(store, chain):
    r = seed_retriever(store, chain, seed_top_k=1, filters=[by_meta("none", "x")]).retrieve("q", 10)
    assert r == []


def test_no_graph_store_degrades_to_vector_only(store, chain):
    plain = VectorOnlyStore(store)
    assert not isinstance(plain, GraphStore)
    got = short(store, seed_retriever(plain, chain, seed_top_k=1).retrieve("q", 10))
    assert got == [("a", pytest.approx(0.93))]


def test_traversal_error_returns_seeds(store, chain, caplog):
    with caplog.at_level(logging.WARNING):
        got = short(store, seed_retriever(FailingEdgesStore(store), chain, seed_top_k=1).retrieve("q", 10))
    assert [x for x, _ in got] == ["a"]
    assert "traversal stopped" in caplog.text


def test_fetch_error_returns_only_seeds(store, chain, caplog):
    with caplog.at_level(logging.WARNING):
        got = short(store, seed_retriever(FailingFetchStore(store), chain, seed_top_k=1).retrieve("q", 10))
    assert [x for x, _ in got] == ["a"]
    assert "fetching graph-found chunks failed" in caplog.text


def test_capabilities_are_discovered_by_type(store):
    assert isinstance(store, GraphStore) and isinstance(store, GraphTraverser) and isinstance(store, KeywordSearcher)
    assert not isinstance(PerHopStore(store), GraphTraverser)


def test_store_edges_is_idempotent_and_keeps_the_highest_weight(store):
    put_graph(store, {"a": unit(0), "b": unit(1)}, [])
    ns = store.namespace
    e = lambda w, d: ChunkEdge(f"{ns}-a", f"{ns}-b", RelationType.ELABORATES, w, d)  # noqa: E731
    store.store_edges([e(0.4, "weak")])
    store.store_edges([e(0.9, "strong"), e(0.5, "middle")])
    store.store_edges([e(0.6, "later but weaker")])
    (edge,) = store.get_edges([f"{ns}-a"])
    assert (edge.weight, edge.description) == (0.9, "strong")
    assert [x.source_id for x in store.get_incoming_edges([f"{ns}-b"])] == [f"{ns}-a"]
    assert store.get_edges([f"{ns}-b"]) == []


@pytest.mark.parametrize(
    "edge, message",
    [
        (ChunkEdge("a", "a", RelationType.ELABORATES, 0.5), "self edge"),
        (ChunkEdge("a", "b", RelationType.ELABORATES, 0.0), "outside (0, 1]"),
        (ChunkEdge("a", "b", RelationType.ELABORATES, 1.5), "outside (0, 1]"),
        (ChunkEdge("a", "b", "friend_of", 0.5), "unknown relation"),  # type: ignore[arg-type]
    ],
)
def test_store_edges_rejects_invalid_edges_and_writes_nothing(store, edge, message):
    put_graph(store, {"a": unit(0), "b": unit(1)}, [])
    ns = store.namespace
    bad = ChunkEdge(f"{ns}-{edge.source_id}", f"{ns}-{edge.target_id}", edge.relation, edge.weight)
    good = ChunkEdge(f"{ns}-a", f"{ns}-b", RelationType.PART_OF, 0.5)
    with pytest.raises(InputError, match=re.escape(message)):
        store.store_edges([good, bad])
    assert store.get_edges([f"{ns}-a"]) == []


def test_prune_orphans_dry_run_then_real(store, driver):
    put_graph(
        store,
        {"a": unit(0), "b": unit(1), "c": unit(2)},
        [ChunkEdge("a", "b", RelationType.SEQUENCE, 1.0), ChunkEdge("b", "c", RelationType.SEQUENCE, 1.0)],
    )
    ns = store.namespace
    # an interrupted foreign writer: b loses its document link (test setup only)
    driver.execute_query("MATCH (:Document)-[r:HAS_CHUNK]->(c:Chunk {id: $id}) DELETE r", id=f"{ns}-b")
    assert store.prune_orphans(dry_run=True) == {"chunks": 1, "edges": 2}
    assert store.get_edges([f"{ns}-a"]) != []  # dry run changed nothing
    assert store.prune_orphan_edges() == 2
    assert store.get_edges([f"{ns}-a"]) == [] and store.get_chunks_by_ids([f"{ns}-b"]) == []
    assert store.prune_orphan_edges() == 0


def test_similarity_edges_need_no_llm(store):
    put_graph(store, {"a": unit(0), "b": unit(0, 1, 0.95), "c": unit(7)}, [])
    ns = store.namespace
    stored = store.build_similarity_edges([f"{ns}-a", f"{ns}-b", f"{ns}-c"], top_k=2, threshold=0.9)
    assert stored == 2  # a<->b only; c is orthogonal
    (edge,) = store.get_edges([f"{ns}-a"])
    assert edge.relation == RelationType.SIMILAR_TO and edge.weight == pytest.approx(0.95, abs=1e-3)


def test_native_rejects_more_hops_than_unrolled_and_the_retriever_falls_back(store, chain):
    with pytest.raises(ConfigurationError):
        store.graph_retrieve(unit(0), "q", 3, GraphOptions(max_hops=5))
    deep = seed_retriever(store, chain, options=GraphOptions(max_hops=5, seed_top_k=1, blend="seed"))
    assert not deep.uses_native
    assert [x for x, _ in short(store, deep.retrieve("q", 10))] == ["a", "b", "d", "c"]


def test_one_round_trip_per_native_retrieval(store, chain):
    before = store.runner.round_trips
    seed_retriever(store, chain, seed_top_k=1).retrieve("q", 5)
    assert store.runner.round_trips - before == 1
