"""The entity capability of Neo4jStore and build_entities, on the real server: writes and their
merge rules, vector search, the one-statement BFS, centrality, extraction (scripted chat model
and offline), resolution across documents, deletes, namespaces."""

from __future__ import annotations

import json
import time

import pytest

from kgrag_neo4j.communities.build import build_communities
from kgrag_neo4j.entities import LLMEntityExtractor
from kgrag_neo4j.entities.centrality import entity_centrality, normalise_max, pagerank
from kgrag_neo4j.entities.names import maintained_entity_id
from kgrag_neo4j.entities.pipeline import build_entities, entity_embedding_text
from kgrag_neo4j.errors import ConfigurationError, DimensionMismatchError, InputError, NotFoundError
from kgrag_neo4j.ids import chunk_id, content_hash, document_id
from kgrag_neo4j.types import Chunk, Document
from kgrag_neo4j.types.entities import Entity

from .conftest import TEST_DIMENSIONS
from .entity_helpers import FixedEmbedder, ScriptedChat, make_entity, mention, put_document, relate, unit

# --- pure: PageRank ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "nodes, edges, expect",
    [
        # a star: the centre collects the most rank, the leaves tie
        (["c", "a", "b", "d"], [("c", "a", 1.0), ("c", "b", 1.0), ("c", "d", 1.0)], ["c", {"a", "b", "d"}]),
        # a cycle: everybody ties
        (["a", "b", "c"], [("a", "b", 1.0), ("b", "c", 1.0), ("c", "a", 1.0)], [{"a", "b", "c"}]),
        # a heavier edge pulls more rank to its end
        (["a", "b", "c"], [("a", "b", 0.9), ("a", "c", 0.1)], ["a", "b", "c"]),
        # an isolated node keeps the teleport share only
        (["a", "b", "z"], [("a", "b", 1.0)], [{"a", "b"}, "z"]),
    ],
)
def test_pagerank_orders_nodes(nodes, edges, expect):
    pr = pagerank(nodes, edges)
    assert sum(pr.values()) == pytest.approx(1.0)
    groups = [g if isinstance(g, set) else {g} for g in expect]
    for group in groups:
        assert len({round(pr[n], 9) for n in group}) == 1
    for higher, lower in zip(groups, groups[1:]):
        assert min(pr[n] for n in higher) > max(pr[n] for n in lower)


def test_pagerank_does_not_depend_on_input_order():
    edges = [("a", "b", 0.5), ("b", "c", 1.0), ("c", "d", 0.2), ("a", "d", 0.7)]
    assert pagerank("abcd", edges) == pagerank("dcba", list(reversed(edges)))


@pytest.mark.parametrize(
    "edges, message",
    [([("a", "x", 1.0)], "not a node"), ([("a", "b", -1.0)], "weight"), ([("a", "b")], "source, target, weight")],
)
def test_pagerank_rejects_bad_edges(edges, message):
    with pytest.raises(InputError, match=message):
        pagerank(["a", "b"], edges)


@pytest.mark.parametrize(
    "scores, expected",
    [({"a": 2.0, "b": 1.0}, {"a": 1.0, "b": 0.5}), ({"a": 0.0}, {"a": 0.0}), ({}, {})],
)
def test_normalise_max(scores, expected):
    assert normalise_max(scores) == expected


# --- writes --------------------------------------------------------------------------------


def count(driver, query, **params):
    records, _, _ = driver.execute_query(query, **params)
    return records[0][0]


def test_upsert_entities_keeps_the_longer_description_with_its_embedding(store, driver):
    short = make_entity(store, "Ned Stark", "PERSON", unit(1), description="A lord")
    assert store.upsert_entities([short]) == 1
    longer = Entity.create(
        "ned  STARK",
        "person",
        namespace=store.namespace,
        description="Lord of Winterfell, Warden of the North",
        embedding=unit(2),
        source_chunk_id="chk_other",
    )
    assert longer.id == short.id
    store.upsert_entities([longer])
    shorter_again = Entity.create("Ned Stark", "PERSON", namespace=store.namespace, description="x", embedding=unit(3))
    store.upsert_entities([shorter_again])

    [hit] = store.search_entities(unit(2), 1)
    assert hit.entity.name == "Ned Stark"  # the first name stays
    assert hit.entity.description == "Lord of Winterfell, Warden of the North"
    assert hit.score == pytest.approx(1.0, abs=1e-6)  # the embedding of the kept description
    assert count(driver, "MATCH (e:Entity {namespace: $ns}) RETURN count(e)", ns=store.namespace) == 1


