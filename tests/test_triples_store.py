"""Triples on the real server: the triple store on the entity graph, its lookups (and their
plans), the predicate allow-list, clear, confidence propagation, expansion, and the
GraphBuffer writing through the real store."""

from __future__ import annotations

import json
import time

import pytest

import kgrag_neo4j.store.triples as triples_module
from kgrag_neo4j.errors import ConfigurationError, InputError, TransientStoreError
from kgrag_neo4j.store.triples import DEFAULT_CONFIDENCE, triple_rows
from kgrag_neo4j.triples import GraphBuffer
from kgrag_neo4j.triples.store_writer import buffer_for_store, store_write_fn
from kgrag_neo4j.types import Chunk, ChunkEdge, Document, RelationType
from kgrag_neo4j.types.entities import entity_id, normalise_name
from kgrag_neo4j.types.triples import PredicateRegistry, Triple

SEED_TRIPLES = [
    Triple("error:timeout", "caused_by", "tool:http_client"),
    Triple("error:timeout", "in_session", "session:abc"),
    Triple("error:timeout", "resolved_by", "fix:retry_logic"),
    Triple("error:timeout", "similar_to", "error:deadline"),
    Triple("error:deadline", "caused_by", "tool:grpc_client"),
    Triple("error:deadline", "resolved_by", "fix:backoff"),
    Triple("fix:retry_logic", "learned_from", "session:abc"),
    Triple("go_concurrency", "related_to", "goroutines"),
    Triple("observation_2", "follows", "observation_1"),
    Triple("session:abc", "contains", "observation_1"),
    Triple("reflection_1", "reflects_on", "observation_1"),
]

# every lookup the seed names, plus the remaining combinations and two that find nothing
LOOKUPS = [
    pytest.param("error:timeout", None, None, id="subject"),
    pytest.param("error:timeout", "resolved_by", None, id="subject+predicate"),
    pytest.param("error:timeout", None, "tool:http_client", id="subject+object"),
    pytest.param("error:timeout", "caused_by", "tool:http_client", id="subject+predicate+object"),
    pytest.param(None, None, "observation_1", id="object"),
    pytest.param(None, "in_session", "session:abc", id="predicate+object"),
    pytest.param(None, "resolved_by", None, id="predicate"),
    pytest.param(None, None, None, id="all"),
    pytest.param("error:timeout", "follows", None, id="subject+other-predicate"),
    pytest.param("nobody", None, None, id="unknown-subject"),
]

INDEX_SEEKS = {"NodeIndexSeek", "NodeUniqueIndexSeek", "DirectedRelationshipIndexSeek", "UndirectedRelationshipIndexSeek"}
SCANS = {
    "AllNodesScan",
    "NodeByLabelScan",
    "NodeIndexScan",
    "DirectedRelationshipTypeScan",
    "UndirectedRelationshipTypeScan",
    "DirectedAllRelationshipsScan",
    "UndirectedAllRelationshipsScan",
    "DirectedRelationshipIndexScan",
    "UndirectedRelationshipIndexScan",
}


def expected(triples, subject, predicate, obj):
    def ok(t):
        return (
            (subject is None or normalise_name(t.subject) == normalise_name(subject))
            and (predicate is None or t.predicate == predicate)
            and (obj is None or normalise_name(t.object) == normalise_name(obj))
        )

    return sorted(t.key() for t in triples if ok(t))


def describe(plan, depth=0) -> str:
    line = "  " * depth + plan["operatorType"].split("@")[0] + " " + str((plan.get("args") or {}).get("Details", ""))
    return "\n".join([line, *(describe(c, depth + 1) for c in plan.get("children", ()) or ())])


def operators(plan) -> list[str]:
    out = [plan["operatorType"].split("@")[0].removesuffix("(Locking)")]
    for child in plan.get("children", ()) or ():
        out += operators(child)
    return out


def put_document(store, texts: dict[str, str], embedder=None) -> Document:
    doc = Document(id=f"doc-{store.namespace}", source="notes.md", title="Notes", content="n", content_hash="h1")
    vectors = embedder.embed(list(texts.values())) if embedder else [None] * len(texts)
    chunks = [
        Chunk(id=f"{store.namespace}-{cid}", document_id=doc.id, content=text, chunk_index=i, embedding=vec)
        for i, ((cid, text), vec) in enumerate(zip(texts.items(), vectors))
    ]
    assert store.store_document(doc, chunks) == "new"
    return doc


