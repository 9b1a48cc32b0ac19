"""Communities on the real server: Leiden (Python) written with reports, the hierarchy, the
atomic replace on rebuild, reports by entity, model-written reports, namespaces."""

from __future__ import annotations

import itertools
import json
import uuid

import pytest

from kgrag_neo4j.communities import Community, CommunityReport
from kgrag_neo4j.communities.build import build_communities
from kgrag_neo4j.errors import ConfigurationError, InputError, NotFoundError, StoreError

from .entity_helpers import ScriptedChat, make_entity, relate


def clusters(store, spec: dict[str, int], links=(), weight: float = 1.0):
    """Cliques of entities named '<prefix> <i>' (fully connected, ``weight``) plus ``links``:
    (name, name, weight). Returns name -> Entity."""
    entities = {}
    relations = []
    for prefix, n in spec.items():
        members = [make_entity(store, f"{prefix} {i}", "PERSON") for i in range(n)]
        entities.update({e.name: e for e in members})
        relations += [relate(a, b, "KNOWS", weight) for a, b in itertools.combinations(members, 2)]
    relations += [relate(entities[a], entities[b], "KNOWS", w) for a, b, w in links]
    store.upsert_entities(list(entities.values()))
    store.upsert_relations(relations)
    return entities


def names_of(store, community_id):
    return {m["name"] for m in store.get_community(community_id).member_entities}


def community_ids(driver, namespace):
    records, _, _ = driver.execute_query("MATCH (m:Community {namespace: $ns}) RETURN m.id AS id", ns=namespace)
    return {r["id"] for r in records}


def test_build_writes_communities_with_extractive_reports(store, driver):
    clusters(store, {"Alpha": 4, "Beta": 4}, links=[("Alpha 0", "Beta 0", 0.1)])
    summary = build_communities(store, levels=1)
    assert (summary.engine, summary.gds_available) == ("python", store.gds_available())
    assert summary.gds_available is False  # the test server runs without the GDS plugin
    assert (summary.entities, summary.relations, summary.communities) == (8, 13, 2)
    assert summary.by_level == {0: 2} and summary.memberships == 8 and summary.deleted == 0

    listed = store.list_communities()
    assert [c.members for c in listed] == [4, 4]
    groups = sorted(sorted(names_of(store, c.id)) for c in listed)
    assert groups == [[f"Alpha {i}" for i in range(4)], [f"Beta {i}" for i in range(4)]]
    for c in listed:
        assert c.level == 0 and c.size == 4 and c.parent_id is None
        assert c.rank == pytest.approx(6.0)  # six internal edges of weight 1.0
        prefix = next(iter(names_of(store, c.id))).split()[0]
        assert prefix in c.title and prefix in c.full_content
        assert "Community of 4 entities" in c.summary
    shown = store.get_community(listed[0].id)
    assert shown.child_ids == () and len(shown.member_entities) == 4
    with pytest.raises(NotFoundError):
        store.get_community("com_missing")


def test_hierarchy_levels_and_parent_links(store, driver):
    links = [
        ("A 0", "B 0", 0.9),
        ("A 1", "B 1", 0.9),
        ("A 2", "B 2", 0.9),
        ("C 0", "D 0", 0.9),
        ("C 1", "D 1", 0.9),
        ("C 2", "D 2", 0.9),
        ("A 3", "C 3", 0.1),
    ]
    clusters(store, {"A": 4, "B": 4, "C": 4, "D": 4}, links=links)
    summary = build_communities(store, levels=2)
    assert summary.by_level == {0: 4, 1: 2}
    assert summary.parents == 4
    level0 = store.list_communities(level=0)
    level1 = store.list_communities(level=1)
    assert len(level0) == 4 and len(level1) == 2
    for child in level0:
        assert child.parent_id in {p.id for p in level1}
        assert names_of(store, child.id) <= names_of(store, child.parent_id)
    for parent in level1:
        shown = store.get_community(parent.id)
        assert len(shown.child_ids) == 2 and shown.members == 8
        assert parent.rank > max(c.rank for c in level0 if c.parent_id == parent.id)
    records, _, _ = driver.execute_query(
        "MATCH (c:Community {namespace: $ns})-[:PARENT]->(p:Community) RETURN c.level AS cl, p.level AS pl",
        ns=store.namespace,
    )
    assert sorted((r["cl"], r["pl"]) for r in records) == [(0, 1)] * 4


def test_rebuild_replaces_every_old_community(store, driver):
    clusters(store, {"Alpha": 4, "Beta": 4}, links=[("Alpha 0", "Beta 0", 0.1)])
    build_communities(store, levels=1)
    old = community_ids(driver, store.namespace)
    alpha_before = next(c.id for c in store.list_communities() if "Alpha 0" in names_of(store, c.id))
    # Alpha grows by one member (so its community id changes); a third cluster appears
    extra = make_entity(store, "Alpha 9", "PERSON")
    store.upsert_entities([extra])
    alphas = [make_entity(store, f"Alpha {i}", "PERSON") for i in range(4)]
    store.upsert_relations([relate(extra, a, "KNOWS", 1.0) for a in alphas])
    clusters(store, {"Gamma": 3}, links=[])
    summary = build_communities(store, levels=1)
    new = community_ids(driver, store.namespace)
    assert summary.deleted == len(old) == 2
    assert len(new) == summary.communities == 3
    assert {c.id for c in store.list_communities()} == new
    assert alpha_before not in new  # the old Alpha community is gone, not left beside the new one
    records, _, _ = driver.execute_query(
        "MATCH (e:Entity {namespace: $ns})-[:IN_COMMUNITY]->(m:Community) RETURN count(*) AS links, "
        "count(DISTINCT e) AS entities",
        ns=store.namespace,
    )
    assert (records[0]["links"], records[0]["entities"]) == (12, 12)  # one level, every entity once