def test_upsert_entities_refuses_other_namespaces_and_bad_vectors(store):
    foreign = Entity.create("Ned Stark", "PERSON", namespace="somewhere-else")
    with pytest.raises(InputError, match="namespace"):
        store.upsert_entities([foreign])
    with pytest.raises(DimensionMismatchError):
        store.upsert_entities([make_entity(store, "Ned", "PERSON", [1.0, 0.0])])
    with pytest.raises(InputError):
        store.upsert_entities(["Ned Stark"])


def test_an_entity_id_used_in_another_namespace_cannot_be_taken_over(store, make_namespace):
    other = store.with_namespace(make_namespace())
    e = make_entity(other, "Ned Stark", "PERSON", unit(1))
    other.upsert_entities([e])
    # the same id claimed for this namespace: refused (the batch rolled back), nothing crosses
    smuggled = Entity(id=e.id, name="Ned Stark", type="PERSON", namespace=store.namespace)
    mine = make_entity(store, "Arya Stark", "PERSON", unit(2))
    with pytest.raises(InputError, match="another namespace"):
        store.upsert_entities([smuggled, mine])
    assert store.known_entities() == []
    assert store.search_entities(unit(1), 5) == []


def test_upsert_relations_keeps_max_weight_longest_description_earliest_sequence(store, driver):
    a, b = make_entity(store, "Ned Stark", "PERSON"), make_entity(store, "Robert Baratheon", "PERSON")
    store.upsert_entities([a, b])
    store.upsert_relations([relate(a, b, "ALLY", 0.4, sequence=7, description="friends")])
    store.upsert_relations([relate(a, b, "ALLY", 0.9, sequence=9, description="x")])
    store.upsert_relations([relate(a, b, "ALLY", 0.2, sequence=3, description="fought together at the Trident")])
    store.upsert_relations([relate(b, a, "KING_OF", 0.5)])
    records, _, _ = driver.execute_query(
        "MATCH (:Entity {id: $a})-[r:RELATED_TO {type: 'ALLY'}]->(:Entity {id: $b}) "
        "RETURN r.weight AS w, r.sequence AS s, r.description AS d, count(*) AS n",
        a=a.id,
        b=b.id,
    )
    row = records[0]
    assert (row["w"], row["s"], row["d"], row["n"]) == (0.9, 3, "fought together at the Trident", 1)
    assert count(driver, "MATCH (:Entity {namespace: $ns})-[r:RELATED_TO]->() RETURN count(r)", ns=store.namespace) == 2
    # ends outside the namespace are skipped, self relations refused
    ghost = Entity.create("Ghost", "ANIMAL", namespace=store.namespace)
    assert store.upsert_relations([relate(a, ghost, "OWNS", 0.5)]) == 0
    with pytest.raises(InputError):
        store.upsert_relations([relate(a, a, "SELF", 0.5)])


def test_mentions_text_units_and_source_chunks(store):
    doc, (c0, c1) = put_document(store, "a.txt", ["Ned Stark rode north.", "Ned Stark and Robert Baratheon."])
    ned = make_entity(store, "Ned Stark", "PERSON", source_chunk_id=c0)
    robert = make_entity(store, "Robert Baratheon", "PERSON", source_chunk_id=c1)
    store.upsert_entities([ned, robert])
    assert store.upsert_mentions([mention(c0, ned, 1), mention(c1, ned, 1), mention(c1, robert, 1)]) == 3
    store.upsert_mentions([mention(c0, ned, 2)])  # the count is set, not added
    assert store.chunk_mentions([c0, c1, "chk_missing"]) == {c0: [ned.id], c1: sorted([ned.id, robert.id])}

    units = store.entity_text_units([ned.id])
    assert [u.chunk.id for u in units] == [c0, c1]  # 2 mentions before 1
    assert units[0].mentions == 2 and units[0].chunk.content == "Ned Stark rode north."
    assert units[0].chunk.token_count == 4

    sources = store.entity_source_chunks([ned.id, robert.id])
    assert {k: v.id for k, v in sources.items()} == {ned.id: c0, robert.id: c1}


