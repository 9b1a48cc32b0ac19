"""``kgrag communities update`` on the real server: entities in no community are placed from
their neighbours' communities (in rounds, whatever the page size), empty communities go, only
stale reports are written again (as the build writes them), a report that changes while it is
made stays stale; local search says when a report it uses is stale. The last tests run the
whole story from the CLI on real text: build, ingest, update, delete, update, in two
namespaces with the same history."""

from __future__ import annotations

import json

import pytest

from kgrag_neo4j.communities.build import build_communities
from kgrag_neo4j.communities.update import choose_community, update_communities
from kgrag_neo4j.errors import NotFoundError
from kgrag_neo4j.retrieval.local_search import LocalSearchRetriever
from kgrag_neo4j.store import Neo4jStore

from .entity_helpers import ScriptedChat, make_entity, relate
from .test_communities_store import clusters

# --- pure ------------------------------------------------------------------------------------


def test_choose_community_is_a_weighted_majority_ties_to_the_smallest_id():
    assert choose_community([("com_b", 0.9), ("com_a", 0.5), ("com_a", 0.5)]) == "com_a"  # 1.0 beats 0.9
    assert choose_community([("com_b", 0.5), ("com_a", 0.5)]) == "com_a"
    assert choose_community([("com_a", 0.5), ("com_b", 0.5)]) == "com_a"  # order does not matter
    assert choose_community([("com_b", 0.6), ("com_a", 0.5)]) == "com_b"
    assert choose_community([("com_a", 0.0)]) is None  # a zero weight says nothing, as in Leiden
    assert choose_community([]) is None


# --- a hand-made entity graph ------------------------------------------------------------------


def _add(store, name: str, links: dict):
    """A new entity ``name`` related to ``links`` (Entity -> weight), in no community."""
    e = make_entity(store, name, "PERSON")
    store.upsert_entities([e])
    store.upsert_relations([relate(e, other, "KNOWS", w) for other, w in links.items()])
    return e


def _membership(store) -> dict[int, set[frozenset[str]]]:
    """Level -> the communities as sets of member names (ids embed the namespace; names do not)."""
    rows = store.runner.driver.execute_query(
        """
        MATCH (e:Entity)-[:IN_COMMUNITY]->(m:Community {namespace: $ns})
        RETURN m.level AS level, m.id AS id, collect(e.name) AS names
        """,
        ns=store.namespace,
        database_=store.runner.database,
    ).records
    out: dict[int, set[frozenset[str]]] = {}
    for r in rows:
        out.setdefault(r["level"], set()).add(frozenset(r["names"]))
    return out


def _community_of(store, name: str, level: int = 0) -> str | None:
    rows = store.runner.driver.execute_query(
        """
        MATCH (e:Entity {namespace: $ns, name: $name})-[:IN_COMMUNITY]->(m:Community {level: $level})
        RETURN m.id AS id
        """,
        ns=store.namespace,
        name=name,
        level=level,
        database_=store.runner.database,
    ).records
    assert len(rows) <= 1
    return rows[0]["id"] if rows else None


def _reports(store) -> dict[str, tuple]:
    return {c.id: (c.title, c.summary, c.full_content, c.rank, c.size, c.reported_at, c.stale) for c in store.list_communities()}


def test_update_places_new_entities_from_their_neighbours_and_rewrites_only_their_reports(store):
    e = clusters(store, {"Alpha": 4, "Beta": 4}, links=[("Alpha 0", "Beta 0", 0.1)])
    build_communities(store, levels=1)
    alpha, beta = _community_of(store, "Alpha 0"), _community_of(store, "Beta 0")
    before = _reports(store)
    assert not any(r[-1] for r in before.values())

    # Beta pulls harder through one neighbour, Alpha through two: 0.5 + 0.6 beats 0.9
    newcomer = _add(store, "Newcomer", {e["Alpha 1"]: 0.5, e["Alpha 2"]: 0.6, e["Beta 1"]: 0.9})
    _add(store, "Follower", {newcomer: 1.0})  # only a new neighbour: placed in the next round
    _add(store, "Loner", {})  # no neighbour: stays in no community, as the build leaves it
    assert store.community_update_state() == {"communities": 2, "stale": 0, "unplaced": 3}

    summary = update_communities(store)
    assert (summary.placed, summary.unplaced, summary.rounds, summary.pruned) == (2, 1, 3, 0)
    assert summary.stale_reports_regenerated == 1 and summary.still_stale == 0
    assert _community_of(store, "Newcomer") == _community_of(store, "Follower") == alpha
    assert _community_of(store, "Loner") is None

    after = _reports(store)
    assert after[beta] == before[beta]  # untouched: same text, same time
    assert after[alpha][5] > before[alpha][5] and not after[alpha][6]
    assert "Community of 6 entities" in after[alpha][1] and after[alpha][4] == 6
    assert store.community_update_state() == {"communities": 2, "stale": 0, "unplaced": 1}
    again = update_communities(store)  # nothing left to do
    assert (again.placed, again.stale_reports_regenerated, again.pruned) == (0, 0, 0)
    assert _reports(store) == after


