"""Data safety between sources and tenants (red-team findings 1, 2, 3, 7, 8): a delete keeps
what another source still uses, no statement crosses namespaces even when run by hand, clearing
one source leaves the other's data, a failed first ingest binds nothing, and a namespace can be
listed and deleted completely without touching any other."""

from __future__ import annotations

import asyncio
import json

import pytest

from kgrag_neo4j.cypher_registry import load_registry
from kgrag_neo4j.errors import DimensionMismatchError, ProviderError, TransactionMemoryError
from kgrag_neo4j.ingestion.chunkers import RecursiveChunker
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.providers.hashing import HashingEmbedder
from kgrag_neo4j.types.entities import EntityMention, entity_id
from kgrag_neo4j.types.triples import Triple

from .entity_helpers import make_entity, mention, put_document, relate, unit
from .reliability_helpers import no_leaked_threads  # noqa: F401


@pytest.fixture
def kgrag(kgrag_cli):
    """``kgrag ARGS`` against the test server; returns (exit code, stdout, stderr)."""

    def invoke(*args: str, input: str | None = None):
        result = kgrag_cli(*args, input=input)
        return result.exit_code, result.stdout, result.stderr

    return invoke


@pytest.fixture
def other(store, make_namespace):
    """A second namespace on the same driver, deleted afterwards."""
    return store.with_namespace(make_namespace())


def _fetch(driver, query: str, **params):
    records, _, _ = driver.execute_query(query, **params)
    return [r.data() for r in records]


def _snapshot(driver, namespace: str) -> list:
    """Every node of a namespace with all its properties and relationships (embeddings aside)."""
    rows = _fetch(
        driver,
        "MATCH (n) WHERE n.namespace = $ns OR n.staged_namespace = $ns "
        "OPTIONAL MATCH (n)-[r]->(m) "
        "WITH n, r, m ORDER BY type(r), m.id "
        "RETURN n.id AS id, labels(n) AS labels, properties(n) AS props, "
        "       collect([type(r), m.id, properties(r)]) AS out ORDER BY id",
        ns=namespace,
    )
    for row in rows:
        row["props"].pop("embedding", None)
    return rows


# -- 1. deleting a document keeps what triples use ----------------------------------------------


def test_deleting_a_document_keeps_the_triples_and_their_entities(store, driver):
    ns = store.namespace
    doc_x, chunks_x = put_document(store, "x.md", ["Ned Stark rules Winterfell.", "Robb rides south."])
    put_document(store, "y.md", ["Nothing about the north."])
    # the entity extractor saw Ned (a triple subject too) and Robb (nothing else uses him) in x.md
    ned, robb = make_entity(store, "Ned Stark", "PERSON"), make_entity(store, "Robb", "PERSON")
    store.upsert_entities([ned, robb])
    store.upsert_mentions([mention(chunks_x[0], ned), mention(chunks_x[1], robb)])
    store.upsert_relations([relate(ned, robb, "FATHER_OF", 0.9)])
    triples = [
        Triple("Ned Stark", "related_to", "Winterfell", {"subject_type": "PERSON", "chunk_id": chunks_x[0]}),
        Triple("error:timeout", "caused_by", "tool:http_client"),
        Triple("error:timeout", "resolved_by", "fix:retry"),
    ]
    assert store.add_triples(triples) == 3
    assert entity_id(ns, "Ned Stark", "PERSON") == ned.id

    assert store.delete_document(doc_x)

    assert store.count_triples() == 3
    assert {(t.subject, t.predicate, t.object) for t in store.query_triples()} == {
        ("Ned Stark", "related_to", "Winterfell"),
        ("error:timeout", "caused_by", "tool:http_client"),
        ("error:timeout", "resolved_by", "fix:retry"),
    }
    names = {e.entity.name for e in store.list_entities()}
    assert "Ned Stark" in names and "Winterfell" in names
    assert "Robb" not in names  # only the deleted text mentioned him and no triple uses him