def test_list_and_get_entity_by_name(store):
    doc, (c0, c1) = put_document(store, "a.txt", ["Ned Stark.", "Ned Stark and Robert."])
    ned = make_entity(store, "Ned Stark", "PERSON", source_chunk_id=c0)
    ned_ship = make_entity(store, "Ned Stark", "SHIP")  # same name, other type: another entity
    robert = make_entity(store, "Robert Baratheon", "PERSON")
    store.upsert_entities([ned, ned_ship, robert])
    store.upsert_mentions([mention(c0, ned), mention(c1, ned), mention(c1, robert)])
    store.upsert_relations([relate(robert, ned, "ALLY", 0.9), relate(ned, ned_ship, "SAILS", 0.2)])

    listing = store.list_entities()
    assert [(x.entity.name, x.entity.type, x.mentions) for x in listing][:2] == [
        ("Ned Stark", "PERSON", 2),
        ("Robert Baratheon", "PERSON", 1),
    ]
    assert len(store.list_entities(limit=1)) == 1

    found = store.get_entity_by_name("  ned stark. ")
    assert [(d.entity.type, d.mention_total) for d in found] == [("PERSON", 2), ("SHIP", 0)]
    person = found[0]
    assert [(r["other"], r["type"], r["outgoing"]) for r in person.relations] == [
        ("Robert Baratheon", "ALLY", False),
        ("Ned Stark", "SAILS", True),
    ]
    assert {m["chunk_id"] for m in person.mentions} == {c0, c1}
    assert len(store.get_entity_by_name("Ned Stark", limit=1)[0].mentions) == 1
    with pytest.raises(NotFoundError):
        store.get_entity_by_name("Arya Stark")


# --- traversal -----------------------------------------------------------------------------


@pytest.fixture
def westeros(store):
    """Ned -ALLY 0.9- Robert -SPOUSE 0.7 (seq 5)- Cersei <-PARENT 0.9 (seq 20)- Tywin;
    Ned -ALLY 0.4- Jon -FOSTER 0.8- Robert; Tywin -LIEGE 0.3- Varys."""
    names = ["Ned Stark", "Robert Baratheon", "Cersei Lannister", "Tywin Lannister", "Jon Arryn", "Varys"]
    e = {n.split()[0]: make_entity(store, n, "PERSON", unit(i)) for i, n in enumerate(names)}
    store.upsert_entities(list(e.values()))
    store.upsert_relations(
        [
            relate(e["Ned"], e["Robert"], "ALLY", 0.9, sequence=1),
            relate(e["Robert"], e["Cersei"], "SPOUSE", 0.7, sequence=5),
            relate(e["Tywin"], e["Cersei"], "PARENT", 0.9, sequence=20),
            relate(e["Ned"], e["Jon"], "ALLY", 0.4),
            relate(e["Jon"], e["Robert"], "FOSTER", 0.8),
            relate(e["Tywin"], e["Varys"], "LIEGE", 0.3),
        ]
    )
    return e


def test_neighbours_distance_strength_and_path(store, westeros):
    e = westeros
    got = store.entity_neighbours([e["Ned"].id], 3)
    by_name = {k: got[v.id] for k, v in e.items() if v.id in got}
    assert set(by_name) == {"Robert", "Jon", "Cersei", "Tywin"}  # Varys is 4 hops away
    # first reach decides distance; the best edge at that hop decides strength and path
    assert by_name["Robert"] == (1, 0.9, (("Ned Stark", "ALLY"),))
    assert by_name["Jon"] == (1, 0.4, (("Ned Stark", "ALLY"),))
    assert by_name["Cersei"] == (2, 0.7, (("Ned Stark", "ALLY"), ("Robert Baratheon", "SPOUSE")))
    assert by_name["Tywin"].distance == 3 and by_name["Tywin"].strength == 0.9  # incoming edge followed
    assert by_name["Tywin"].path[-1] == ("Cersei Lannister", "PARENT")
    assert store.entity_neighbours([e["Ned"].id], 1).keys() == {e["Robert"].id, e["Jon"].id}
    assert store.entity_neighbours([e["Ned"].id], 0) == {}
    # start entities are never their own neighbours, even when reachable from each other
    both = store.entity_neighbours([e["Ned"].id, e["Robert"].id], 1)
    assert e["Ned"].id not in both and e["Robert"].id not in both
    assert both[e["Cersei"].id].distance == 1