# --- writes and lookups ----------------------------------------------------------------------


@pytest.mark.parametrize("subject, predicate, obj", LOOKUPS)
def test_every_lookup_combination(store, subject, predicate, obj):
    assert store.add_triples(SEED_TRIPLES) == len(SEED_TRIPLES)
    found = store.query_triples(subject=subject, predicate=predicate, object=obj)
    assert [t.key() for t in found] == expected(SEED_TRIPLES, subject, predicate, obj)


@pytest.mark.parametrize("subject, predicate, obj", [p for p in LOOKUPS if p.id not in ("all",)])
def test_each_lookup_direction_seeks_an_index_and_expands(store, subject, predicate, obj):
    store.add_triples(SEED_TRIPLES)
    name, params = store.lookup_statement(subject, predicate, obj, 100)
    profile = store.runner.profile(name, **params)
    ops = operators(profile["plan"])
    assert INDEX_SEEKS & set(ops), describe(profile["plan"])
    assert not SCANS & set(ops), describe(profile["plan"])
    if subject is not None or obj is not None:
        assert any(op.startswith("Expand") for op in ops), ops  # adjacency, not a join


@pytest.mark.parametrize("subject, predicate, obj", [p for p in LOOKUPS if p.id not in ("all",)])
def test_lookup_cost_does_not_grow_with_unrelated_triples(store, subject, predicate, obj):
    store.add_triples(SEED_TRIPLES)
    name, params = store.lookup_statement(subject, predicate, obj, 100)
    before = store.runner.profile(name, **params)
    noise = [Triple(f"noise:{i}", "related_to" if i % 2 else "follows", f"noise:{i + 1}") for i in range(400)]
    store.add_triples(noise)
    after = store.runner.profile(name, **params)
    assert after["rows"] == before["rows"]
    assert after["db_hits"] == before["db_hits"], (before["db_hits"], after["db_hits"])


@pytest.mark.parametrize(
    "name",
    [
        "triples/add_triples",
        "triples/expand",
        "triples/propagate_confidence",
        "triples/clear",
        "triples/count",
        "triples/predicate_stats",
        "triples/query_by_subject",
        "triples/query_by_object",
        "triples/query_all",
    ],
)
def test_no_statement_reads_a_whole_relationship_type(store, driver, neo4j_settings, name):
    """Entity-anchored statements expand their nodes; none may fall back to the related_to_type
    index or a type scan (every edge of a predicate, in every namespace), whatever the
    statistics say. Only query_by_predicate uses that index, on purpose."""
    q = store.runner.query(name)
    with driver.session(database=neo4j_settings.database) as session:
        plan = session.run("EXPLAIN " + q.text, {p: None for p in q.param_names}).consume().plan
    ops = operators(plan)
    assert not SCANS & set(ops), describe(plan)
    assert not {"DirectedRelationshipIndexSeek", "UndirectedRelationshipIndexSeek"} & set(ops), describe(plan)
    assert INDEX_SEEKS & set(ops), describe(plan)


def test_the_all_listing_uses_the_namespace_index(store):
    store.add_triples(SEED_TRIPLES)
    name, params = store.lookup_statement()
    ops = operators(store.runner.profile(name, **params)["plan"])
    assert "NodeIndexSeek" in ops and not SCANS & set(ops), ops


def test_names_match_normalised_and_keep_the_first_spelling(store):
    store.add_triples([Triple("Error:Timeout", "caused_by", "tool:http_client")])
    store.add_triples([Triple("  error:timeout ", "resolved_by", "fix:retry")])
    found = store.query_triples(subject="ERROR:TIMEOUT")
    assert {t.subject for t in found} == {"Error:Timeout"}
    assert [t.predicate for t in found] == ["caused_by", "resolved_by"]
    assert store.query_triples(predicate="Caused By") == found[:1]


def test_limit_keeps_spo_order(store):
    store.add_triples(SEED_TRIPLES)
    every = store.query_triples(limit=1000)
    assert [t.key() for t in every] == sorted(t.key() for t in SEED_TRIPLES)
    assert store.query_triples(limit=3) == every[:3]
    with pytest.raises(InputError, match="limit"):
        store.query_triples(limit=0)