def test_a_placed_entity_joins_every_level_above_its_community(store):
    links = [
        ("A 0", "B 0", 0.9),
        ("A 1", "B 1", 0.9),
        ("A 2", "B 2", 0.9),
        ("C 0", "D 0", 0.9),
        ("C 1", "D 1", 0.9),
        ("C 2", "D 2", 0.9),
        ("A 3", "C 3", 0.1),
    ]
    e = clusters(store, {"A": 4, "B": 4, "C": 4, "D": 4}, links=links)
    assert build_communities(store, levels=2).by_level == {0: 4, 1: 2}
    before = _reports(store)
    _add(store, "Newcomer", {e["A 0"]: 1.0})
    assert update_communities(store).stale_reports_regenerated == 2
    touched = {_community_of(store, "A 0", 0), _community_of(store, "A 0", 1)}
    assert _community_of(store, "Newcomer", 0) == _community_of(store, "A 0", 0)
    assert _community_of(store, "Newcomer", 1) == _community_of(store, "A 0", 1)
    parent = store.get_community(_community_of(store, "A 0", 1))
    assert parent.members == 9 and not parent.stale and "Newcomer" in parent.full_content
    after = _reports(store)
    assert {k: v for k, v in after.items() if k not in touched} == {k: v for k, v in before.items() if k not in touched}
    assert all(after[k][5] > before[k][5] for k in touched)


def test_a_regenerated_report_is_the_one_the_build_writes(store, driver):
    clusters(store, {"Alpha": 4, "Beta": 3}, links=[("Alpha 0", "Beta 0", 0.2)])
    build_communities(store, levels=1)
    built = _reports(store)
    driver.execute_query("MATCH (m:Community {namespace: $ns}) SET m.stale = true", ns=store.namespace)
    assert store.community_update_state()["stale"] == 2
    summary = update_communities(store, report_batch=1)
    assert summary.stale_reports_regenerated == 2
    again = _reports(store)
    assert {k: v[:5] for k, v in again.items()} == {k: v[:5] for k, v in built.items()}
    assert all(again[k][5] > built[k][5] for k in built)


def test_placement_does_not_depend_on_the_page_size(driver, neo4j_settings, schema_ready, make_namespace):
    got = []
    for page_size in (1, 1000):
        store = Neo4jStore(driver, namespace=make_namespace(), database=neo4j_settings.database)
        e = clusters(store, {"Alpha": 3, "Beta": 3}, links=[("Alpha 0", "Beta 0", 0.1)])
        build_communities(store, levels=1)
        # round 1 places Aaron (Beta) and Abel (Aaron does not count yet: Alpha), whichever is
        # read first; round 2 Abigail, between them (Abel's 0.9 wins)
        first = _add(store, "Aaron", {e["Beta 0"]: 0.4, e["Alpha 1"]: 0.3})
        second = _add(store, "Abel", {first: 0.5, e["Alpha 2"]: 0.45})
        _add(store, "Abigail", {second: 0.9, first: 0.1})
        summary = update_communities(store, page_size=page_size)
        assert (summary.placed, summary.rounds) == (3, 3)
        got.append(_membership(store))
    assert got[0] == got[1]
    assert got[0][0] == {
        frozenset({"Beta 0", "Beta 1", "Beta 2", "Aaron"}),
        frozenset({"Alpha 0", "Alpha 1", "Alpha 2", "Abel", "Abigail"}),
    }


def test_an_emptied_community_is_pruned_and_a_shrunk_one_rewritten(store, driver):
    clusters(store, {"Alpha": 3, "Beta": 3}, links=[("Alpha 0", "Beta 0", 0.1)])
    build_communities(store, levels=1)
    alpha, beta = _community_of(store, "Alpha 0"), _community_of(store, "Beta 0")
    # entities going without a word to their community: as a cleared entity graph leaves it
    driver.execute_query("MATCH (e:Entity {namespace: $ns}) WHERE e.name STARTS WITH 'Alpha' DETACH DELETE e", ns=store.namespace)
    driver.execute_query("MATCH (e:Entity {namespace: $ns, name: 'Beta 2'}) DETACH DELETE e", ns=store.namespace)
    (empty,) = store.community_snapshots([alpha])
    assert empty.community.members == () and empty.community.level == 0
    assert store.refresh_community_reports([alpha], lambda s: pytest.fail("no report for an empty community")) == 0
    summary = update_communities(store)
    assert (summary.pruned, summary.stale_reports_regenerated, summary.communities) == (1, 1, 1)
    (left,) = store.list_communities()
    assert left.id == beta and left.size == left.members == 2 and "Beta 2" not in left.full_content