# -- 2. hand-run statements cannot cross namespaces ----------------------------------------------


TENANT_LABELS = ("Document", "Chunk", "Entity", "Community")
#: the statements that span namespaces: they count what each holds, or whether any holds a
#: vector slot's property, and read no content
CROSS_NAMESPACE = {"namespaces/list_namespaces", "schema/slot_in_use"}


def test_every_statement_on_tenant_data_takes_the_namespace():
    """The rule of the project, checked on the files: a statement that reads or writes
    documents, chunks, entities or communities declares ``$namespace``."""
    missing = [
        q.name
        for q in load_registry().values()
        if q.mode != "schema"
        and q.name not in CROSS_NAMESPACE
        and any(f":{label}" in q.text for label in TENANT_LABELS)
        and "namespace" not in q.param_names
    ]
    assert missing == []


def _run(kgrag, name: str, **params):
    args = ["cypher", "run", name]
    for key, value in params.items():
        args += ["--param", f"{key}={json.dumps(value)}"]
    return kgrag(*args)


def test_cypher_run_with_another_namespaces_ids_neither_reads_nor_writes_it(store, other, driver, kgrag):
    victim = store
    doc_id, chunk_ids = put_document(
        victim, "secret.md", ["the launch code is 0000", "meet at noon"], embeddings=[unit(1), unit(2)]
    )
    before = _snapshot(driver, victim.namespace)
    stored_hash = victim.get_document(doc_id).content_hash
    registry = load_registry()

    def params(name: str, **values):
        """What an attacker in ``other`` passes: every parameter the statement declares."""
        declared = registry[name].param_names
        out = {k: v for k, v in values.items() if k in declared}
        if "namespace" in declared:
            out["namespace"] = other.namespace
        return out

    code, out, err = _run(kgrag, "documents/get_content_hash", **params("documents/get_content_hash", document_id=doc_id))
    assert code == 0, err
    assert stored_hash not in out

    props = {"source": "stolen.md", "title": "mine", "content": "x", "content_hash": "h", "created_at": 1, "metadata": "{}"}
    code, _, err = _run(
        kgrag, "documents/upsert_documents", **params("documents/upsert_documents", documents=[{"id": doc_id, "props": props}])
    )
    assert code == 0, err

    # the victim's chunk ids, claimed for the victim's document and for a document of the attacker's own
    attacker_doc = "doc_attacker_" + other.namespace
    code, _, err = _run(
        kgrag,
        "documents/upsert_documents",
        **params("documents/upsert_documents", documents=[{"id": attacker_doc, "props": props}]),
    )
    assert code == 0, err
    for owner in (doc_id, attacker_doc):
        rows = [
            {
                "id": c,
                "document_id": owner,
                "props": {"content": "overwritten", "document_hash": "h"},
                "embedding": None,
                "parent_id": None,
            }
            for c in chunk_ids
        ]
        code, out, err = _run(kgrag, "chunks/upsert_chunks", **params("chunks/upsert_chunks", rows=rows))
        assert code == 0, err
        # a large document's steps, by hand, with the victim's document id
        for name, extra in (
            ("chunks/stage_chunks", {"rows": rows}),
            ("documents/publish_staged_chunks", {}),
            ("documents/park_stale_chunks", {}),
            ("documents/purge_staged_chunks", {"limit": 1000}),
        ):
            code, _, err = _run(kgrag, name, **params(name, document_id=owner, **extra))
            assert code == 0, (name, err)

    # the one-statement write: with the victim's document id it sets nothing and creates no
    # chunk; with a new document of the attacker's, the victim's chunk ids fail it whole
    chunks = [{"id": c, "props": {"content": "overwritten"}, "embedding": None} for c in chunk_ids]
    code, _, err = _run(
        kgrag,
        "documents/write_documents",
        **params("documents/write_documents", documents=[{"id": doc_id, "props": props, "chunks": chunks}]),
    )
    assert code == 0, err
    code, _, err = _run(
        kgrag,
        "documents/write_documents",
        **params(
            "documents/write_documents",
            documents=[{"id": "doc_attacker_new_" + other.namespace, "props": props, "chunks": chunks}],
        ),
    )
    assert code != 0 and "ConstraintValidationFailed" in err and "Traceback" not in err

    assert _snapshot(driver, victim.namespace) == before
    assert _fetch(driver, "MATCH (c:Chunk) WHERE c.namespace = $ns RETURN count(c) AS n", ns=other.namespace) == [{"n": 0}]
    assert _fetch(driver, "MATCH (d:Document {id: $id}) RETURN count(d) AS n", id="doc_attacker_new_" + other.namespace) == [
        {"n": 0}
    ]


