"""Entity-boosted retrieval on the real server: the entity boost arithmetic end to end, re-ranking,
expansion, relationship-type / sequence / strength / centrality options, filters, round trips
and namespaces.

The query is axis 0. Chunk vectors are tilted from it so their cosine is known: 0.72, 0.80,
0.65, 0.55 (the original formula adds boosts to the cosine; Neo4j's normalised scores, shown as
``scores.vector``, are (1 + cos) / 2: 0.86, 0.90, 0.825, 0.775). The query entities are
Ned, Robert and Jon (their embeddings are nearest the query); the graph is
Ned -ALLY 0.9 (seq 1)- Robert -SPOUSE 0.7 (seq 5)- Cersei <-PARENT 0.9 (seq 20)- Tywin, and
Varys is alone. So, with two hops:

  A mentions Ned and Robert  0.72 + 2 * 0.3              = 1.32   (the original worked example)
  C mentions Varys           0.80 + 0                    = 0.80
  D mentions Cersei          0.65 + 0.1 * (1/1) * 0.7    = 0.72
  B mentions Tywin           0.55 + 0.1 * (1/2) * 0.9    = 0.595  (the original worked example)
"""

from __future__ import annotations

import pytest

from kgrag_neo4j.entities.centrality import entity_centrality
from kgrag_neo4j.errors import ConfigurationError, InputError
from kgrag_neo4j.retrieval.entity import EntityGraphRetriever
from kgrag_neo4j.types import by_document

from .entity_helpers import FixedEmbedder, make_entity, mention, put_document, relate, score_of, unit

QUERY = "Who are Ned Stark's allies?"


def build_world(store):
    doc1, (a, c) = put_document(
        store,
        "one.txt",
        ["Robert and Ned fought together.", "Varys whispers."],
        embeddings=[unit(0, 10, 0.72), unit(0, 11, 0.8)],
    )
    doc2, (d, b) = put_document(
        store,
        "two.txt",
        ["Cersei plots.", "Tywin sent a raven."],
        embeddings=[unit(0, 12, 0.65), unit(0, 13, 0.55)],
    )
    e = {
        "Ned": make_entity(store, "Ned Stark", "PERSON", unit(0), source_chunk_id=a),
        "Robert": make_entity(store, "Robert Baratheon", "PERSON", unit(0, 1, 0.9), source_chunk_id=a),
        "Jon": make_entity(store, "Jon Arryn", "PERSON", unit(0, 2, 0.8)),
        "Cersei": make_entity(store, "Cersei Lannister", "PERSON", unit(3), source_chunk_id=d),
        "Tywin": make_entity(store, "Tywin Lannister", "PERSON", unit(4), source_chunk_id=b),
        "Varys": make_entity(store, "Varys", "PERSON", unit(5), source_chunk_id=c),
    }
    store.upsert_entities(list(e.values()))
    store.upsert_relations(
        [
            relate(e["Ned"], e["Robert"], "ALLY", 0.9, sequence=1),
            relate(e["Robert"], e["Cersei"], "SPOUSE", 0.7, sequence=5),
            relate(e["Tywin"], e["Cersei"], "PARENT", 0.9, sequence=20),
        ]
    )
    store.upsert_mentions(
        [mention(a, e["Ned"]), mention(a, e["Robert"]), mention(c, e["Varys"]), mention(d, e["Cersei"]), mention(b, e["Tywin"])]
    )
    return {"A": a, "B": b, "C": c, "D": d, "doc1": doc1, "doc2": doc2, **e}


@pytest.fixture
def world(store):
    return build_world(store)


@pytest.fixture
def embedder():
    return FixedEmbedder({QUERY: unit(0)})


def scores(results):
    return {r.id: round(r.score, 6) for r in results}