def test_adding_is_idempotent_and_duplicates_collapse(store):
    doubled = SEED_TRIPLES + SEED_TRIPLES[:4]
    assert store.add_triples(doubled) == len(SEED_TRIPLES)
    assert store.add_triples(SEED_TRIPLES) == len(SEED_TRIPLES)
    assert store.count_triples() == len(SEED_TRIPLES)
    entities = {n for t in SEED_TRIPLES for n in (t.subject, t.object)}
    assert store.graph_stats()["nodes"]["Entity"] == len(entities)
    assert store.add_triples([]) == 0


def test_readding_keeps_the_highest_weight_and_the_latest_metadata(store):
    def stored(subject):
        name, params = store.lookup_statement(subject)
        (row,) = store.runner.read(name, **params)
        return row["weight"], json.loads(row["metadata"])

    store.add_triples([Triple("a", "related_to", "b", {"weight": "0.4", "source": "first"})])
    store.add_triples([Triple("a", "related_to", "b", {"weight": "0.9", "source": "second"})])
    store.add_triples([Triple("a", "related_to", "b", {"weight": "0.2"})])
    assert stored("a") == (pytest.approx(0.9), {"weight": "0.2"})
    store.add_triples([Triple("c", "related_to", "d", {"weight": "0.5", "source": "kept"})])
    store.add_triples([Triple("c", "related_to", "d")])  # no weight means 1.0; no metadata keeps it
    assert stored("c") == (pytest.approx(1.0), {"weight": "0.5", "source": "kept"})
    with pytest.raises(InputError, match="weight must be a number in"):
        store.add_triples([Triple("a", "related_to", "b", {"weight": "2"})])


def test_metadata_types_choose_the_entity(store):
    store.add_triples(
        [
            Triple("http_client", "caused_by", "network", {"subject_type": "tool"}),
            Triple("http_client", "related_to", "requests"),
        ]
    )
    ns = store.namespace
    rows = triple_rows(ns, [Triple("http_client", "caused_by", "network", {"subject_type": "tool"})], PredicateRegistry())
    assert rows[0]["subject_id"] == entity_id(ns, "http_client", "TOOL") != entity_id(ns, "http_client", "CONCEPT")
    assert store.graph_stats()["nodes"]["Entity"] == 4  # two http_client entities, network, requests
    assert [t.predicate for t in store.query_triples(subject="http_client")] == ["caused_by", "related_to"]


# --- the predicate allow-list and injection ---------------------------------------------------


def test_an_undeclared_predicate_is_refused_and_nothing_is_written(store):
    batch = [Triple("a", "related_to", "b"), Triple("svc", "depends_on", "db")]
    with pytest.raises(InputError) as err:
        store.add_triples(batch)
    message = str(err.value)
    assert "unknown predicate 'depends_on'" in message and "allowed: caused_by" in message and "'svc'" in message
    assert store.count_triples() == 0


def test_a_declared_extra_predicate_is_accepted(store):
    registry = PredicateRegistry(extra=["depends_on"])
    assert store.add_triples([Triple("svc", "depends_on", "db")], registry=registry) == 1
    assert store.query_triples(predicate="depends_on") == [Triple("svc", "depends_on", "db")]
    with pytest.raises(InputError, match="unknown predicate"):
        store.query_triples(predicate="depends_on", registry=PredicateRegistry())


INJECTIONS = [
    "x'}) MATCH (n) DETACH DELETE n //",
    'x"}]->() WITH 1 AS one MATCH (d:Document) DETACH DELETE d RETURN 1 //',
    "$namespace",
    "a` ) DETACH DELETE (n",
    "}]->(:Entity) CALL db.clearQueryCaches() //",
]


@pytest.mark.parametrize("payload", INJECTIONS)
def test_injection_attempts_are_stored_as_plain_data(store, payload):
    put_document(store, {"c1": "some text"})
    before = store.graph_stats()
    t = Triple(payload, "related_to", payload + " object", {"note": payload, payload: "key"})
    assert store.add_triples([t]) == 1
    (back,) = store.query_triples(subject=payload)
    assert (back.subject, back.object, dict(back.metadata)) == (payload, payload + " object", dict(t.metadata))
    assert store.query_triples(object=payload + " object") == [back]
    after = store.graph_stats()
    assert after["nodes"]["Document"] == before["nodes"]["Document"] == 1
    assert after["nodes"]["Chunk"] == before["nodes"]["Chunk"] == 1
    assert after["nodes"]["Entity"] == 2