# -- 3. clearing triples leaves what the entity extractor wrote ----------------------------------


@pytest.mark.parametrize("triples_first", [True, False], ids=["triple-wrote-first", "extractor-wrote-first"])
def test_graph_clear_keeps_the_mentions_the_extractor_also_wrote(store, triples_first):
    ns = store.namespace
    _, (c1, c2) = put_document(store, "notes.md", ["Ned Stark rules Winterfell.", "Winterfell is cold."])
    ned = make_entity(store, "Ned Stark", "CONCEPT")
    assert ned.id == entity_id(ns, "Ned Stark", "CONCEPT")  # the triple's subject is this entity

    def extract():
        store.upsert_entities([ned])
        store.upsert_mentions([EntityMention(c1, ned.id, 2)])

    def triple():
        store.add_triples(
            [
                Triple("Ned Stark", "related_to", "Winterfell", {"chunk_id": c1}),
                Triple("Winterfell", "related_to", "the North", {"chunk_id": c2}),
            ]
        )

    for step in (triple, extract) if triples_first else (extract, triple):
        step()
    removed = store.clear_triples()

    assert store.count_triples() == 0
    assert store.chunk_mentions([c1, c2]) == {c1: [ned.id], c2: []}  # the extractor's mention of Ned stays
    assert [e.entity.name for e in store.list_entities()] == ["Ned Stark"]
    assert removed == {"edges": 2, "mentions": 3, "kept_mentions": 1, "entities": 2}  # Winterfell, the North
    # clearing again finds nothing, and the extractor's mention is still there
    assert store.clear_triples() == {"edges": 0, "mentions": 0, "kept_mentions": 0, "entities": 0}
    assert store.chunk_mentions([c1]) == {c1: [ned.id]}


# -- 7. a failed first ingest binds nothing -------------------------------------------------------


class _Renamed:
    """A real embedder under another model name (a different model of the same size)."""

    def __init__(self, inner, name: str, *, fail: bool = False):
        self.inner, self.name, self.dimensions, self.fail = inner, name, inner.dimensions, fail

    def embed(self, texts, *, input_type="document"):
        if self.fail:
            raise ProviderError(f"{self.name} is down")
        return self.inner.embed(texts, input_type=input_type)


def test_an_embedder_refused_for_its_size_does_not_bind_the_namespace(store, hashing_embedder):
    # `kgrag init` without an embedder: the namespace has its size (not its model) recorded
    store.init_schema(hashing_embedder.dimensions, model="unknown")
    with pytest.raises(DimensionMismatchError):
        Ingestor(store, HashingEmbedder(dimensions=64)).ingest_text("Ned Stark rules Winterfell.", "a.txt")
    result = Ingestor(store, hashing_embedder).ingest_text("Ned Stark rules Winterfell.", "a.txt")
    assert result.status == "new"
    assert store.schema_status().model == hashing_embedder.name