def test_neighbours_prefers_the_heavier_edge_at_the_same_hop(store, westeros):
    e = westeros
    # Robert is reached at hop 1 from Ned (0.9) and from Jon (0.8): the heavier wins
    got = store.entity_neighbours([e["Ned"].id, e["Jon"].id], 1)
    assert got[e["Robert"].id] == (1, 0.9, (("Ned Stark", "ALLY"),))


@pytest.mark.parametrize(
    "types, max_sequence, expected",
    [
        (None, None, {"Robert", "Jon", "Cersei", "Tywin"}),
        (["ALLY", "SPOUSE"], None, {"Robert", "Jon", "Cersei"}),
        (["ALLY"], None, {"Robert", "Jon"}),
        (None, 10, {"Robert", "Jon", "Cersei"}),  # PARENT (20) is later; Jon's edges have no sequence
        (None, 3, {"Robert", "Jon"}),  # SPOUSE (5) is later too
        (None, 0, {"Jon", "Robert"}),  # via Jon's timeless FOSTER edge
    ],
)
def test_neighbours_filters(store, westeros, types, max_sequence, expected):
    e = westeros
    got = store.entity_neighbours([e["Ned"].id], 3, relation_types=types, max_sequence=max_sequence)
    assert {k for k, v in e.items() if v.id in got} - {"Varys"} == expected


def test_neighbours_rejects_bad_options(store, westeros):
    with pytest.raises(ConfigurationError):
        store.entity_neighbours([westeros["Ned"].id], 4)
    with pytest.raises(ConfigurationError):
        store.entity_neighbours([westeros["Ned"].id], 1, max_sequence="10")
    with pytest.raises(InputError):
        store.entity_neighbours(westeros["Ned"].id, 1)


def test_centrality_degree_and_pagerank(store, westeros):
    e = westeros
    degree = entity_centrality(store, "degree")
    # Robert has 3 relationships, the most: 1.0; Ned 2/3; Varys 1/3
    assert degree[e["Robert"].id] == 1.0
    assert degree[e["Ned"].id] == pytest.approx(2 / 3)
    assert degree[e["Varys"].id] == pytest.approx(1 / 3)
    pr = entity_centrality(store, "pagerank")
    assert max(pr.values()) == 1.0 and set(pr) == {v.id for v in e.values()}
    assert pr[e["Robert"].id] == 1.0  # the hub
    assert pr[e["Varys"].id] < pr[e["Tywin"].id]
    with pytest.raises(ConfigurationError):
        entity_centrality(store, "closeness")


def test_read_entity_graph_in_one_round_trip(store, westeros):
    before = store.runner.round_trips
    graph = store.read_entity_graph()
    assert store.runner.round_trips - before == 1
    assert len(graph.entities) == 6 and len(graph.relations) == 6
    assert ("Tywin", "Cersei", 0.9) in {
        (next(k for k, v in westeros.items() if v.id == s), next(k for k, v in westeros.items() if v.id == t), w)
        for s, t, w in graph.weighted_edges()
    }


# --- build_entities: extraction rules with a scripted chat model -----------------------------