def test_boost_arithmetic_end_to_end(store, world, embedder):
    w = world
    retriever = EntityGraphRetriever(store, embedder, max_hops=2)
    before = store.runner.round_trips
    results = retriever.retrieve(QUERY, top_k=4)
    assert store.runner.round_trips - before == 1  # the whole retrieval is one statement

    assert [r.id for r in results] == [w["A"], w["C"], w["D"], w["B"]]
    by_id = {r.id: r for r in results}
    a, b, c, d = (by_id[w[k]] for k in "ABCD")
    assert a.scores.vector == pytest.approx(score_of(0.72), abs=1e-6) == pytest.approx(0.86, abs=1e-6)
    assert a.scores.boost == pytest.approx(0.6) and a.score == pytest.approx(1.32, abs=1e-6)
    assert b.scores.vector == pytest.approx(score_of(0.55), abs=1e-6)
    assert b.scores.boost == pytest.approx(0.045) and b.score == pytest.approx(0.595, abs=1e-6)
    assert c.score == pytest.approx(0.80, abs=1e-6) and c.scores.boost == 0.0
    assert d.score == pytest.approx(0.65 + 0.07, abs=1e-6)

    # the explanation names the entities and the path that earned the boost
    assert a.explanation == [
        f"mentions query entity {n} ({i}): +0.300"
        for i, n in sorted([(w["Ned"].id, "Ned Stark"), (w["Robert"].id, "Robert Baratheon")])
    ]
    [why_b] = b.explanation
    assert "Tywin Lannister" in why_b and "distance 2, strength 0.90" in why_b and "+0.045" in why_b
    assert why_b.endswith("path: Robert Baratheon -[SPOUSE]- Cersei Lannister -[PARENT]- Tywin Lannister")
    assert c.explanation == []

    trace = retriever.last_trace
    assert {q["name"] for q in trace.query_entities} == {"Ned Stark", "Robert Baratheon", "Jon Arryn"}
    assert trace.candidates == 4 and trace.expanded == 0 and trace.round_trips == 1


def test_top_k_takes_k_times_two_candidates_then_trims(store, world, embedder):
    w = world
    results = EntityGraphRetriever(store, embedder, max_hops=2).retrieve(QUERY, top_k=2)
    # candidates are the 4 nearest chunks; after the boost A and C lead
    assert [r.id for r in results] == [w["A"], w["C"]]


@pytest.mark.parametrize(
    "options, expected",
    [
        ({"max_hops": 1}, {"A": 1.32, "C": 0.80, "D": 0.72, "B": 0.55}),
        ({"max_hops": 0}, {"A": 1.32, "C": 0.80, "D": 0.65, "B": 0.55}),
        ({"max_hops": 2, "relationship_types": ["ALLY", "SPOUSE"]}, {"A": 1.32, "C": 0.80, "D": 0.72, "B": 0.55}),
        ({"max_hops": 2, "relationship_types": ["PARENT"]}, {"A": 1.32, "C": 0.80, "D": 0.65, "B": 0.55}),
        ({"max_hops": 2, "max_sequence": 10}, {"A": 1.32, "C": 0.80, "D": 0.72, "B": 0.55}),
        ({"max_hops": 2, "max_sequence": 3}, {"A": 1.32, "C": 0.80, "D": 0.65, "B": 0.55}),
        ({"max_hops": 2, "use_relationship_strength": False}, {"A": 1.32, "C": 0.80, "D": 0.75, "B": 0.60}),
        ({"max_hops": 2, "entity_boost_direct": 0.5, "entity_boost_indirect": 0.2}, {"A": 1.72, "C": 0.80, "D": 0.79, "B": 0.64}),
        ({"max_hops": 2, "query_entities_top_k": 1}, {"A": 0.72 + 0.3 + 0.09, "C": 0.80, "D": 0.65 + 0.1 * 0.5 * 0.7, "B": 0.55}),
    ],
)
def test_options_change_the_boost_as_the_seed_says(store, world, embedder, options, expected):
    results = EntityGraphRetriever(store, embedder, **options).retrieve(QUERY, top_k=4)
    assert scores(results) == {world[k]: pytest.approx(v, abs=1e-6) for k, v in expected.items()}
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)