def test_an_embedder_that_fails_does_not_bind_the_namespace(store, hashing_embedder):
    down = _Renamed(hashing_embedder, "provider-that-is-down", fail=True)
    with pytest.raises(ProviderError):
        Ingestor(store, down).ingest_text("Ned Stark rules Winterfell.", "a.txt")
    assert store.schema_status().model is None
    assert Ingestor(store, hashing_embedder).ingest_text("Ned Stark rules Winterfell.", "a.txt").status == "new"


# -- 8. namespaces: list and delete ---------------------------------------------------------------


def _fill(store, embedder) -> None:
    from kgrag_neo4j.communities.build import build_communities
    from kgrag_neo4j.entities.pipeline import build_entities

    ingestor = Ingestor(store, embedder, chunker=RecursiveChunker(max_tokens=20, overlap_tokens=0))
    ingestor.ingest_text(
        "Ned Stark rules Winterfell with Catelyn Stark.\n\nRobert Baratheon rides to Winterfell to see Ned Stark.",
        "north.txt",
    )
    ingestor.ingest_text("Cersei Lannister plots against Ned Stark in Kings Landing.", "south.txt")
    build_entities(store, embedder)
    build_communities(store, levels=1, min_size=2)
    store.add_triples([Triple("error:timeout", "caused_by", "tool:http_client")])


def test_a_namespace_is_listed_and_deleted_whole_and_alone(store, other, driver, hashing_embedder):
    _fill(store, hashing_embedder)
    _fill(other, hashing_embedder)
    other_before = _snapshot(driver, other.namespace)
    listed = {n.namespace: n for n in store.list_namespaces()}
    mine = listed[store.namespace]
    assert mine.documents == 2 and mine.chunks >= 2 and mine.entities > 0 and mine.triples == 1
    assert mine.communities > 0 and mine.embedder == hashing_embedder.name and mine.dimensions == 256
    assert listed[other.namespace].as_dict() == {**mine.as_dict(), "namespace": other.namespace}

    removed = store.delete_namespace(batch_size=3)  # several batches

    assert removed["documents"] == 2 and removed["chunks"] == mine.chunks
    # the records: the embedding model and the entity graph's (built by _fill)
    assert removed["communities"] == mine.communities and removed["records"] == 2
    assert _snapshot(driver, store.namespace) == []
    assert _fetch(driver, "MATCH (k:KgragMeta {key: $key}) RETURN k", key="embedding:" + store.namespace) == []
    assert store.namespace not in {n.namespace for n in store.list_namespaces()}
    assert _snapshot(driver, other.namespace) == other_before
    # the namespace starts over, with any embedder
    renamed = _Renamed(hashing_embedder, "another-model")
    assert Ingestor(store, renamed).ingest_text("A fresh start.", "new.txt").status == "new"
    assert store.schema_status().model == "another-model"


def test_a_namespace_delete_goes_on_in_smaller_transactions_after_one_outgrew_the_server_memory(store, driver, hashing_embedder):
    # at a million chunks a batch of 10,000 documents (each keeping its whole text) outgrew
    # the default 1 GB heap's transaction memory; the server's refusal is stood in for here
    from kgrag_neo4j.store import Neo4jStore

    from .reliability_helpers import TriggerRegistry

    _fill(store, hashing_embedder)
    chunks = store.list_namespaces()
    chunks = next(n for n in chunks if n.namespace == store.namespace).chunks

    def outgrown() -> None:
        raise TransactionMemoryError("a transaction outgrew the server's transaction memory (stood in for)")

    registry = TriggerRegistry(load_registry(), name="namespaces/delete_namespace_batch", nth=1, action=outgrown)
    deleting = Neo4jStore(driver, namespace=store.namespace, registry=registry)
    removed = deleting.delete_namespace(batch_size=8)
    assert removed["documents"] == 2 and removed["chunks"] == chunks
    assert registry.seen > 2, "the delete went on after the refused batch"
    assert _snapshot(driver, store.namespace) == []

    # a single node too large for the server's memory is not retried for ever
    def always() -> None:
        raise TransactionMemoryError("stood in for")

    _fill(store, hashing_embedder)
    refusing = Neo4jStore(driver, namespace=store.namespace, registry=_Always(load_registry(), always))
    with pytest.raises(TransactionMemoryError):
        refusing.delete_namespace(batch_size=8)
    store.delete_namespace()