def test_build_entities_with_a_scripted_chat_model(store, hashing_embedder, driver):
    doc, (c0, c1) = put_document(
        store,
        "got.txt",
        ["Ned Stark rode to King's Landing with his ward.", "Robert Baratheon greeted Ned Stark at the gate."],
        embedder=hashing_embedder,
    )
    reply = {
        "entities": [
            {"name": "Ned Stark", "type": "person", "description": "Lord of Winterfell", "chunk_ids": [c0, c1]},
            {"name": "King's Landing", "type": "LOC", "description": "The capital", "chunk_ids": ["chk_invented"]},
            {"name": "Robert Baratheon", "type": "PERSON", "description": "The king", "chunk_ids": []},
            {"name": "Dragonstone", "type": "LOCATION", "description": "Never in the text", "chunk_ids": []},
            {"name": "  ...  ", "type": "OTHER", "description": "", "chunk_ids": [c0]},
        ],
        "relationships": [
            {"source": "Robert Baratheon", "target": "Ned Stark", "type": "ally", "strength": 0.9, "description": "old friends"},
            {"source": "Ned Stark", "target": "Ned Stark", "type": "SELF", "strength": 1.0},
            {"source": "Ned Stark", "target": "Jaime Lannister", "type": "ENEMY", "strength": 0.5},
            {"source": "Ned Stark", "target": "King's Landing", "type": "TRAVELS_TO", "strength": 7},
            {"source": "Ned Stark", "target": "King's Landing", "type": "VISITS"},
        ],
    }
    chat = ScriptedChat(json.dumps(reply))
    result = build_entities(store, hashing_embedder, extractor=chat)

    assert len(chat.calls) == 1  # two chunks fit one batch of the default size
    assert result.dropped == {
        "unknown_chunk": 1,
        "ungrounded": 1,  # Dragonstone: no chunk given, none mentions it
        "empty_name": 1,
        "self_relation": 1,
        "unknown_endpoint": 1,
        "bad_strength": 1,
    }
    names = {(x.entity.name, x.entity.type): x.mentions for x in store.list_entities()}
    # King's Landing claimed an unknown chunk, then was grounded by a search of its name
    assert names == {("Ned Stark", "PERSON"): 2, ("King's Landing", "LOCATION"): 1, ("Robert Baratheon", "PERSON"): 1}
    assert result.entities == 3 and result.mentions == 4 and result.relations == 2
    [ned] = store.get_entity_by_name("Ned Stark")
    rels = {(r["type"], r["other"], r["weight"]) for r in ned.relations}
    assert rels == {("ALLY", "Robert Baratheon", 0.9), ("VISITS", "King's Landing", 1.0)}
    assert ned.entity.source_chunk_id == c0
    # the description embedding was stored: searching with it finds the entity first
    [top] = store.search_entities(hashing_embedder.embed([entity_embedding_text(ned.entity)])[0], 1)
    assert top.entity.id == ned.entity.id and top.score == pytest.approx(1.0, abs=1e-5)


def test_build_entities_refuses_an_extractor_of_another_namespace(store, hashing_embedder):
    chat = ScriptedChat("{}")
    with pytest.raises(ConfigurationError, match="namespace"):
        build_entities(store, hashing_embedder, extractor=LLMEntityExtractor(chat, namespace="elsewhere"))
    with pytest.raises(ConfigurationError):
        build_entities(store, hashing_embedder, extractor=object())


# --- build_entities: offline extraction, resolution, deletes, namespaces ----------------------

DOC_A = [
    "Ned Stark is the Lord of Winterfell. Ned Stark married Catelyn Stark.",
    "Robert Baratheon and Ned Stark fought together in the rebellion.",
]
DOC_B = [
    "Cersei Lannister married Robert Baratheon at the Great Sept of Baelor.",
    "Tywin Lannister is the father of Cersei Lannister.",
]


def _entities_of(store):
    return {(x.entity.name, x.entity.type): x.mentions for x in store.list_entities()}


def test_offline_build_on_a_small_fixture(store, hashing_embedder, driver):
    doc_a, chunks_a = put_document(store, "a.txt", DOC_A, embedder=hashing_embedder)
    result = build_entities(store, hashing_embedder)
    assert (result.documents, result.chunks) == (1, 2)
    found = _entities_of(store)
    assert found == {
        ("Ned Stark", "PERSON"): 2,
        ("Catelyn Stark", "PERSON"): 1,
        ("Winterfell", "LOCATION"): 1,
        ("Robert Baratheon", "PERSON"): 1,
    }
    # CO_OCCURS per sentence, weighted by closeness: Ned Stark and Winterfell 4 words apart
    # (1 / 1.4 -> 0.714 / 1.714), Catelyn Stark and Robert Baratheon 1 word from Ned Stark
    # (1 / 1.1 -> 0.909 / 1.909); Catelyn and Winterfell share no sentence
    assert result.relations == 3
    [ned] = store.get_entity_by_name("Ned Stark")
    got = {r["other"]: round(r["weight"], 4) for r in ned.relations}
    assert got == {"Winterfell": 0.4167, "Catelyn Stark": 0.4762, "Robert Baratheon": 0.4762}
    assert all(r["type"] == "CO_OCCURS" for r in ned.relations)
    assert ned.entity.source_chunk_id == chunks_a[0]
    # every entity got its description embedding
    assert count(driver, "MATCH (e:Entity {namespace: $ns}) WHERE e.embedding IS NULL RETURN count(e)", ns=store.namespace) == 0