def test_a_community_that_changes_while_its_report_is_made_stays_stale(store, driver):
    clusters(store, {"Alpha": 3, "Beta": 3}, links=[("Alpha 0", "Beta 0", 0.1)])
    build_communities(store, levels=1)
    alpha = _community_of(store, "Alpha 0")
    driver.execute_query("MATCH (m:Community {id: $id}) SET m.stale = true", id=alpha)
    (snapshot,) = store.community_snapshots([alpha])
    from kgrag_neo4j.communities import extractive_report

    report = extractive_report(snapshot.community, snapshot.entities, snapshot.relations)
    driver.execute_query("MATCH (e:Entity {namespace: $ns, name: 'Alpha 1'}) SET e.description = 'changed'", ns=store.namespace)
    assert store.write_community_reports([(snapshot, report)]) == 0
    assert store.get_community(alpha).stale
    (fresh,) = store.community_snapshots([alpha])
    assert store.write_community_reports([(fresh, extractive_report(fresh.community, fresh.entities, fresh.relations))]) == 1
    assert not store.get_community(alpha).stale


def test_a_model_writes_only_the_stale_reports(store):
    e = clusters(store, {"Alpha": 3, "Beta": 3}, links=[("Alpha 0", "Beta 0", 0.1)])
    build_communities(store, levels=1)
    beta = _reports(store)[_community_of(store, "Beta 0")]
    _add(store, "Newcomer", {e["Alpha 1"]: 1.0})
    chat = ScriptedChat(json.dumps({"title": "The Alpha circle", "summary": "Alphas and a newcomer.", "rating": 6}))
    summary = update_communities(store, chat=chat, workers=2)
    assert (summary.reports, summary.placed, summary.stale_reports_regenerated, summary.still_stale) == ("llm", 1, 1, 0)
    assert len(chat.calls) == 1 and "Newcomer" in chat.calls[0][-1]["content"]
    alpha = store.get_community(_community_of(store, "Alpha 0"))
    assert (alpha.title, alpha.summary, alpha.rating, alpha.members, alpha.stale) == (
        "The Alpha circle",
        "Alphas and a newcomer.",
        6.0,
        4,
        False,
    )
    assert _reports(store)[_community_of(store, "Beta 0")] == beta


def test_update_refuses_a_namespace_without_communities(store, kgrag_cli):
    clusters(store, {"Alpha": 3}, links=[])
    with pytest.raises(NotFoundError, match="no communities yet"):
        update_communities(store)
    result = kgrag_cli("communities", "update", "--namespace", store.namespace)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "no communities yet" in lines[0] and "kgrag communities build" in lines[0]


# --- the whole story from the CLI, on real text -------------------------------------------------

STARKS = {
    "ned.txt": "Ned Stark rode to Winterfell with Jon Snow. Ned Stark and Jon Snow watched Winterfell burn. "
    "Ned Stark told Jon Snow about Winterfell.",
    "jon.txt": "Jon Snow left Winterfell for Castle Black. Jon Snow and Ned Stark spoke of Castle Black. "
    "Castle Black stood cold above Winterfell.",
}
STARS = {
    "galileo.txt": "Galileo Galilei watched Jupiter from Padua. Galileo Galilei drew Jupiter at Padua. "
    "Johannes Kepler wrote to Galileo Galilei about Jupiter.",
    "kepler.txt": "Johannes Kepler studied Jupiter in Prague. Johannes Kepler and Galileo Galilei argued about Prague. "
    "Prague welcomed Johannes Kepler.",
}
LATER = {
    "arya.txt": "Arya Stark trained at Winterfell with Jon Snow. Arya Stark and Jon Snow rode to Winterfell. "
    "Arya Stark missed Jon Snow.",
}


def _write(tmp_path, files: dict[str, str]) -> list[str]:
    paths = []
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    return paths


def _history(kgrag_cli, namespace: str, tmp_path) -> list[dict]:
    """build, ingest more, update, delete, update; returns what each step reported."""

    def run(*args: str) -> str:
        result = kgrag_cli(*args, "--namespace", namespace)
        assert result.exit_code == 0, result.output
        return result.stdout

    seen = []
    run("ingest", *_write(tmp_path, {**STARKS, **STARS}), "--embedder", "hashing")
    run("entities", "build", "--embedder", "hashing")
    seen.append(json.loads(run("communities", "build", "--levels", "1", "--json")))
    seen.append(json.loads(run("communities", "list", "--json")))
    run("ingest", *_write(tmp_path, LATER), "--embedder", "hashing")  # the maintained graph links it
    seen.append(json.loads(run("entities", "status", "--json")))
    seen.append(json.loads(run("communities", "update", "--json")))
    seen.append(json.loads(run("entities", "status", "--json")))
    seen.append(json.loads(run("communities", "list", "--json")))
    run("docs", "delete", str(tmp_path / "jon.txt"))
    seen.append(json.loads(run("communities", "update", "--json")))
    seen.append(json.loads(run("communities", "list", "--json")))
    return seen


