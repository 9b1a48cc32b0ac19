"""graph/retrieve_vector_seeded, the store's statement for plain graph retrieval (vector seeds,
no filters, at most 2 hops), returns graph/retrieve's rows exactly, on a real server: on a
random graph with tied weights, edges in both directions, seeds that reach seeds, and every
option it takes. The store uses it only when nothing it lacks is asked for."""

from __future__ import annotations

import itertools
import random

import pytest

from kgrag_neo4j.options import GraphOptions
from kgrag_neo4j.types import Chunk, ChunkEdge, Document, RelationType, by_meta

from .conftest import TEST_DIMENSIONS

RELATIONS = [RelationType.SEQUENCE, RelationType.SIMILAR_TO, RelationType.ELABORATES]
NO_FILTER = {"document_ids": None, "source_prefix": None, "meta_pairs": [], "created_after": None, "created_before": None}
#: the vector slot the test namespaces use (slot 1: nothing recorded, vectors of the tests' size)
SLOT_1 = {"vector_property": "embedding", "chunk_index": "chunk_embedding"}


def vector(rng: random.Random, base: list[float] | None = None, noise: float = 1.0) -> list[float]:
    v = [rng.gauss(0, 1) * noise + (base[i] if base else 0.0) for i in range(TEST_DIMENSIONS)]
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


@pytest.fixture
def random_graph(store):
    """60 chunks in 3 documents around 4 topics; sequence edges (weight 1.0) inside documents
    and 150 random typed edges with weights from a few values (so best edges tie)."""
    rng = random.Random(20261123)
    topics = [vector(rng) for _ in range(4)]
    ids = []
    for d in range(3):
        doc = Document(id=f"{store.namespace}-d{d}", source=f"d{d}.txt", title=f"D{d}", content="x", content_hash=f"h{d}")
        chunks = [
            Chunk(
                id=f"{store.namespace}-d{d}c{i:02d}",
                document_id=doc.id,
                content=f"chunk {d}/{i}",
                chunk_index=i,
                embedding=vector(rng, topics[(d + i) % 4], noise=0.08),
            )
            for i in range(20)
        ]
        store.store_document(doc, chunks)
        ids += [c.id for c in chunks]
    edges = [ChunkEdge(a, b, RelationType.SEQUENCE, 1.0) for a, b in zip(ids, ids[1:]) if a[:-2] == b[:-2]]
    for _ in range(150):
        a, b = rng.sample(ids, 2)
        edges.append(
            ChunkEdge(
                a, b, rng.choice(RELATIONS), rng.choice([0.4, 0.6, 0.6, 0.8, 1.0]), description=rng.choice(["", "why", "because"])
            )
        )
    store.store_edges(edges)
    return rng, topics


def full_params(lean: dict) -> dict:
    return dict(
        lean,
        keyword_query="",
        keyword_weight=0.0,
        rrf_k=60,
        filter=NO_FILTER,
        entity_keys=[],
        entity_seed_weight=0.0,
        entity_max_chunks=25,
    )


def lean_rows(store, params: dict, q) -> list[dict]:
    """The lean statement's rows: one record, its ``rows`` column."""
    records = store.runner.read("graph/retrieve_vector_seeded", **params, embedding=q)
    assert len(records) == 1 and list(records[0]) == ["rows"]
    return records[0]["rows"]


def test_the_lean_statement_returns_graph_retrieve_rows_exactly(store, random_graph):
    rng, topics = random_graph
    queries = [vector(rng, t, noise=0.3) for t in topics]
    compared = hop2_rows = 0
    grid = itertools.product(
        ["seed", "propagate"],
        [True, False],
        [0, 1, 2],
        [None, ["similar_to", "sequence"]],
        [0.0, 0.7],
        [3, 25],
        [2, 8],
        [(1.0, 0.7, 0.5), (1.0, 0.2, 0.9)],
    )
    for i, (blend, both, hops, relations, min_weight, top_k, seeds, decay) in enumerate(grid):
        # refined seeds on every other combination; with as few candidates as seeds on some,
        # so the seeds come from the index's few (on 60 chunks the index is exact, so
        # test_refine_seeds.py shows what refining finds)
        refine = i % 2 == 1
        lean = dict(
            namespace=store.namespace,
            **SLOT_1,
            seed_top_k=seeds,
            fetch_k=seeds if i % 4 == 1 else 200,
            max_hops=hops,
            hop_decay=list(decay),
            vector_weight=0.7,
            graph_weight=0.3,
            bidirectional=both,
            relations=relations,
            min_weight=min_weight,
            top_k=top_k,
            blend=blend,
            refine_seeds=refine,
        )
        for q in queries[:2]:
            a = store.runner.read("graph/retrieve", **full_params(lean), embedding=q)
            b = lean_rows(store, lean, q)
            assert a == b, (blend, both, hops, relations, min_weight, top_k, seeds, decay, refine)
            compared += 1
            hop2_rows += sum(r["hop"] == 2 for r in a)
    assert compared == 768
    assert hop2_rows > 0  # hop 2 was expanded where it could place rows, and matched


def test_hop_two_is_skipped_only_when_it_cannot_place_a_row(store, random_graph):
    """A seed ranking where hop-1 chunks fill the result above the hop-2 bound: the lean
    statement does not expand hop 2, and its rows still equal graph/retrieve's; with a larger
    top_k hop 2 is expanded and its rows appear."""
    rng, topics = random_graph
    q = vector(rng, topics[0], noise=0.3)
    base = dict(
        namespace=store.namespace,
        **SLOT_1,
        seed_top_k=8,
        fetch_k=200,
        max_hops=2,
        hop_decay=[1.0, 0.7, 0.5],
        vector_weight=0.7,
        graph_weight=0.3,
        bidirectional=True,
        relations=None,
        min_weight=0.0,
        blend="seed",
        refine_seeds=False,
    )
    small = dict(base, top_k=10)
    rows = lean_rows(store, small, q)
    assert [r["hop"] for r in rows].count(2) == 0
    assert rows == store.runner.read("graph/retrieve", **full_params(small), embedding=q)
    pruned = store.runner.profile("graph/retrieve_vector_seeded", **small, embedding=q)
    large = dict(base, top_k=60)
    rows = lean_rows(store, large, q)
    assert any(r["hop"] == 2 for r in rows)
    assert rows == store.runner.read("graph/retrieve", **full_params(large), embedding=q)
    expanded = store.runner.profile("graph/retrieve_vector_seeded", **large, embedding=q)
    assert pruned["db_hits"] < expanded["db_hits"]


@pytest.mark.parametrize(
    "options, query, filters, statement",
    [
        (dict(blend="seed"), "", (), "graph/retrieve_vector_seeded"),
        (dict(blend="propagate", entity_seed_weight=0.0), "", (), "graph/retrieve_vector_seeded"),
        (dict(blend="seed", max_hops=3), "", (), "graph/retrieve"),
        (dict(blend="seed", seed_keyword_weight=0.3), "chunk", (), "graph/retrieve"),
        (dict(blend="seed"), "", (by_meta("k", "v"),), "graph/retrieve"),
    ],
)
def test_the_store_picks_the_lean_statement_only_when_it_can(store, random_graph, options, query, filters, statement):
    rng, topics = random_graph
    names = []
    read = store.runner.read

    def spy(name, /, **params):
        names.append(name)
        return read(name, **params)

    store.runner.read = spy
    try:
        store.graph_retrieve(vector(rng, topics[1], noise=0.3), query, 5, GraphOptions(**options), filters)
    finally:
        del store.runner.read
    assert names == [statement]