def test_build_is_idempotent(store, hashing_embedder, driver):
    put_document(store, "a.txt", DOC_A, embedder=hashing_embedder)
    build_entities(store, hashing_embedder)
    query = (
        "MATCH (e:Entity {namespace: $ns}) "
        "RETURN count(e) + COUNT { (:Entity {namespace: $ns})-[:RELATED_TO]->() } * 1000 "
        "+ COUNT { (:Chunk {namespace: $ns})-[:MENTIONS]->() } * 1000000"
    )
    first = count(driver, query, ns=store.namespace)
    build_entities(store, hashing_embedder)
    assert count(driver, query, ns=store.namespace) == first


def test_same_entity_in_two_documents_is_one_node_also_when_ingested_later(store, hashing_embedder, driver):
    doc_a, chunks_a = put_document(store, "a.txt", DOC_A, embedder=hashing_embedder)
    build_entities(store, hashing_embedder)
    robert_id = maintained_entity_id(store.namespace, "robert baratheon")
    time.sleep(1.1)  # a chunk's created_at counts seconds: "later" is a later second
    doc_b, chunks_b = put_document(store, "b.txt", DOC_B, embedder=hashing_embedder)
    result = build_entities(store, hashing_embedder, document_ids=[doc_b])
    assert result.documents == 1
    records, _, _ = driver.execute_query(
        "MATCH (e:Entity {namespace: $ns, name_key: 'robert baratheon'}) "
        "MATCH (c:Chunk)-[:MENTIONS]->(e) RETURN e.id AS id, collect(DISTINCT c.document_id) AS docs",
        ns=store.namespace,
    )
    assert len(records) == 1
    assert records[0]["id"] == robert_id
    assert sorted(records[0]["docs"]) == sorted([doc_a, doc_b])
    # the source chunk is the earliest one mentioning it (created, then document, then index)
    [robert] = store.get_entity_by_name("Robert Baratheon")
    assert robert.entity.source_chunk_id == chunks_a[1]


def test_embedding_similarity_merge(store, driver, make_namespace):
    class DescriptionEmbedder(FixedEmbedder):
        """Embeds only the description part, so two spellings with one description coincide."""

        def embed(self, texts, *, input_type="document"):
            from kgrag_neo4j.providers.hashing import HashingEmbedder

            inner = HashingEmbedder(TEST_DIMENSIONS)
            return inner.embed([t.split(": ", 1)[-1] for t in texts])

    text = "Eddard Stark fought the war. Ned Stark fought the war."
    put_document(store, "a.txt", [text], embeddings=[unit(0)])
    reply = {
        "entities": [
            {"name": "Eddard Stark", "type": "PERSON", "description": "Lord of Winterfell", "chunk_ids": []},
            {"name": "Ned Stark", "type": "PERSON", "description": "Lord of Winterfell", "chunk_ids": []},
        ],
        "relationships": [],
    }
    embedder = DescriptionEmbedder()
    result = build_entities(store, embedder, extractor=ScriptedChat(json.dumps(reply)), merge_threshold=0.95)
    assert result.merged == 1
    assert len(store.list_entities()) == 1
    [only] = store.list_entities()
    assert only.mentions == 1
    # without the threshold the two spellings stay apart
    other = store.with_namespace(make_namespace())
    put_document(other, "a.txt", [text], embeddings=[unit(0)])
    assert build_entities(other, embedder, extractor=ScriptedChat(json.dumps(reply))).merged == 0
    assert len(other.list_entities()) == 2


def test_parent_chunks_are_not_extracted_twice(store, hashing_embedder):
    doc_id = document_id(store.namespace, "p.txt")
    child_text = ["Ned Stark rode north.", "Robert Baratheon rode south."]
    parent_text = " ".join(child_text)
    parent = Chunk(id=chunk_id(doc_id, "parent", 0, parent_text), document_id=doc_id, content=parent_text, token_count=8)
    children = [
        Chunk(
            id=chunk_id(doc_id, "child", k, t),
            document_id=doc_id,
            content=t,
            chunk_index=k,
            parent_id=parent.id,
            embedding=hashing_embedder.embed([t])[0],
            token_count=4,
        )
        for k, t in enumerate(child_text)
    ]
    store.store_document(
        Document(id=doc_id, source="p.txt", content=parent_text, content_hash=content_hash(parent_text)),
        [parent, *children],
    )
    result = build_entities(store, hashing_embedder)
    assert result.chunks == 2
    assert store.chunk_mentions([parent.id]) == {parent.id: []}
    assert _entities_of(store) == {("Ned Stark", "PERSON"): 1, ("Robert Baratheon", "PERSON"): 1}


