"""Isolation: two namespaces holding identical data. Every read path of one returns nothing
of the other (even when handed the other's ids), and every delete path of one leaves the
other exactly as it was: store methods, retrievers, CLI commands, prune, clear and the
community build, over documents, chunks, edges, entities, communities and triples."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner

from kgrag_neo4j.cli import cli
from kgrag_neo4j.errors import NotFoundError
from kgrag_neo4j.ingestion.chunkers import RecursiveChunker
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.options import GraphOptions, IngestGraphOptions
from kgrag_neo4j.retrieval.retrievers import GraphRetriever, HybridRetriever, VectorRetriever
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.types.triples import Triple

from .conftest import delete_namespaces, new_namespace
from .reliability_helpers import counts, no_leaked_threads  # noqa: F401

TEXTS = {
    "iso/winterfell.txt": (
        "Ned Stark rules Winterfell with Catelyn Stark.\n\n"
        "Robert Baratheon rides north to Winterfell to see Ned Stark.\n\n"
        "Catelyn Stark distrusts the Lannisters of Casterly Rock."
    ),
    "iso/kings-landing.txt": (
        "Cersei Lannister plots in Kings Landing against Ned Stark.\n\n"
        "Tyrion Lannister travels from Casterly Rock to the Wall.\n\n"
        "Jon Snow serves at the Wall with the Night Watch."
    ),
}
TRIPLES = [
    Triple("error:timeout", "caused_by", "tool:http_client"),
    Triple("error:timeout", "resolved_by", "fix:retry"),
    Triple("tool:http_client", "related_to", "Ned Stark"),
]
QUERY = "Ned Stark Winterfell"

HAS_ENTITIES = hasattr(Neo4jStore, "upsert_entities")
HAS_TRIPLES = hasattr(Neo4jStore, "add_triples")
HAS_COMMUNITIES = hasattr(Neo4jStore, "write_communities")


def _fill(store: Neo4jStore, embedder) -> None:
    graph = IngestGraphOptions(sequence_edges=True, similarity_edges=True, similarity_threshold=0.1)
    ingestor = Ingestor(store, embedder, chunker=RecursiveChunker(max_tokens=20, overlap_tokens=0), graph=graph)
    for source, text in TEXTS.items():
        ingestor.ingest_text(text, source, source, metadata={"team": "same"})
    if HAS_ENTITIES:
        from kgrag_neo4j.entities.pipeline import build_entities

        build_entities(store, embedder)
    if HAS_COMMUNITIES:
        from kgrag_neo4j.communities.build import build_communities

        build_communities(store, levels=1, min_size=2)
    if HAS_TRIPLES:
        chunk_id = store.list_document_chunks(store.list_documents()[0].id)[0].id
        store.add_triples([dataclasses.replace(t, metadata={"chunk_id": chunk_id}) for t in TRIPLES])


def _ids_of(driver, namespace: str) -> set[str]:
    """Every id and name stored under ``namespace`` (nodes and relationships)."""
    records, _, _ = driver.execute_query(
        "MATCH (n) WHERE n.namespace = $ns RETURN n.id AS id "
        "UNION MATCH ()-[r]->() WHERE r.namespace = $ns AND r.id IS NOT NULL RETURN r.id AS id",
        ns=namespace,
    )
    return {r["id"] for r in records if r["id"]}


def _strings(value: Any) -> set[str]:
    """Every string inside a result (dataclasses, mappings, sequences), for leak checks."""
    out: set[str] = set()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, str):
        out.add(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            out |= _strings(k) | _strings(v)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            out |= _strings(v)
    elif hasattr(value, "_asdict"):
        out |= _strings(value._asdict())
    return out


def _rounded(value: Any) -> Any:
    """Floats to 6 places (a mean summed in another order differs in the last bit)."""
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value


@pytest.fixture(scope="module")
def pair(driver, neo4j_settings, schema_ready):
    """Namespaces A and B with the same documents, edges, entities, communities and triples."""
    from kgrag_neo4j.providers.hashing import HashingEmbedder

    embedder = HashingEmbedder(256)
    stores = {}
    for name in ("A", "B"):
        store = Neo4jStore(driver, namespace=new_namespace(f"iso-{name}"), database=neo4j_settings.database)
        stores[name] = store
        _fill(store, embedder)
    ids = {name: _ids_of(driver, s.namespace) for name, s in stores.items()}
    assert ids["A"] and ids["B"] and not ids["A"] & ids["B"]
    yield stores["A"], stores["B"], ids, embedder
    delete_namespaces(driver, neo4j_settings.database, [s.namespace for s in stores.values()])


def _every_id(store: Neo4jStore, kind: str, ids: set[str]) -> list[str]:
    prefix = {"document": "doc_", "chunk": "chk_", "entity": "ent_", "community": "com"}[kind]
    return sorted(i for i in ids if i.startswith(prefix))


def read_paths(a: Neo4jStore, b_ids: set[str], a_ids: set[str], embedder) -> dict[str, Callable[[], Any]]:
    both = sorted(a_ids | b_ids)
    vector = embedder.embed([QUERY], input_type="query")[0]
    doc_a = a.list_documents()[0].id
    paths: dict[str, Callable[[], Any]] = {
        "get_document": lambda: a.get_document(doc_a),
        "list_documents": lambda: a.list_documents(),
        "list_documents_with_counts": lambda: a.list_documents_with_counts(),
        "list_document_chunks": lambda: a.list_document_chunks(doc_a),
        "get_chunks_by_ids(both)": lambda: a.get_chunks_by_ids(both),
        "search_chunks": lambda: a.search_chunks(vector, 50),
        "search_chunks_keyword": lambda: a.search_chunks_keyword(QUERY, 50),
        "graph_retrieve": lambda: a.graph_retrieve(
            vector, QUERY, 50, GraphOptions(blend="seed", bidirectional=True, seed_keyword_weight=0.3)
        ),
        "get_edges(both)": lambda: a.get_edges(both),
        "get_incoming_edges(both)": lambda: a.get_incoming_edges(both),
        "edge_stats": lambda: a.edge_stats(),
        "similar_chunk_pairs": lambda: a.similar_chunk_pairs(threshold=0.0),
        "document_state(other)": lambda: [a.document_state(i) for i in b_ids if i.startswith("doc_")],
        "vector retriever": lambda: VectorRetriever(a, embedder).retrieve(QUERY, 20),
        "hybrid retriever": lambda: HybridRetriever(a, embedder).retrieve(QUERY, 20),
        "graph retriever (native)": lambda: GraphRetriever(a, embedder, bidirectional=True).retrieve(QUERY, 20),
        "graph retriever (per hop)": lambda: GraphRetriever(a, embedder, native=False, bidirectional=True).retrieve(QUERY, 20),
    }
    if HAS_ENTITIES:
        from kgrag_neo4j.retrieval.entity import EntityGraphRetriever

        paths.update(
            {
                "search_entities": lambda: a.search_entities(vector, 50),
                "entity_neighbours(+other)": lambda: a.entity_neighbours(
                    [a.get_entity_by_name("Ned Stark")[0].entity.id] + [i for i in b_ids if i.startswith("ent_")], 2
                ),
                "chunk_mentions(both)": lambda: a.chunk_mentions([i for i in both if i.startswith("chk_")]),
                "entity_text_units(both)": lambda: a.entity_text_units([i for i in both if i.startswith("ent_")]),
                "entity_source_chunks(both)": lambda: a.entity_source_chunks([i for i in both if i.startswith("ent_")]),
                "list_entities": lambda: a.list_entities(),
                "get_entity_by_name": lambda: a.get_entity_by_name("Ned Stark"),
                "read_entity_graph": lambda: a.read_entity_graph(),
                "entity_degrees": lambda: a.entity_degrees(),
                "entity retriever": lambda: EntityGraphRetriever(a, embedder).retrieve(QUERY, 20),
            }
        )
    if HAS_COMMUNITIES:
        from kgrag_neo4j.retrieval.local_search import LocalSearchRetriever

        paths.update(
            {
                "list_communities": lambda: a.list_communities(),
                "community_reports_for_entities(both)": lambda: a.community_reports_for_entities(
                    [i for i in both if i.startswith("ent_")], 10
                ),
                "local search context": lambda: LocalSearchRetriever(a, embedder).context(QUERY),
            }
        )
    if HAS_TRIPLES:
        from kgrag_neo4j.retrieval.triples import TripleGraphRetriever

        paths.update(
            {
                "query_triples": lambda: a.query_triples(),
                "query_triples(subject)": lambda: a.query_triples(subject="error:timeout"),
                "query_triples(predicate)": lambda: a.query_triples(predicate="caused_by"),
                "query_triples(object)": lambda: a.query_triples(object="fix:retry"),
                "count_triples": lambda: a.count_triples(),
                "predicate_stats": lambda: a.predicate_stats(),
                "graph_stats": lambda: a.graph_stats(),
                "expand_triples(+other chunks)": lambda: a.expand_triples(
                    ["error:timeout"], chunk_ids=[i for i in b_ids if i.startswith("chk_")]
                ),
                "triple graph retriever": lambda: TripleGraphRetriever(a, embedder).search(QUERY).to_json(),
            }
        )
    return paths


def test_every_read_path_sees_only_its_namespace(pair):
    a, b, ids, embedder = pair
    paths_a = read_paths(a, ids["B"], ids["A"], embedder)
    paths_b = read_paths(b, ids["A"], ids["B"], embedder)
    aggregates = {"edge_stats", "count_triples", "predicate_stats", "graph_stats"}
    for name, fn in paths_a.items():
        out_a, out_b = fn(), paths_b[name]()
        leaked = _strings(out_a) & ids["B"]
        assert not leaked, f"{name} of namespace A returned ids of B: {sorted(leaked)[:3]}"
        assert not _strings(out_b) & ids["A"], f"{name} of namespace B returned ids of A"
        assert b.namespace not in json.dumps(sorted(_strings(out_a)), default=str), f"{name} names namespace B"
        if name == "document_state(other)":
            assert out_a == [None, None]
        elif name in aggregates:
            # counts only: identical data gives identical numbers, and not zero
            assert _rounded(out_a) == _rounded(out_b) and out_a, name
        else:
            # a read path that finds nothing proves nothing; identical data, same amount
            assert out_a, f"{name} found nothing in namespace A"
            assert len(_strings(out_a) & ids["A"]) == len(_strings(out_b) & ids["B"]), name
    assert all(a.document_chunk_count(i) == 0 for i in ids["B"] if i.startswith("doc_"))
    with pytest.raises(NotFoundError):
        a.get_document(_every_id(b, "document", ids["B"])[0])
    if HAS_COMMUNITIES:
        with pytest.raises(NotFoundError):
            a.get_community(_every_id(b, "community", ids["B"])[0])


def _cli(settings, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["--uri", settings.uri, "--user", settings.user, "--password", settings.password, *args])
    return result


def test_cli_commands_see_only_their_namespace(pair, neo4j_settings):
    a, b, ids, _ = pair
    doc_b = _every_id(b, "document", ids["B"])[0]
    commands = [
        ["docs", "list", "--json"],
        ["docs", "show", a.list_documents()[0].id, "--json"],
        ["cypher", "run", "documents/list_documents", "--param", f"namespace={a.namespace}", "--param", "limit=50"],
    ]
    commands += [["search", QUERY, "--mode", m, "--embedder", "hashing", "--json"] for m in ("vector", "hybrid", "graph")]
    if HAS_ENTITIES:
        commands += [
            ["search", QUERY, "--mode", "entity", "--embedder", "hashing", "--json"],
            ["entities", "list", "--json"],
            ["entities", "show", "Ned Stark", "--json"],
        ]
    if HAS_COMMUNITIES:
        commands += [["search", QUERY, "--mode", "local", "--embedder", "hashing", "--json"], ["communities", "list", "--json"]]
    if HAS_TRIPLES:
        commands += [["triples", "status", "--json"], ["triples", "query", "--json"], ["triples", "stats", "--json"]]
    for command in commands:
        args = command if command[0] == "cypher" else [*command, "--namespace", a.namespace]
        result = _cli(neo4j_settings, *args)
        assert result.exit_code == 0, (command, result.output)
        leaked = {i for i in ids["B"] if i in result.stdout}
        assert not leaked and b.namespace not in result.stdout, (command, sorted(leaked)[:3])
        assert any(i in result.stdout for i in ids["A"]) or command[:2] in (["triples", "status"], ["triples", "stats"]), command
    # a document of B is not found through A
    shown = _cli(neo4j_settings, "docs", "show", doc_b, "--namespace", a.namespace)
    assert shown.exit_code == 1 and "NotFoundError" in shown.stderr


def test_every_delete_path_leaves_the_other_namespace_alone(pair, driver, neo4j_settings):
    a, b, ids, embedder = pair
    before = (counts(driver, b.namespace), _ids_of(driver, b.namespace))
    docs_b = _every_id(b, "document", ids["B"])

    def unchanged(step: str) -> None:
        assert (counts(driver, b.namespace), _ids_of(driver, b.namespace)) == before, f"{step} touched namespace B"

    # deleting B's document through A is refused, by the library and the CLI
    assert a.delete_document(docs_b[0]) is False
    unchanged("delete_document(other id)")
    assert _cli(neo4j_settings, "docs", "delete", docs_b[0], "--namespace", a.namespace).exit_code == 1
    unchanged("kgrag docs delete (other id)")
    # the deletes of A's own data
    assert a.delete_document(a.list_documents()[0].id) is True
    unchanged("delete_document")
    a.prune_orphans()
    unchanged("prune_orphans")
    assert _cli(neo4j_settings, "triples", "prune", "--namespace", a.namespace).exit_code == 0
    unchanged("kgrag triples prune")
    if HAS_COMMUNITIES:
        from kgrag_neo4j.communities.build import build_communities

        build_communities(a, levels=1, min_size=2)  # replaces A's communities
        unchanged("build_communities")
        a.prune_communities()
        unchanged("prune_communities")
        assert _cli(neo4j_settings, "communities", "build", "--namespace", a.namespace).exit_code == 0
        unchanged("kgrag communities build")
    if HAS_TRIPLES:
        a.clear_triples()
        unchanged("clear_triples")
        assert _cli(neo4j_settings, "triples", "clear", "--force", "--namespace", a.namespace).exit_code == 0
        unchanged("kgrag triples clear")
    for doc in a.list_documents():
        a.delete_document(doc.id)
    unchanged("delete every document of A")
    assert not [i for i in _ids_of(driver, a.namespace) if i.startswith(("doc_", "chk_"))]
