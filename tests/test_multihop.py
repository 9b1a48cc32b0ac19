"""Multi-hop retrieval on a real server: a two-hop question whose second paragraph is not
close to the query, found through the entity graph that ``build_entities`` makes offline.

The corpus: "Free Guy" (close to the query), "Shawn Levy" (the second hop: far from the
query, linked to "Free Guy" because both mention Shawn Levy) and eight fillers of middling
closeness. Vectors are fixed so every score can be worked out by hand."""

from __future__ import annotations

import pytest

from kgrag_neo4j.entities.pipeline import build_entities
from kgrag_neo4j.retrieval.ppr import PPRRetriever
from kgrag_neo4j.retrieval.retrievers import GraphRetriever, VectorRetriever
from kgrag_neo4j.types import by_document

from .entity_helpers import FixedEmbedder, put_document, unit

QUERY = "Where was the director of Free Guy born?"
FREE_GUY = "Free Guy is a 2021 action comedy film directed by Shawn Levy."
LEVY = "Shawn Levy is a Canadian film director, born in Montreal."
FILLERS = [f"Gardening note {i}: water the roses and prune the hedge." for i in range(8)]


@pytest.fixture
def corpus(store):
    vectors = {QUERY: unit(0), FREE_GUY: unit(0, 1, 0.9), LEVY: unit(0, 2, 0.1)}
    for i, text in enumerate(FILLERS):
        vectors[text] = unit(0, 10 + i, 0.35 - 0.03 * i)  # cosines 0.35 .. 0.14
    emb = FixedEmbedder(vectors)
    store.ensure_embedder(emb.name, emb.dimensions)
    docs = {}
    docs["free"] = put_document(store, "Free Guy.txt", [FREE_GUY], embedder=emb)
    docs["levy"] = put_document(store, "Shawn Levy.txt", [LEVY], embedder=emb)
    for i, text in enumerate(FILLERS):
        docs[f"f{i}"] = put_document(store, f"Gardening {i}.txt", [text], embedder=emb)
    built = build_entities(store, emb)
    assert built.entity_edges >= 2  # Free Guy <-> Shawn Levy, written both ways
    return emb, docs


def ids_of(results):
    return [r.id for r in results]


def test_vector_and_seed_blend_miss_the_second_hop(store, corpus):
    emb, docs = corpus
    levy = docs["levy"][1][0]
    assert levy not in ids_of(VectorRetriever(store, emb).retrieve(QUERY, 3))
    assert levy not in ids_of(GraphRetriever(store, emb, blend="seed").retrieve(QUERY, 3))


def test_propagate_finds_the_second_hop_with_a_hand_worked_score(store, corpus):
    emb, docs = corpus
    free, levy = docs["free"][1][0], docs["levy"][1][0]
    results = GraphRetriever(store, emb).retrieve(QUERY, 3)
    assert ids_of(results)[:2] == [free, levy]
    # "Free Guy" is named in the query and only its chunk mentions it (df 1): entity score 1.0
    #   seed = 0.7 * 0.9 + 0.35 * 1.0 = 0.98
    # "Shawn Levy" is mentioned by both chunks (df 2): a references edge of weight 1 / (2 - 1)
    #   hop 1 = 0.7 * 0.1 + 0.3 * (0.98 * 1.0) * 0.7 = 0.2758 > the best filler, 0.7 * 0.35 = 0.245
    assert results[0].score == pytest.approx(0.98, abs=1e-6)
    assert results[1].score == pytest.approx(0.2758, abs=1e-6)
    assert results[2].score == pytest.approx(0.245, abs=1e-6)
    # Levy is a seed too (the corpus is smaller than seed_top_k): a seed is never "reached
    # from" another, its explanation says which seed's edge raised it
    assert results[1].graph_context == []
    assert any(free in line and "references" in line for line in results[1].explanation)
    assert results[1].scores.vector + results[1].scores.graph == pytest.approx(results[1].score)
    assert any("Free Guy" in line for line in results[0].explanation)


def test_native_and_per_hop_agree_under_propagate(store, corpus):
    emb, _ = corpus
    native = GraphRetriever(store, emb).retrieve(QUERY, 5)
    per_hop = GraphRetriever(store, emb, native=False).retrieve(QUERY, 5)
    assert [(r.id, round(r.score, 9)) for r in native] == [(r.id, round(r.score, 9)) for r in per_hop]


def test_entity_seeding_respects_filters(store, corpus):
    emb, docs = corpus
    only_fillers = by_document(*[docs[f"f{i}"][0] for i in range(8)])
    results = GraphRetriever(store, emb, filters=[only_fillers]).retrieve(QUERY, 5)
    assert {r.document_id for r in results} <= {docs[f"f{i}"][0] for i in range(8)}


def test_ppr_finds_the_second_hop_and_says_which_entity_carried_it(store, corpus):
    emb, docs = corpus
    free, levy = docs["free"][1][0], docs["levy"][1][0]
    results = PPRRetriever(store, emb).retrieve(QUERY, 3)
    assert set(ids_of(results)[:2]) == {free, levy}
    hit = next(r for r in results if r.id == levy)
    assert any("Shawn Levy" in line for line in hit.explanation)
    assert hit.graph_context and hit.graph_context[0].from_chunk_id == free
    assert hit.scores.graph == hit.score > 0


def test_ppr_respects_filters(store, corpus):
    emb, docs = corpus
    only_levy = by_document(docs["levy"][0])
    results = PPRRetriever(store, emb, filters=[only_levy]).retrieve(QUERY, 5)
    assert ids_of(results) == [docs["levy"][1][0]]


def test_the_longest_name_in_the_query_wins(store, corpus):
    emb, _ = corpus
    from kgrag_neo4j.entities.gazetteer import query_name_keys

    keys = query_name_keys("films of Free Guy fame")
    found = store.query_entity_chunks(keys, max_chunks=25)
    # "Free Guy" is an entity; "Guy" alone is not looked up as a separate name inside it
    assert len(found) == 1 and next(iter(found.values()))[1] == ["Free Guy"]