def test_deleting_a_document_leaves_no_entity_only_it_mentioned(store, hashing_embedder, driver):
    doc_a, _ = put_document(store, "a.txt", DOC_A, embedder=hashing_embedder)
    doc_b, _ = put_document(store, "b.txt", DOC_B, embedder=hashing_embedder)
    build_entities(store, hashing_embedder)
    build_communities(store, levels=1)
    before = _entities_of(store)
    assert ("Tywin Lannister", "PERSON") in before and ("Robert Baratheon", "PERSON") in before
    communities_before = store.list_communities()
    assert communities_before
    membership = "MATCH (e:Entity)-[:IN_COMMUNITY]->(m:Community {namespace: $ns}) RETURN e.name AS name, m.id AS community"
    links_before = {(r["name"], r["community"]) for r in driver.execute_query(membership, ns=store.namespace)[0]}

    assert store.delete_document(doc_b)
    after = _entities_of(store)
    # entities only B mentioned are gone; Robert (also in A) stays, with A's mention only
    assert after == {
        k: v
        for k, v in before.items()
        if k in {("Ned Stark", "PERSON"), ("Catelyn Stark", "PERSON"), ("Winterfell", "LOCATION"), ("Robert Baratheon", "PERSON")}
    } | {("Robert Baratheon", "PERSON"): 1}
    # the memberships of the deleted entities went with them; the others are untouched
    links_after = {(r["name"], r["community"]) for r in driver.execute_query(membership, ns=store.namespace)[0]}
    kept_names = {name for name, _ in after}
    assert links_after == {(n, c) for n, c in links_before if n in kept_names}
    assert links_after != links_before
    # a community whose members all went is hidden at once, and pruned
    remaining = {c.id for c in store.list_communities()}
    emptied = [c for c in communities_before if c.id not in remaining]
    for c in store.list_communities():
        assert c.members == count(driver, "MATCH (:Entity)-[:IN_COMMUNITY]->(m:Community {id: $id}) RETURN count(*)", id=c.id)
    assert store.prune_communities() == len(emptied)
    assert count(driver, "MATCH (m:Community {namespace: $ns}) RETURN count(m)", ns=store.namespace) == len(remaining)
    assert store.prune_communities() == 0


def test_namespaces_never_mix(store, hashing_embedder, driver, make_namespace):
    other = store.with_namespace(make_namespace())
    for s in (store, other):
        put_document(s, "a.txt", DOC_A, embedder=hashing_embedder)
        build_entities(s, hashing_embedder)
    mine, theirs = store.list_entities(), other.list_entities()
    assert [(x.entity.name, x.mentions) for x in mine] == [(x.entity.name, x.mentions) for x in theirs]
    assert not {x.entity.id for x in mine} & {x.entity.id for x in theirs}
    # searches, traversals and mentions stay inside their namespace
    query = hashing_embedder.embed(["Ned Stark"])[0]
    assert {h.entity.id for h in store.search_entities(query, 10)} == {x.entity.id for x in mine}
    ned = next(x.entity for x in mine if x.entity.name == "Ned Stark")
    assert set(store.entity_neighbours([ned.id], 3)) <= {x.entity.id for x in mine}
    assert other.entity_neighbours([ned.id], 3) == {}
    assert other.entity_text_units([ned.id]) == []
    assert (
        count(
            driver,
            "MATCH (a:Entity)-[r:RELATED_TO|MENTIONS]-(b) WHERE a.namespace IN [$a, $b] AND b.namespace <> a.namespace "
            "RETURN count(r)",
            a=store.namespace,
            b=other.namespace,
        )
        == 0
    )
    # deleting in one namespace leaves the other whole
    other_doc = document_id(other.namespace, "a.txt")
    assert other.delete_document(other_doc)
    assert other.list_entities() == [] and len(store.list_entities()) == len(mine)
