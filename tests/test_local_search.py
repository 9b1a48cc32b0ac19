"""GraphRAG local search on the real server: local search's entities, text units within the token budget,
relationships and community reports, in one round trip; rendering; namespaces.

The query is axis 0. Entities Alpha (cos 1), Beta (0.8), Gamma (0.5) point near it, Delta and
Zeta away. Text units, by similarity to the query, with their token counts:

  T1 cos 0.9, 100 tokens, mentions Alpha
  T2 cos 0.8, 300 tokens, mentions Beta
  T3 cos 0.7,  50 tokens, mentions Alpha and Gamma
  T4 cos 0.2,  10 tokens, mentions Delta
  T5 no embedding, 5 tokens, mentions Beta
"""

from __future__ import annotations

import pytest

from kgrag_neo4j.communities import Community, CommunityReport
from kgrag_neo4j.errors import ConfigurationError, InputError
from kgrag_neo4j.retrieval.local_search import LocalContext, LocalSearchRetriever

from .entity_helpers import FixedEmbedder, make_entity, mention, put_document, relate, score_of, unit

QUERY = "What about Alpha?"


def build_world(store):
    _, (t1, t2, t3, t4, t5) = put_document(
        store,
        "notes.txt",
        ["Alpha one.", "Beta two.", "Alpha and Gamma three.", "Delta four.", "Beta five."],
        embeddings=[unit(0, 10, 0.9), unit(0, 11, 0.8), unit(0, 12, 0.7), unit(0, 13, 0.2), None],
        token_counts=[100, 300, 50, 10, 5],
    )
    e = {
        "Alpha": make_entity(store, "Alpha", "CONCEPT", unit(0)),
        "Beta": make_entity(store, "Beta", "CONCEPT", unit(0, 1, 0.8)),
        "Gamma": make_entity(store, "Gamma", "CONCEPT", unit(0, 2, 0.5)),
        "Delta": make_entity(store, "Delta", "CONCEPT", unit(0, 3, 0.1)),
        "Zeta": make_entity(store, "Zeta", "CONCEPT", unit(4)),
    }
    store.upsert_entities(list(e.values()))
    store.upsert_mentions(
        [
            mention(t1, e["Alpha"]),
            mention(t2, e["Beta"]),
            mention(t3, e["Alpha"]),
            mention(t3, e["Gamma"]),
            mention(t4, e["Delta"]),
            mention(t5, e["Beta"]),
        ]
    )
    store.upsert_relations(
        [
            relate(e["Alpha"], e["Beta"], "PART_OF", 0.9, description="Alpha is part of Beta"),
            relate(e["Gamma"], e["Zeta"], "USES", 0.8),
            relate(e["Beta"], e["Gamma"], "NEXT", 0.6),
            relate(e["Alpha"], e["Delta"], "NEAR", 0.3),
            relate(e["Delta"], e["Zeta"], "FAR", 0.95),
        ]
    )
    # community ids are unique database-wide, like every id: make them per namespace
    ab, gz, dz, all_ = (f"com_{name}_{store.namespace}" for name in ("ab", "gz", "dz", "all"))
    communities = [
        Community(ab, 0, (e["Alpha"].id, e["Beta"].id), all_, 2),
        Community(gz, 0, (e["Gamma"].id, e["Zeta"].id), all_, 2),
        Community(dz, 0, (e["Delta"].id,), None, 1),
        Community(all_, 1, tuple(sorted(x.id for x in e.values() if x.name != "Delta")), None, 4),
    ]
    reports = [
        CommunityReport(ab, "Alpha and Beta", "About Alpha and Beta.", "# Alpha and Beta", 2.0),
        CommunityReport(gz, "Gamma and Zeta", "About Gamma and Zeta.", "# Gamma and Zeta", 1.0),
        CommunityReport(dz, "Delta alone", "About Delta.", "# Delta", 9.0),
        CommunityReport(all_, "Everything", "About all of them.", "# All", 5.0),
    ]
    store.write_communities(communities, reports)
    return {"T1": t1, "T2": t2, "T3": t3, "T4": t4, "T5": t5, **e}


@pytest.fixture
def world(store):
    return build_world(store)


@pytest.fixture
def embedder():
    return FixedEmbedder({QUERY: unit(0)})


@pytest.mark.parametrize(
    "budget, expected",
    [
        (1000, ["T1", "T2", "T3", "T4", "T5"]),
        (465, ["T1", "T2", "T3", "T4", "T5"]),  # exactly the total
        (464, ["T1", "T2", "T3", "T4"]),
        (400, ["T1", "T2"]),  # T3 would overflow: the selection stops, though T4 and T5 would fit
        (399, ["T1"]),
        (99, []),  # the first unit alone overflows
        (0, []),
    ],
)
def test_text_units_respect_the_token_budget(store, world, embedder, budget, expected):
    ctx = LocalSearchRetriever(store, embedder, max_text_unit_tokens=budget).context(QUERY)
    assert [u.id for u in ctx.text_units] == [world[k] for k in expected]
    assert ctx.total_tokens <= budget
    assert ctx.candidate_units == 5


def test_text_units_are_ranked_by_stored_similarity(store, world, embedder):
    ctx = LocalSearchRetriever(store, embedder).context(QUERY)
    sims = [u.similarity for u in ctx.text_units]
    assert sims[:4] == pytest.approx([score_of(c) for c in (0.9, 0.8, 0.7, 0.2)], abs=1e-6)
    assert sims[4] is None  # no embedding: last
    t3 = ctx.text_units[2]
    assert t3.entity_ids == tuple(sorted([world["Alpha"].id, world["Gamma"].id]))
    assert t3.token_count == 50 and t3.content == "Alpha and Gamma three."