class _Always(dict):
    """A registry whose namespace delete statement the server always refuses."""

    def __init__(self, inner, action):
        super().__init__(inner)
        self.root = getattr(inner, "root", None)
        self.action = action

    def __getitem__(self, key):
        if key == "namespaces/delete_namespace_batch":
            self.action()
        return super().__getitem__(key)


def test_namespace_commands(store, other, hashing_embedder, kgrag):
    _fill(store, hashing_embedder)
    code, out, _ = kgrag("namespace", "list", "--json")
    assert code == 0
    row = next(r for r in json.loads(out) if r["namespace"] == store.namespace)
    assert row["documents"] == 2 and row["triples"] == 1 and row["embedder"] == hashing_embedder.name
    code, out, _ = kgrag("namespace", "list")
    assert code == 0 and out.startswith("NAMESPACE") and store.namespace in out

    code, _, err = kgrag("namespace", "delete", store.namespace, input="n\n")
    assert code == 1 and "Delete namespace" in err and "2 documents" in err
    assert store.list_documents()  # refused: nothing deleted

    code, out, _ = kgrag("namespace", "delete", store.namespace, "--yes", "--json")
    assert code == 0
    assert json.loads(out)["documents"] == 2
    assert store.list_documents() == [] and store.count_triples() == 0

    code, out, err = kgrag("namespace", "delete", store.namespace, "--yes")
    assert code == 1 and err.count("\n") == 1 and "no namespace" in err
    code, out, err = kgrag("namespace", "delete", "bad\u202ename", "--yes")
    assert code == 1 and "Traceback" not in err


# -- 13. an entity build is switched on at once ------------------------------------------------------


def _entity_view(store, embedder) -> dict:
    """What readers of the entity graph see."""
    from kgrag_neo4j.retrieval.entity import EntityGraphRetriever
    from kgrag_neo4j.retrieval.local_search import LocalSearchRetriever

    query = embedder.embed(["Ned Stark Winterfell"], input_type="query")[0]
    local = store.local_context(query)
    boost = store.entity_boost_context(query, chunk_k=6, max_hops=2, expand_k=6)
    return {
        "listed": sorted((e.entity.name, e.mentions, e.degree) for e in store.list_entities()),
        "known": sorted(e.name for e in store.known_entities()),
        "searched": sorted(s.entity.name for s in store.search_entities(query, 50)),
        "local entities": sorted(e.name for e in local.entities),
        "boost query entities": sorted(e.name for e in boost.query_entities),
        "entity retrieval": [
            (r.content, round(r.score, 6)) for r in EntityGraphRetriever(store, embedder).retrieve("Ned Stark", 5)
        ],
        "local search": sorted(e.name for e in LocalSearchRetriever(store, embedder).context("Ned Stark").entities),
    }