@pytest.mark.parametrize("payload", ["caused_by'}]->() DETACH DELETE n //", "x` DELETE", "Related To; MATCH"])
def test_a_predicate_is_never_cypher_text(store, payload):
    with pytest.raises(InputError, match="not a valid name"):
        Triple("a", payload, "b")
    with pytest.raises(InputError, match="not a valid name"):
        store.query_triples(predicate=payload)


def test_bad_items_are_refused_clearly(store):
    with pytest.raises(InputError, match="item 0 is a tuple"):
        store.add_triples([("a", "related_to", "b")])
    with pytest.raises(InputError, match="empty once normalised"):
        store.add_triples([Triple("!!!", "related_to", "b")])
    with pytest.raises(InputError, match="subject"):
        store.query_triples(subject="...")


# --- counts, stats, clear, isolation ---------------------------------------------------------


def test_count_and_predicate_stats(store):
    store.add_triples(SEED_TRIPLES)
    stats = store.predicate_stats()
    assert store.count_triples() == sum(stats.values()) == len(SEED_TRIPLES)
    counts = {}
    for t in SEED_TRIPLES:
        counts[t.predicate] = counts.get(t.predicate, 0) + 1
    assert stats == counts
    assert list(stats.values()) == sorted(stats.values(), reverse=True)


def test_triples_from_a_chunk_link_it_to_both_ends(store):
    put_document(store, {"c1": "the http client timed out"})
    ns = store.namespace
    store.add_triples(
        [
            Triple("error:timeout", "caused_by", "tool:http_client", {"chunk_id": f"{ns}-c1"}),
            Triple("error:timeout", "resolved_by", "fix:retry", {"chunk_id": f"{ns}-missing"}),
        ]
    )
    assert store.graph_stats()["edges"]["MENTIONS"] == 2  # the unknown chunk links nothing
    assert store.count_triples() == 2


def test_clear_removes_only_the_triple_graph(store, driver, neo4j_settings):
    put_document(store, {"c1": "one", "c2": "two"})
    ns = store.namespace
    store.store_edges([ChunkEdge(f"{ns}-c1", f"{ns}-c2", RelationType.SEQUENCE, 1.0)])
    # another writer's entities (the entity extractor): one of them is also a triple subject
    driver.execute_query(
        "MATCH (c:Chunk {id: $chunk}) "
        "MERGE (a:Entity {id: $a}) SET a.namespace = $ns, a.name = 'Ned', a.name_key = 'ned', a.type = 'CONCEPT' "
        "MERGE (b:Entity {id: $b}) SET b.namespace = $ns, b.name = 'Robb', b.name_key = 'robb', b.type = 'PERSON' "
        "MERGE (c)-[:MENTIONS {count: 1}]->(a) "
        "MERGE (a)-[:RELATED_TO {type: 'FATHER_OF', origin: 'extraction', namespace: $ns}]->(b)",
        chunk=f"{ns}-c1",
        a=entity_id(ns, "Ned", "CONCEPT"),
        b=entity_id(ns, "Robb", "PERSON"),
        ns=ns,
        database_=neo4j_settings.database,
    )
    store.add_triples(SEED_TRIPLES + [Triple("Ned", "related_to", "winterfell", {"chunk_id": f"{ns}-c2"})])
    before = store.graph_stats()
    removed = store.clear_triples()
    after = store.graph_stats()
    triple_entities = {normalise_name(n) for t in SEED_TRIPLES for n in (t.subject, t.object)} | {"winterfell"}
    assert removed == {"edges": len(SEED_TRIPLES) + 1, "mentions": 2, "kept_mentions": 0, "entities": len(triple_entities)}
    assert store.count_triples() == 0
    for label in ("Document", "Chunk"):
        assert after["nodes"][label] == before["nodes"][label] > 0
    for kind in ("HAS_CHUNK", "RELATES_TO"):
        assert after["edges"][kind] == before["edges"][kind] > 0
    assert after["nodes"]["Entity"] == 2  # Ned (still mentioned and related) and Robb
    assert after["edges"]["RELATED_TO"] == 1 and after["edges"]["MENTIONS"] == 1
    assert store.clear_triples() == {"edges": 0, "mentions": 0, "kept_mentions": 0, "entities": 0}