def test_top_k_limits(store, world, embedder):
    w = world
    full = LocalSearchRetriever(store, embedder).context(QUERY)
    assert [e.name for e in full.entities] == ["Alpha", "Beta", "Gamma", "Delta", "Zeta"]
    assert full.entities[0].score == pytest.approx(1.0, abs=1e-6)

    ctx = LocalSearchRetriever(store, embedder, top_k_entities=2, top_k_relationships=2, top_k_community_reports=1).context(QUERY)
    assert [e.name for e in ctx.entities] == ["Alpha", "Beta"]
    # only units of Alpha and Beta: T4 (Delta) is out
    assert [u.id for u in ctx.text_units] == [w["T1"], w["T2"], w["T3"], w["T5"]]
    # relationships touching Alpha or Beta, heaviest first; Delta-Zeta (0.95) touches neither
    assert [(r.source, r.type, r.target, r.weight) for r in ctx.relationships] == [
        ("Alpha", "PART_OF", "Beta", 0.9),
        ("Beta", "NEXT", "Gamma", 0.6),
    ]
    assert ctx.relationships[0].internal and not ctx.relationships[1].internal
    # of the communities of Alpha and Beta (com_ab 2.0, com_all 5.0), the higher rank;
    # com_dz ranks 9.0 but holds neither
    assert [r.title for r in ctx.community_reports] == ["Everything"]
    assert ctx.community_reports[0].matched == 2

    three = LocalSearchRetriever(store, embedder, top_k_entities=3, top_k_community_reports=3).context(QUERY)
    assert [r.title for r in three.community_reports] == ["Everything", "Alpha and Beta", "Gamma and Zeta"]
    assert [r.weight for r in three.relationships] == sorted((r.weight for r in three.relationships), reverse=True)
    assert len(three.relationships) == 4  # every relationship touching Alpha, Beta or Gamma

    none = LocalSearchRetriever(store, embedder, top_k_relationships=0, top_k_community_reports=0).context(QUERY)
    assert none.relationships == () and none.community_reports == ()


def test_one_round_trip_and_retriever_results(store, world, embedder):
    retriever = LocalSearchRetriever(store, embedder)
    before = store.runner.round_trips
    results = retriever.retrieve(QUERY, top_k=3)
    assert store.runner.round_trips - before == 1
    assert [r.id for r in results] == [world["T1"], world["T2"], world["T3"]]
    assert results[0].scores.vector == pytest.approx(score_of(0.9), abs=1e-6) == pytest.approx(results[0].score)
    assert results[2].explanation == ["text unit of entities: Alpha, Gamma"] or results[2].explanation == [
        "text unit of entities: Gamma, Alpha"
    ]
    assert results[0].document_id and results[0].content == "Alpha one."


def test_to_text_renders_the_four_sections(store, world, embedder):
    ctx = LocalSearchRetriever(store, embedder, top_k_entities=2, max_text_unit_tokens=400).context(QUERY)
    text = ctx.to_text()
    sections = ["## Entities", "## Relationships", "## Sources", "## Reports"]
    positions = [text.index(s) for s in sections]
    assert positions == sorted(positions)
    assert "- Alpha (CONCEPT): Alpha is a concept" in text
    assert "- Alpha -[PART_OF 0.90]-> Beta: Alpha is part of Beta" in text
    assert "Alpha one." in text and "Beta two." in text and "Alpha and Gamma three." not in text
    assert "### Everything\nAbout all of them." in text
    assert LocalContext().to_text().count("(none)") == 4
    assert set(ctx.to_json()) == {"entities", "text_units", "relationships", "reports", "candidate_units", "total_tokens"}


def test_defaults_and_bad_options(store, world, embedder):
    retriever = LocalSearchRetriever(store, embedder)
    assert len(retriever.retrieve(QUERY)) == 5
    for bad in ({"top_k_entities": 0}, {"max_text_unit_tokens": -1}, {"top_k_relationships": "20"}):
        with pytest.raises(ConfigurationError):
            LocalSearchRetriever(store, embedder, **bad)
    with pytest.raises(ConfigurationError):
        LocalSearchRetriever(object(), embedder)
    with pytest.raises(InputError):
        retriever.context("")


def test_an_empty_namespace_gives_an_empty_context(store, embedder):
    ctx = LocalSearchRetriever(store, embedder).context(QUERY)
    assert ctx == LocalContext()


def test_identical_namespaces_never_mix(store, world, embedder, make_namespace):
    other = store.with_namespace(make_namespace())
    theirs = build_world(other)
    mine = LocalSearchRetriever(store, embedder).context(QUERY)
    them = LocalSearchRetriever(other, embedder).context(QUERY)
    assert {e.id for e in mine.entities} == {world[k].id for k in ("Alpha", "Beta", "Gamma", "Delta", "Zeta")}
    assert {u.id for u in mine.text_units} == {world[f"T{i}"] for i in range(1, 6)}
    assert {u.id for u in them.text_units} == {theirs[f"T{i}"] for i in range(1, 6)}
    mine_ids = {e.id for e in mine.entities}
    assert all(r.source_id in mine_ids and r.target_id in mine_ids for r in mine.relationships)
    assert [r.title for r in mine.community_reports] == [r.title for r in them.community_reports]
    assert all(r.id.endswith(store.namespace) for r in mine.community_reports)
    assert all(r.id.endswith(other.namespace) for r in them.community_reports)
