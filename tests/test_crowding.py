"""Namespace-exact index reads (red-team finding 4): the vector and full-text indexes are shared
by every namespace, so another tenant holding near-duplicates of this one's data must not
change any of this tenant's answers. Each read path is run before and after another namespace
is filled with more than ``fetch_k`` better-scoring near-duplicates; the answers must be equal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kgrag_neo4j.options import GraphOptions
from kgrag_neo4j.retrieval.ppr import PPRRetriever
from kgrag_neo4j.retrieval.retrievers import GraphRetriever, HybridRetriever, VectorRetriever
from kgrag_neo4j.store.chunks import MIN_VECTOR_CANDIDATES
from kgrag_neo4j.types.entities import Entity

from .entity_helpers import FixedEmbedder, make_entity, mention, put_document, unit

QUERY = "quokka migration"
#: more than any fetch_k the reads below use (the vector stage asks for MIN_VECTOR_CANDIDATES at
#: least; similar pairs 48, entities 32), so the shared index's first answers are all the crowd's
CROWD = MIN_VECTOR_CANDIDATES + 50


@pytest.fixture
def crowd(store, make_namespace):
    return store.with_namespace(make_namespace("crowd"))


def _fill_tenant(store) -> dict[str, Any]:
    q = unit(0)
    _, near = put_document(
        store,
        "near.md",
        [
            "The quokka migration starts in spring and crosses the island, with many other words around it.",
            "Rottnest is home to the quokka, a small marsupial that lives near the coast of the island.",
            "Unrelated text about harbour ferries and their timetables.",
        ],
        embeddings=[unit(0, 1, 0.9), unit(0, 2, 0.8), unit(3)],
    )
    _, (c1,) = put_document(store, "pair-a.md", ["A ferry timetable for the island."], embeddings=[unit(10)])
    _, (c2,) = put_document(store, "pair-b.md", ["Island ferries sail every hour."], embeddings=[unit(10, 11, 0.947)])
    entities = [
        make_entity(store, name, "ANIMAL", vec)
        for name, vec in (("Quokka", unit(0, 4, 0.95)), ("Wallaby", unit(0, 5, 0.7)), ("Ferry", unit(3)))
    ]
    store.upsert_entities(entities)
    store.upsert_mentions([mention(near[0], entities[0]), mention(near[1], entities[0]), mention(near[2], entities[2])])
    return {"q": q, "c1": c1, "c2": c2}


def _fill_crowd(crowd) -> None:
    """More than fetch_k chunks that beat the tenant's on every index: identical to the query
    vector, denser in the query's terms, nearer to the tenant's pair than its partner is."""
    texts = [f"quokka migration quokka migration {i}" for i in range(CROWD)]
    put_document(crowd, "crowd-query.md", texts, embeddings=[unit(0)] * CROWD)
    put_document(
        crowd, "crowd-pair.md", [f"ferry timetable copy {i}" for i in range(CROWD)], embeddings=[unit(10, 12, 0.999)] * CROWD
    )
    crowd.upsert_entities(
        [Entity.create(f"Crowd {i}", "ANIMAL", namespace=crowd.namespace, embedding=unit(0)) for i in range(CROWD)]
    )


def _answers(store, tenant: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    q, embedder = tenant["q"], FixedEmbedder({QUERY: unit(0)})
    return {
        "search_chunks": lambda: [(r.id, round(r.score, 6)) for r in store.search_chunks(q, 3)],
        # ids only: BM25 weighs a term by how rare it is in the whole index, every namespace's
        # chunks included (a shared Lucene index has no per-namespace statistics)
        "search_chunks_keyword": lambda: [r.id for r in store.search_chunks_keyword(QUERY, 3)],
        "graph_retrieve (keyword seeds)": lambda: [
            (r.id, round(r.score, 6), any(line.startswith("keyword match") for line in r.explanation))
            for r in store.graph_retrieve(q, QUERY, 5, GraphOptions(blend="seed", seed_keyword_weight=0.5, max_hops=0))
        ],
        "graph_retrieve (keyword only)": lambda: [
            r.id
            for r in store.graph_retrieve(
                unit(7), QUERY, 5, GraphOptions(blend="seed", seed_keyword_weight=1.0, seed_top_k=2, max_hops=0)
            )
            if any(line.startswith("keyword match") for line in r.explanation)
        ],
        "similar_chunk_pairs": lambda: sorted(
            (p.source.id, p.target.id, round(p.cosine, 4)) for p in store.similar_chunk_pairs(threshold=0.5)
        ),
        "search_entities": lambda: [(s.entity.name, round(s.score, 6)) for s in store.search_entities(q, 2)],
        "entity_boost_context": lambda: (
            lambda ctx: ([c.result.id for c in ctx.candidates], [e.name for e in ctx.query_entities])
        )(store.entity_boost_context(q, chunk_k=2, entity_k=2)),
        "local_context": lambda: sorted(e.name for e in store.local_context(q, entity_k=2).entities),
        "ppr_neighbourhood": lambda: (
            lambda n: ([(c, round(x, 6)) for c, x in n.seeds], sorted((name, how) for _, name, _, how in n.query_entities))
        )(store.ppr_neighbourhood(q, seed_top_k=3, entity_vector_k=2, entity_floor=0.0)),
        "vector retriever": lambda: [r.id for r in VectorRetriever(store, embedder).retrieve(QUERY, 3)],
        "hybrid retriever": lambda: [r.id for r in HybridRetriever(store, embedder).retrieve(QUERY, 3)],
        "graph retriever": lambda: [r.id for r in GraphRetriever(store, embedder, seed_keyword_weight=0.5).retrieve(QUERY, 3)],
        "graph retriever (seed blend)": lambda: [
            r.id for r in GraphRetriever(store, embedder, blend="seed", seed_keyword_weight=0.5).retrieve(QUERY, 3)
        ],
        "ppr retriever": lambda: [r.id for r in PPRRetriever(store, embedder).retrieve(QUERY, 3)],
    }


def test_a_crowded_index_changes_no_answer_of_this_namespace(store, crowd):
    tenant = _fill_tenant(store)
    reads = _answers(store, tenant)
    before = {name: read() for name, read in reads.items()}
    # the answers are worth protecting: keyword seeds and the 0.947 pair are there
    assert before["search_chunks_keyword"] and any(k for _, _, k in before["graph_retrieve (keyword seeds)"])
    assert len(before["graph_retrieve (keyword only)"]) == 2
    assert (tenant["c1"], tenant["c2"], 0.947) in before["similar_chunk_pairs"]
    assert ("Quokka", "resembles") in before["ppr_neighbourhood"][1]

    _fill_crowd(crowd)
    after = {name: read() for name, read in reads.items()}
    assert {k: v for k, v in after.items() if v != before[k]} == {}

    # similarity edges built now still find the partner beyond the crowd
    assert store.build_similarity_edges([tenant["c1"]], top_k=1, threshold=0.9) == 1
    assert [(e.source_id, e.target_id) for e in store.get_edges([tenant["c1"]])] == [(tenant["c1"], tenant["c2"])]