def test_a_failed_replace_keeps_the_old_communities(store, driver, make_namespace):
    clusters(store, {"Alpha": 4, "Beta": 4}, links=[("Alpha 0", "Beta 0", 0.1)])
    build_communities(store, levels=1)
    before = {c.id: (c.title, names_of(store, c.id)) for c in store.list_communities()}

    other = store.with_namespace(make_namespace())
    taken = make_entity(other, "Someone", "PERSON")
    other.upsert_entities([taken])
    clash_id = "com_clash_" + uuid.uuid4().hex  # unique per run: ids are database-wide
    other.write_communities([Community(clash_id, 0, (taken.id,), None, 1)])
    members = tuple(make_entity(store, f"Alpha {i}", "PERSON").id for i in range(4))
    fresh = Community("com_fresh", 0, members, None, 4)
    clash = Community(clash_id, 0, members, None, 4)  # id already used in another namespace
    with pytest.raises(StoreError):
        store.write_communities([fresh, clash], [CommunityReport("com_fresh", "t", "s", "f", 1.0)])
    # the whole transaction rolled back: the delete of the old set included
    after = {c.id: (c.title, names_of(store, c.id)) for c in store.list_communities()}
    assert after == before
    assert "com_fresh" not in community_ids(driver, store.namespace)
    assert other.list_communities()[0].id == clash_id


def test_write_communities_rejects_bad_input(store):
    a = make_entity(store, "A", "PERSON")
    store.upsert_entities([a])
    c = Community("com_a", 0, (a.id,), "com_missing_parent", 1)
    with pytest.raises(InputError, match="parent"):
        store.write_communities([c])
    with pytest.raises(InputError, match="unknown"):
        store.write_communities([], [CommunityReport("com_x", "t", "s", "f", 1.0)])
    with pytest.raises(InputError, match="twice"):
        store.write_communities([Community("com_a", 0, (a.id,), None, 1)] * 2)


def test_model_written_reports_and_their_fallback(store):
    clusters(store, {"Alpha": 3, "Beta": 3}, links=[("Alpha 0", "Beta 0", 0.1)])

    def reply(messages):
        body = messages[-1]["content"]
        if "Beta 0" in body:
            return "this is not JSON"
        return json.dumps({"title": "The Alpha circle", "summary": "Alphas know each other.", "rating": 7.5})

    chat = ScriptedChat(reply)
    summary = build_communities(store, levels=1, chat=chat)
    assert summary.reports == "llm" and len(chat.calls) == 2
    by_title = {c.title: c for c in store.list_communities()}
    alpha = by_title["The Alpha circle"]
    assert alpha.summary == "Alphas know each other." and alpha.rating == 7.5
    assert alpha.rank == pytest.approx(3.0)  # the rank never comes from the model
    beta = next(c for t, c in by_title.items() if t != "The Alpha circle")
    assert "Beta" in beta.title and beta.rating is None  # extractive fallback
    with pytest.raises(ConfigurationError):
        build_communities(store, chat=object())


def test_reports_for_entities_by_rank(store):
    e = clusters(store, {"Big": 5, "Small": 3}, links=[("Big 0", "Small 0", 0.05)])
    build_communities(store, levels=1)
    got = store.community_reports_for_entities([e["Small 1"].id, e["Big 2"].id, e["Big 3"].id], top_k=3)
    assert [c.size for c in got] == [5, 3]  # Big ranks higher (10 edges vs 3)
    assert [c.matched for c in got] == [2, 1]
    assert [c.size for c in store.community_reports_for_entities([e["Small 1"].id, e["Big 2"].id], top_k=1)] == [5]
    assert store.community_reports_for_entities([e["Small 1"].id], top_k=3)[0].size == 3
    assert store.community_reports_for_entities([], top_k=3) == []


def test_namespaces_keep_their_own_communities(store, driver, make_namespace):
    other = store.with_namespace(make_namespace())
    for s in (store, other):
        clusters(s, {"Alpha": 4, "Beta": 4}, links=[("Alpha 0", "Beta 0", 0.1)])
        build_communities(s, levels=1)
    mine, theirs = community_ids(driver, store.namespace), community_ids(driver, other.namespace)
    assert len(mine) == len(theirs) == 2 and not mine & theirs
    # a rebuild in one namespace deletes nothing in the other
    build_communities(store, levels=1, resolution=0.01)
    assert community_ids(driver, other.namespace) == theirs
    records, _, _ = driver.execute_query(
        "MATCH (e:Entity)-[:IN_COMMUNITY]->(m:Community) WHERE e.namespace <> m.namespace "
        "AND (e.namespace IN [$a, $b] OR m.namespace IN [$a, $b]) RETURN count(*) AS n",
        a=store.namespace,
        b=other.namespace,
    )
    assert records[0]["n"] == 0