def test_update_after_ingest_and_delete_from_the_cli(kgrag_cli, store, tmp_path):
    built, listed, status, updated, status_after, listed_after, after_delete, listed_last = _history(
        kgrag_cli, store.namespace, tmp_path
    )
    assert built["communities"] >= 2
    assert status["stale_communities"] >= 1 and status["documents"] == status["documents_linked"] == 5

    assert updated["placed"] >= 1 and updated["stale_reports_regenerated"] >= 1 and updated["pruned"] == 0
    assert set(updated) >= {"placed", "unplaced", "pruned", "stale_reports_regenerated", "communities", "seconds"}
    assert status_after["stale_communities"] == 0
    assert _community_of(store, "Arya Stark") == _community_of(store, "Jon Snow") is not None

    # the communities of the other topic were not touched: same text, same time
    by_id = {c["id"]: c for c in listed_after}
    stars = [c for c in listed if "Galileo Galilei" in c["full_content"] or "Johannes Kepler" in c["full_content"]]
    assert stars
    for c in stars:
        assert {k: by_id[c["id"]][k] for k in ("full_content", "reported_at", "size")} == {
            k: c[k] for k in ("full_content", "reported_at", "size")
        }
    starks = [c for c in listed_after if "Arya Stark" in c["full_content"]]
    assert starks and all(c["reported_at"] > stars[0]["reported_at"] for c in starks)

    # the delete took Castle Black with it; the update rewrote what held it
    assert after_delete["stale_reports_regenerated"] >= 1
    assert not any("Castle Black" in c["full_content"] for c in listed_last)
    assert all(c["size"] == c["members"] and not c["stale"] for c in listed_last)
    orphans = store.runner.driver.execute_query(
        "MATCH (m:Community {namespace: $ns}) WHERE COUNT { (:Entity)-[:IN_COMMUNITY]->(m) } <> m.size RETURN count(m) AS n",
        ns=store.namespace,
    ).records[0]["n"]
    assert orphans == 0


def test_the_same_history_gives_the_same_communities(kgrag_cli, driver, neo4j_settings, make_namespace, tmp_path):
    got = []
    for i in range(2):
        namespace = make_namespace()
        folder = tmp_path / str(i)
        folder.mkdir()
        seen = _history(kgrag_cli, namespace, folder)
        store = Neo4jStore(driver, namespace=namespace, database=neo4j_settings.database)
        got.append((_membership(store), [{k: v for k, v in s.items() if k != "seconds"} for s in seen[3::3]]))
    assert got[0] == got[1]
    assert got[0][0]


def test_local_search_marks_a_stale_report(store, hashing_embedder, kgrag_cli, tmp_path):
    from kgrag_neo4j.ingestion.chunkers import RecursiveChunker
    from kgrag_neo4j.ingestion.ingestor import Ingestor

    ingest = Ingestor(store, hashing_embedder, chunker=RecursiveChunker(max_tokens=64, overlap_tokens=0))
    for source, text in STARKS.items():
        ingest.ingest_text(text, source=source, title=source)
    kgrag_cli("entities", "build", "--embedder", "hashing", "--namespace", store.namespace)
    build_communities(store, levels=1)
    retriever = LocalSearchRetriever(store, hashing_embedder)
    fresh = retriever.context("Jon Snow at Winterfell")
    assert fresh.community_reports and not any(r.stale for r in fresh.community_reports)
    assert "(stale" not in fresh.to_text()

    for source, text in LATER.items():  # the maintained graph marks Jon Snow's community stale
        ingest.ingest_text(text, source=source, title=source)
    stale = retriever.context("Jon Snow at Winterfell")
    assert any(r.stale for r in stale.community_reports)
    marked = [r for r in stale.community_reports if r.stale]
    assert f"### {marked[0].title} (stale: its members changed since this report)" in stale.to_text()
    assert any(r["stale"] is True for r in stale.to_json()["reports"])
    searched = kgrag_cli(
        "search", "Jon Snow at Winterfell", "--mode", "local", "--embedder", "hashing", "--json", "--namespace", store.namespace
    )
    assert any(r["stale"] is True for r in json.loads(searched.stdout)["reports"])

    update_communities(store)
    again = retriever.context("Jon Snow at Winterfell")
    assert again.community_reports and not any(r.stale for r in again.community_reports)