def test_clear_runs_in_batches(store, monkeypatch):
    monkeypatch.setattr(triples_module, "CLEAR_BATCH", 3)
    store.add_triples(SEED_TRIPLES)
    calls = []
    real = store.runner.write

    def counting(name, **params):
        calls.append(name)
        return real(name, **params)

    monkeypatch.setattr(store.runner, "write", counting)
    removed = store.clear_triples()
    assert removed["edges"] == len(SEED_TRIPLES)
    assert calls.count("triples/clear") == -(-len(SEED_TRIPLES) // 3) + 1  # last batch finds nothing
    assert store.graph_stats()["nodes"]["Entity"] == 0


def test_namespaces_are_isolated(store, make_namespace):
    other = store.with_namespace(make_namespace())
    try:
        store.add_triples(SEED_TRIPLES)
        other.add_triples(SEED_TRIPLES[:3] + [Triple("only", "related_to", "there")])
        assert store.count_triples() == len(SEED_TRIPLES)
        assert other.count_triples() == 4
        assert [t.key() for t in other.query_triples(subject="error:timeout")] == expected(
            SEED_TRIPLES[:3], "error:timeout", None, None
        )
        assert store.query_triples(subject="only") == []
        assert store.query_triples(predicate="related_to") == [Triple("go_concurrency", "related_to", "goroutines")]
        assert other.expand_triples(["tool:http_client"], max_depth=3) != []
        other.clear_triples()
        assert other.count_triples() == 0
        assert store.count_triples() == len(SEED_TRIPLES)
    finally:
        other.clear_triples()


# --- expansion and confidence propagation ----------------------------------------------------


def test_expansion_is_breadth_first_over_the_chosen_predicates(store):
    store.add_triples(SEED_TRIPLES)
    found = store.expand_triples(["tool:http_client"])
    assert [(n.name, n.predicate, n.from_name, n.depth, n.outgoing) for n in found] == [
        ("error:timeout", "caused_by", "tool:http_client", 1, False),
        ("error:deadline", "similar_to", "error:timeout", 2, True),
        ("fix:retry_logic", "resolved_by", "error:timeout", 2, True),
    ]  # in_session is not followed by default; tool:http_client itself is not returned
    deeper = store.expand_triples(["tool:http_client"], max_depth=3)
    assert {(n.name, n.depth) for n in deeper} >= {("fix:backoff", 3), ("tool:grpc_client", 3)}
    assert [n.name for n in store.expand_triples(["tool:http_client"], ["caused_by"], max_depth=3)] == ["error:timeout"]
    assert len(store.expand_triples(["tool:http_client"], max_depth=3, limit=2)) == 2
    with_sessions = store.expand_triples(["tool:http_client"], ["caused_by", "in_session"], max_depth=2)
    assert ("session:abc", 2) in {(n.name, n.depth) for n in with_sessions}
    assert store.expand_triples(["nobody"]) == [] and store.expand_triples([]) == []
    with pytest.raises(ConfigurationError, match="max_depth"):
        store.expand_triples(["x"], max_depth=4)


def test_expansion_from_chunks_bridges_entities_of_the_same_name(store):
    put_document(store, {"c1": "our HTTP client", "c2": "unrelated"})
    ns = store.namespace
    # the chunk names the tool as a TOOL entity; the triples name it as a CONCEPT
    store.add_triples([Triple("tool:http_client", "related_to", "client", {"chunk_id": f"{ns}-c1", "subject_type": "tool"})])
    store.add_triples(SEED_TRIPLES)
    found = store.expand_triples([], chunk_ids=[f"{ns}-c2", f"{ns}-c1"])
    assert found[0].name == "error:timeout" and found[0].from_name == "tool:http_client"
    assert {n.seed for n in found} == {f"{ns}-c1"}


def confidence_graph(store, prefix=""):
    p = prefix
    store.add_triples(
        [
            Triple(f"{p}error:e1", "caused_by", f"{p}tool:t"),
            Triple(f"{p}error:e1", "similar_to", f"{p}error:e2"),  # outgoing similar_to
            Triple(f"{p}error:e3", "similar_to", f"{p}error:e1"),  # incoming similar_to counts too
            Triple(f"{p}error:e1", "resolved_by", f"{p}fix:f1"),  # the failing error's own fix
            Triple(f"{p}error:e2", "resolved_by", f"{p}fix:f2"),
            Triple(f"{p}error:e3", "resolved_by", f"{p}fix:f3"),
            Triple(f"{p}error:e2", "resolved_by", f"{p}fix:f3"),  # two paths, one boost
            Triple(f"{p}fix:f2", "learned_from", f"{p}session:s"),
            Triple(f"{p}error:x", "caused_by", f"{p}tool:other"),
            Triple(f"{p}error:x", "similar_to", f"{p}error:y"),
            Triple(f"{p}error:y", "resolved_by", f"{p}fix:fy"),
        ]
    )


def test_confidence_propagation_arithmetic(store):
    confidence_graph(store)
    rate = 0.3
    first = store.propagate_confidence("tool:t")
    assert [u.name for u in first] == ["fix:f2", "fix:f3"]  # not f1, not the other tool's fy
    for u in first:
        assert u.previous == pytest.approx(DEFAULT_CONFIDENCE)
        assert u.confidence - u.previous == pytest.approx(0.1 * rate) == pytest.approx(0.03)
    second = store.propagate_confidence("tool:t")
    assert [u.previous for u in second] == [pytest.approx(u.confidence) for u in first]
    assert [u.confidence for u in second] == [pytest.approx(DEFAULT_CONFIDENCE + 2 * 0.1 * rate)] * 2
    other = store.propagate_confidence("tool:other")
    assert [(u.name, u.confidence) for u in other] == [("fix:fy", pytest.approx(DEFAULT_CONFIDENCE + 0.1 * rate))]


def test_confidence_is_capped_at_one(store):
    confidence_graph(store)
    steps = int((1.0 - DEFAULT_CONFIDENCE) / 0.1) + 2
    for _ in range(steps):
        updates = store.propagate_confidence("tool:t", propagation_rate=1.0)
    assert [u.confidence for u in updates] == [1.0, 1.0]
    assert store.propagate_confidence("tool:nothing") == []
    with pytest.raises(ConfigurationError, match="propagation_rate"):
        store.propagate_confidence("tool:t", propagation_rate=0)


# --- the GraphBuffer writing through the real store -----------------------------------------


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def numbered(n, start=0):
    return [Triple(f"obs:{i}", "follows", f"obs:{i + 1}") for i in range(start, start + n)]


def test_buffer_flushes_full_batches_to_the_store(store):
    buffer = GraphBuffer(store.add_triples, batch_size=5, flush_interval=60)
    with buffer:
        buffer.enqueue(numbered(12))
        assert wait_for(lambda: store.count_triples() == 10)
        assert buffer.pending == 2  # a partial batch waits for the interval
        assert store.count_triples() == 10
    assert store.count_triples() == 12 and buffer.stats.flushes == 3


def test_buffer_flushes_on_the_interval(store):
    buffer = GraphBuffer(store.add_triples, batch_size=1000, flush_interval=0.3)
    buffer.start()
    try:
        buffer.enqueue(numbered(3))
        started = time.monotonic()
        assert wait_for(lambda: store.count_triples() == 3)
        assert time.monotonic() - started >= 0.2
    finally:
        buffer.stop()


def test_buffer_writes_what_is_left_on_stop(store):
    buffer = GraphBuffer(store.add_triples, batch_size=1000, flush_interval=60)
    buffer.start()
    buffer.enqueue(numbered(7))
    assert store.count_triples() == 0
    assert buffer.stop(timeout=30)
    assert store.count_triples() == 7 and buffer.stats.written == 7


def test_buffer_retries_a_failing_write_then_succeeds(store):
    attempts = []

    def flaky(triples):
        attempts.append(len(triples))
        if len(attempts) == 1:
            raise TransientStoreError("leader switch")
        return store.add_triples(triples)

    with GraphBuffer(flaky, batch_size=4, flush_interval=60, retries=2, retry_backoff=0.01) as buffer:
        buffer.enqueue(numbered(4))
        assert buffer.flush(timeout=30)
    assert attempts == [4, 4]
    assert store.count_triples() == 4
    assert buffer.stats.retries == 1 and buffer.failed == []


def test_buffer_keeps_refused_triples_without_retrying(store):
    registry = PredicateRegistry(extra=["depends_on"])
    bad = Triple("svc", "depends_on", "db")
    with GraphBuffer(store.add_triples, batch_size=2, flush_interval=60, retries=3, retry_backoff=0.01) as buffer:
        buffer.enqueue([bad, Triple("a", "related_to", "b")])
        buffer.flush(timeout=30)
    assert buffer.stats.retries == 0 and buffer.failed == [bad, Triple("a", "related_to", "b")]
    assert store.count_triples() == 0
    # the same triples go through a writer that knows the extra predicate
    with buffer_for_store(store, registry=registry, batch_size=64, flush_interval=60) as again:
        again.enqueue(buffer.take_failed())
    assert store.count_triples() == 2
    assert store_write_fn(store) == store.add_triples