@pytest.mark.parametrize("crash_before", ["entity_graph/write_links", "entity_graph/update_entities"])
def test_an_entity_build_that_dies_shows_nothing_until_a_rerun_finishes_it(
    store, other, driver, neo4j_settings, hashing_embedder, crash_before
):
    """New entities are staged until they have their type, description and embedding: a build
    that dies before shows no entity, and the next run finishes what it left."""
    from kgrag_neo4j.entities.pipeline import build_entities
    from kgrag_neo4j.store import Neo4jStore

    from .reliability_helpers import SimulatedCrash, TriggerRegistry

    for s in (store, other):
        Ingestor(s, hashing_embedder, chunker=RecursiveChunker(max_tokens=20, overlap_tokens=0)).ingest_text(
            "Ned Stark rules Winterfell with Catelyn Stark.\n\nRobert Baratheon rides to Winterfell to see Ned Stark.",
            "north.txt",
        )
    empty = _entity_view(store, hashing_embedder)

    def crash():
        raise SimulatedCrash(crash_before)

    dying = Neo4jStore(
        driver,
        namespace=store.namespace,
        database=neo4j_settings.database,
        registry=TriggerRegistry(load_registry(), name=crash_before, nth=1, action=crash),
    )
    with pytest.raises(SimulatedCrash):
        build_entities(dying, hashing_embedder)
    staged = _fetch(driver, "MATCH (e:Entity {staged_namespace: $ns}) RETURN count(e) AS n", ns=store.namespace)[0]["n"]
    assert staged > 0 if crash_before == "entity_graph/update_entities" else staged == 0
    assert _entity_view(store, hashing_embedder) == empty  # nothing of the unfinished build is seen

    build_entities(store, hashing_embedder)  # the re-run finishes what the dead build left
    build_entities(other, hashing_embedder)  # a clean build of the same text, for comparison
    done = _entity_view(store, hashing_embedder)
    assert done["listed"] and done == _entity_view(other, hashing_embedder)
    assert _fetch(driver, "MATCH (e:Entity {staged_namespace: $ns}) RETURN count(e) AS n", ns=store.namespace)[0]["n"] == 0


# -- 6. Python retrievers refuse an embedder the namespace was not built with ------------------------


def test_every_retriever_refuses_another_embedding_model(store, driver, neo4j_settings, hashing_embedder):
    from kgrag_neo4j.errors import ConfigurationError
    from kgrag_neo4j.retrieval.entity import EntityGraphRetriever
    from kgrag_neo4j.retrieval.local_search import LocalSearchRetriever
    from kgrag_neo4j.retrieval.ppr import PPRRetriever
    from kgrag_neo4j.retrieval.retrievers import GraphRetriever, HybridRetriever, VectorRetriever
    from kgrag_neo4j.retrieval.triples import TripleGraphRetriever
    from kgrag_neo4j.store import Neo4jStore

    _fill(store, hashing_embedder)
    # a 256-dimension model of another name, as WordLlama is: its vectors fit the index but
    # mean nothing next to the hashing ones
    other_model = _Renamed(hashing_embedder, "wordllama-l2_supercat-256")
    fresh = Neo4jStore(driver, namespace=store.namespace, database=neo4j_settings.database)  # remembers nothing
    for s in (store, fresh):
        retrievers = [
            VectorRetriever(s, other_model),
            HybridRetriever(s, other_model),
            GraphRetriever(s, other_model),
            EntityGraphRetriever(s, other_model),
            LocalSearchRetriever(s, other_model),
            TripleGraphRetriever(s, other_model),
            PPRRetriever(s, other_model),
        ]
        for retriever in retrievers:
            with pytest.raises(ConfigurationError, match="was embedded with 'hashing-256'"):
                retriever.retrieve("Ned Stark", 3)
    # the async path checks too (on the async driver), with a store that has checked nothing yet
    for make in (
        VectorRetriever,
        HybridRetriever,
        GraphRetriever,
        EntityGraphRetriever,
        LocalSearchRetriever,
        TripleGraphRetriever,
        PPRRetriever,
    ):
        unchecked = Neo4jStore(driver, namespace=store.namespace, database=neo4j_settings.database, settings=neo4j_settings)

        async def attempt(retriever=make(unchecked, other_model), owner=unchecked):  # noqa: B008 (bound once, on purpose)
            try:
                return await retriever.aretrieve("Ned Stark", 3)
            finally:
                await owner.aclose()

        with pytest.raises(ConfigurationError, match="was embedded with 'hashing-256'"):
            asyncio.run(attempt())
    assert VectorRetriever(fresh, hashing_embedder).retrieve("Ned Stark", 3)  # the right model is served