def test_centrality_scales_the_indirect_term(store, world, embedder):
    w = world
    degree = entity_centrality(store, "degree")
    # Robert and Cersei have 2 relationships (the most), Tywin 1
    assert degree[w["Cersei"].id] == 1.0 and degree[w["Tywin"].id] == 0.5
    retriever = EntityGraphRetriever(store, embedder, max_hops=2, centrality="degree")
    before = store.runner.round_trips
    results = retriever.retrieve(QUERY, top_k=4)
    assert store.runner.round_trips - before == 2  # centrality is read once, then cached
    got = {r.id: r for r in results}
    assert got[w["B"]].scores.boost == pytest.approx(0.045 * 0.5)
    [why_b] = got[w["B"]].explanation
    assert "strength 0.45)" in why_b and "strength = 0.90 x centrality 0.50" in why_b
    assert got[w["D"]].scores.boost == pytest.approx(0.07 * 1.0)
    assert got[w["A"]].scores.boost == pytest.approx(0.6)  # direct terms are never scaled
    before = store.runner.round_trips
    retriever.retrieve(QUERY, top_k=4)
    assert store.runner.round_trips - before == 1
    pagerank = EntityGraphRetriever(store, embedder, max_hops=2, centrality="pagerank").retrieve(QUERY, top_k=4)
    pr = entity_centrality(store, "pagerank")
    assert {r.id: r for r in pagerank}[w["B"]].scores.boost == pytest.approx(0.045 * pr[w["Tywin"].id])


def test_expansion_appends_related_entities_source_chunks(store, world, embedder):
    w = world
    # only A (normalised 0.86) and C (0.90) pass min_similarity 0.85: fewer than k = 4 candidates
    retriever = EntityGraphRetriever(store, embedder, max_hops=2, min_similarity=0.85)
    results = retriever.retrieve(QUERY, top_k=4)
    # ranked candidates first, then source chunks of related entities, strongest first:
    # Tywin (0.9) -> B, then Cersei (0.7) -> D
    assert [r.id for r in results] == [w["A"], w["C"], w["B"], w["D"]]
    b, d = results[2], results[3]
    assert b.explanation[0].startswith("expansion: source chunk of related entity Tywin Lannister")
    assert b.score == pytest.approx(0.595, abs=1e-6) and b.scores.vector == pytest.approx(score_of(0.55), abs=1e-6)
    assert d.explanation[0].startswith("expansion: source chunk of related entity Cersei Lannister")
    assert retriever.last_trace.expanded == 2 and retriever.last_trace.round_trips == 1
    # only as many as needed to reach k
    assert [r.id for r in retriever.retrieve(QUERY, top_k=3)] == [w["A"], w["C"], w["B"]]
    # without expand, or with enough candidates, nothing is appended
    off = EntityGraphRetriever(store, embedder, max_hops=2, min_similarity=0.85, expand=False)
    assert [r.id for r in off.retrieve(QUERY, top_k=4)] == [w["A"], w["C"]]
    # no related entity (0 hops): nothing to expand with
    none = EntityGraphRetriever(store, embedder, max_hops=0, min_similarity=0.85)
    assert [r.id for r in none.retrieve(QUERY, top_k=4)] == [w["A"], w["C"]]


def test_expansion_reaches_chunks_without_embeddings(store, world, embedder):
    w = world
    _, (plain,) = put_document(store, "three.txt", ["Tywin's ledger."], embeddings=[None])
    store.upsert_entities([make_entity(store, "Kevan Lannister", "PERSON", unit(6), source_chunk_id=plain)])
    kevan = make_entity(store, "Kevan Lannister", "PERSON")
    store.upsert_relations([relate(w["Robert"], kevan, "COUNSEL", 0.95)])
    store.upsert_mentions([mention(plain, kevan)])
    results = EntityGraphRetriever(store, embedder, max_hops=1).retrieve(QUERY, top_k=6)
    # 4 embedded chunks are all the candidates there are; Kevan's chunk is appended
    assert [r.id for r in results][:4] == [w["A"], w["C"], w["D"], w["B"]]
    assert results[4].id == plain
    assert results[4].scores.vector is None and results[4].score == pytest.approx(0.1 * 0.95)


def test_filters_apply_to_candidates_and_expansion(store, world, embedder):
    w = world
    results = EntityGraphRetriever(store, embedder, max_hops=2, filters=[by_document(w["doc1"])]).retrieve(QUERY, top_k=4)
    # doc1 holds A and C only; B and D (doc2) may not come back through the expansion either
    assert [r.id for r in results] == [w["A"], w["C"]]


def test_traversal_matches_entity_neighbours(store, world, embedder):
    w = world
    query_ids = [w["Ned"].id, w["Robert"].id, w["Jon"].id]
    for hops, types, seq in [(1, None, None), (2, None, None), (3, None, 10), (2, ["SPOUSE", "PARENT"], None)]:
        ctx = store.entity_boost_context(unit(0), chunk_k=4, entity_k=3, max_hops=hops, relation_types=types, max_sequence=seq)
        assert sorted(q.id for q in ctx.query_entities) == sorted(query_ids)
        from_ctx = {r.id: (r.distance, r.strength, r.path) for r in ctx.related}
        assert from_ctx == dict(store.entity_neighbours(query_ids, hops, relation_types=types, max_sequence=seq))


def test_defaults_work_and_bad_options_are_refused(store, world, embedder):
    results = EntityGraphRetriever(store, embedder).retrieve(QUERY)
    assert len(results) == 4 and results[0].id == world["A"]
    for bad in (
        {"max_hops": 4},
        {"centrality": "closeness"},
        {"query_entities_top_k": 0},
        {"entity_boost_direct": -1},
        {"max_sequence": "10"},
    ):
        with pytest.raises(ConfigurationError):
            EntityGraphRetriever(store, embedder, **bad)
    with pytest.raises(ConfigurationError, match="entity capability"):
        EntityGraphRetriever(object(), embedder)
    with pytest.raises(InputError):
        EntityGraphRetriever(store, embedder).retrieve("   ")
    with pytest.raises(InputError):
        EntityGraphRetriever(store, embedder).retrieve(QUERY, top_k=0)


def test_an_empty_namespace_returns_nothing(store, embedder):
    assert EntityGraphRetriever(store, embedder).retrieve(QUERY, top_k=3) == []


def test_identical_namespaces_never_mix(store, world, embedder, make_namespace):
    other = store.with_namespace(make_namespace())
    theirs = build_world(other)
    mine_results = EntityGraphRetriever(store, embedder, max_hops=2).retrieve(QUERY, top_k=8)
    their_results = EntityGraphRetriever(other, embedder, max_hops=2).retrieve(QUERY, top_k=8)
    assert {r.id for r in mine_results} == {world[k] for k in "ABCD"}
    assert {r.id for r in their_results} == {theirs[k] for k in "ABCD"}
    # same arithmetic on both sides: nothing leaked into the boosts
    assert sorted(r.score for r in mine_results) == pytest.approx(sorted(r.score for r in their_results))
    assert [round(r.score, 6) for r in mine_results] == [1.32, 0.8, 0.72, 0.595]


def test_an_entity_the_query_names_is_a_query_entity(store, world, embedder):
    # Varys's description is far from the query (axis 5), so only his name makes him a query
    # entity: with named query entities C (which mentions him) gains the direct boost
    w = world
    query = "What does Varys whisper?"
    named_embedder = FixedEmbedder({query: unit(0)})
    retriever = EntityGraphRetriever(store, named_embedder, max_hops=0)
    named = retriever.retrieve(query, top_k=4)
    plain = EntityGraphRetriever(store, named_embedder, max_hops=0, named_query_entities=False).retrieve(query, top_k=4)
    assert scores(plain)[w["C"]] == pytest.approx(0.80, abs=1e-6)
    assert scores(named)[w["C"]] == pytest.approx(0.80 + 0.3, abs=1e-6)
    assert "Varys" in {q["name"] for q in retriever.last_trace.query_entities}
