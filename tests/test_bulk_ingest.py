"""Bulk ingest against the real server: many documents per transaction, still all or nothing
per document; folders through ``Ingestor.ingest_paths``; similarity edges found in memory
and by the index; large documents written in several transactions and published whole."""

from __future__ import annotations

import threading
import time

import pytest

from kgrag_neo4j import ids
from kgrag_neo4j.cypher_registry import load_registry
from kgrag_neo4j.errors import InputError
from kgrag_neo4j.ingestion.chunkers import RecursiveChunker
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.options import IngestGraphOptions
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.store import documents as store_documents_module
from kgrag_neo4j.types import Chunk, ChunkEdge, Document, RelationType

from .reliability_helpers import (  # noqa: F401  (no_leaked_threads is an autouse fixture)
    SimulatedCrash,
    TriggerRegistry,
    documents,
    duplicates,
    no_leaked_threads,
    orphan_chunks,
)
from .test_ingestor import CountingEmbedder

SMALL = RecursiveChunker(max_tokens=40, overlap_tokens=0)


def _doc(store, name: str, texts: list[str], embedder) -> tuple[Document, list[Chunk]]:
    doc_id = ids.document_id(store.namespace, name)
    vectors = embedder.embed(texts)
    chunks = [
        Chunk(id=ids.chunk_id(doc_id, "flat", i, t), document_id=doc_id, content=t, chunk_index=i, embedding=v)
        for i, (t, v) in enumerate(zip(texts, vectors))
    ]
    return Document(
        id=doc_id, source=name, title=name, content=" ".join(texts), content_hash=ids.content_hash(name + "|".join(texts))
    ), chunks


def _count(driver, query: str, **params) -> int:
    records, _, _ = driver.execute_query(query, **params)
    return records[0][0]


# -- store_documents ----------------------------------------------------------------------------


def test_many_documents_in_one_transaction_and_a_refused_one_takes_nothing_down(store, driver, hashing_embedder):
    items = [_doc(store, f"bulk/{i}.txt", [f"river {i} mill", f"bridge {i} stone"], hashing_embedder) for i in range(6)]
    # document 3 reuses a chunk id of document 0: storing it would move the chunk
    doc3, chunks3 = items[3]
    stolen = Chunk(id=items[0][1][0].id, document_id=doc3.id, content="stolen", embedding=chunks3[0].embedding)
    items[3] = (doc3, [stolen, *chunks3[1:]])
    edge = ChunkEdge(items[1][1][0].id, items[2][1][0].id, RelationType.REFERENCES, 0.8, origin="llm")
    # within one call, the second claimant is refused before anything is sent
    outcomes = store.store_documents([items[0], items[3]])
    assert outcomes[0] == "new" and isinstance(outcomes[1], InputError)
    # across calls, the database finds the conflict: the transaction is rolled back and run
    # again without that document
    store.expected_dimensions()
    before = store.runner.round_trips
    outcomes = store.store_documents([(d, c, (edge,) if i == 1 else ()) for i, (d, c) in enumerate(items)][1:])
    assert [o if isinstance(o, str) else type(o).__name__ for o in outcomes] == ["new", "new", "InputError", "new", "new"]
    assert f"already belongs to document {items[0][0].id!r}" in str(outcomes[2])
    assert store.runner.round_trips - before == 1  # one committed transaction
    state = documents(driver, store.namespace)
    assert set(state) == {d.id for i, (d, _) in enumerate(items) if i != 3}
    assert all(len(s["chunks"]) == 2 for s in state.values())
    assert state[items[0][0].id]["chunks"] == {c.id for c in items[0][1]}
    # the edge to a chunk of another document of the same call is written
    assert store.get_edges([items[1][1][0].id])[0].target_id == items[2][1][0].id
    assert orphan_chunks(driver, store.namespace) == 0
    # again: unchanged; one changed: replaced, its stale chunk gone and its kept chunk keeps its edge
    doc1, chunks1 = items[1]
    changed = (
        Document(id=doc1.id, source=doc1.source, title="v2", content="v2", content_hash="v2"),
        [Chunk(id=chunks1[0].id, document_id=doc1.id, content=chunks1[0].content, embedding=chunks1[0].embedding)],
    )
    again = store.store_documents([items[0], changed])
    assert again == ["unchanged", "replaced"]
    assert documents(driver, store.namespace)[doc1.id]["chunks"] == {chunks1[0].id}
    assert [e.target_id for e in store.get_edges([chunks1[0].id])] == [items[2][1][0].id]
    assert duplicates(driver, store.namespace) == 0


def test_a_document_of_another_namespace_is_refused_alone(store, driver, hashing_embedder):
    other = Neo4jStore(driver, namespace=store.namespace + "-other")
    doc, chunks = _doc(other, "shared.txt", ["alpha beta"], hashing_embedder)
    assert other.store_documents([(doc, chunks)]) == ["new"]
    mine = _doc(store, "mine.txt", ["gamma delta"], hashing_embedder)
    # the same document id, stored through this namespace
    foreign = (
        Document(id=doc.id, source="shared.txt", content="x", content_hash="x"),
        [Chunk(id=doc.id + "-c", document_id=doc.id, content="x", embedding=chunks[0].embedding)],
    )
    outcomes = store.store_documents([foreign, mine])
    assert isinstance(outcomes[0], InputError) and "another namespace" in str(outcomes[0])
    assert outcomes[1] == "new"
    assert set(documents(driver, store.namespace)) == {mine[0].id}
    assert documents(driver, other.namespace)[doc.id]["hash"] == doc.content_hash
    driver.execute_query("MATCH (n {namespace: $ns}) DETACH DELETE n", ns=other.namespace)


def test_new_documents_are_written_by_one_statement_and_the_rest_by_the_careful_ones(
    store, driver, hashing_embedder, monkeypatch
):
    """New documents get their chunks from documents/write_documents (CREATE, no ownership
    test per chunk); a taken chunk id rolls that back and the careful statements decide."""
    sent: list[str] = []
    real_run = store_documents_module.TxRunner.run

    def spy(self, name, /, **params):  # records the statement; the real server runs it
        sent.append(name)
        return real_run(self, name, **params)

    monkeypatch.setattr(store_documents_module.TxRunner, "run", spy)
    items = [_doc(store, f"fast/{i}.txt", [f"owl {i} night", f"fox {i} den"], hashing_embedder) for i in range(3)]
    assert store.store_documents(items) == ["new", "new", "new"]
    assert sent == ["documents/write_documents"]
    state = documents(driver, store.namespace)
    assert {d: s["chunks"] for d, s in state.items()} == {d.id: {c.id for c in cs} for d, cs in items}
    assert (
        _count(
            driver,
            "MATCH (c:Chunk {namespace: $ns}) WHERE c.embedding IS NOT NULL "
            "AND c.document_hash IS NOT NULL AND c.name IS NOT NULL RETURN count(c)",
            ns=store.namespace,
        )
        == 6
    )

    # stored documents (unchanged or replaced) go through chunks/upsert_chunks as before
    sent.clear()
    changed = (Document(id=items[1][0].id, source="fast/1.txt", content="v2", content_hash="v2"), items[1][1][:1])
    assert store.store_documents([items[0], changed]) == ["unchanged", "replaced"]
    # the lock finds no entity graph here, so nothing is unlinked before the stale chunks go
    assert sent == ["documents/write_documents", "chunks/upsert_chunks", "entity_graph/lock", "documents/drop_stale_chunks"]
    assert documents(driver, store.namespace)[items[1][0].id]["chunks"] == {items[1][1][0].id}

    # a new document that takes another's chunk id: the fast statement fails on the id
    # constraint, the careful ones refuse that document alone and write the other
    sent.clear()
    thief_doc, thief_chunks = _doc(store, "fast/thief.txt", ["stolen"], hashing_embedder)
    thief = (
        thief_doc,
        [Chunk(id=items[2][1][0].id, document_id=thief_doc.id, content="stolen", embedding=thief_chunks[0].embedding)],
    )
    fine = _doc(store, "fast/fine.txt", ["badger sett"], hashing_embedder)
    outcomes = store.store_documents([thief, fine])
    assert isinstance(outcomes[0], InputError) and f"already belongs to document {items[2][0].id!r}" in str(outcomes[0])
    assert outcomes[1] == "new"
    assert sent[0] == "documents/write_documents" and "chunks/upsert_chunks" in sent
    state = documents(driver, store.namespace)
    assert thief_doc.id not in state and state[fine[0].id]["chunks"] == {c.id for c in fine[1]}
    assert state[items[2][0].id]["chunks"] == {c.id for c in items[2][1]}
    assert duplicates(driver, store.namespace) == 0 and orphan_chunks(driver, store.namespace) == 0


def test_a_new_document_with_parent_links_is_written_by_the_careful_statements(store, driver, hashing_embedder, monkeypatch):
    sent: list[str] = []
    real_run = store_documents_module.TxRunner.run
    monkeypatch.setattr(
        store_documents_module.TxRunner,
        "run",
        lambda self, name, /, **params: sent.append(name) or real_run(self, name, **params),
    )
    doc, chunks = _doc(store, "parents.txt", ["whole section", "first part", "second part"], hashing_embedder)
    parent = chunks[0]
    parent.embedding = None
    for c in chunks[1:]:
        c.parent_id = parent.id
    plain = _doc(store, "plain.txt", ["no parents here"], hashing_embedder)
    assert store.store_documents([(doc, chunks), plain]) == ["new", "new"]
    assert sent == ["documents/write_documents", "chunks/upsert_chunks"]
    assert (
        _count(
            driver,
            "MATCH (c:Chunk {namespace: $ns})-[:CHILD_OF]->(p:Chunk {id: $parent}) RETURN count(c)",
            ns=store.namespace,
            parent=parent.id,
        )
        == 2
    )
    assert set(documents(driver, store.namespace)) == {doc.id, plain[0].id}


# -- ingest_paths ---------------------------------------------------------------------------


def _folder(tmp_path, n: int) -> list:
    paths = []
    for i in range(n):
        p = tmp_path / f"doc-{i:03d}.txt"
        p.write_text(f"Document {i} is about the river mill number {i % 7}. " * 3 + f"It ends with word{i}.\n")
        paths.append(p)
    return paths


def test_a_folder_in_batches_with_failures_reported_per_file(store, driver, hashing_embedder, tmp_path, monkeypatch):
    import kgrag_neo4j.ingestion.pipeline as pipeline_module

    monkeypatch.setattr(pipeline_module, "GROUP_FILES", 7)
    monkeypatch.setattr(pipeline_module, "WRITE_BATCH_CHUNKS", 5)
    paths = _folder(tmp_path, 20)
    (tmp_path / "empty.txt").write_text("   \n")
    (tmp_path / "binary.txt").write_bytes(b"\x00\x01\x02" * 50)
    paths[4:4] = [tmp_path / "empty.txt", tmp_path / "binary.txt", tmp_path / "missing.txt"]
    embedder = CountingEmbedder(hashing_embedder)
    seen = []
    ingestor = Ingestor(store, embedder)
    results = ingestor.ingest_paths(paths, on_result=seen.append)
    assert [r.path for r in results] == [str(p) for p in paths]
    assert sorted(r.path for r in seen) == sorted(str(p) for p in paths)
    failed = {r.path.rsplit("/", 1)[1]: r for r in results if r.status == "failed"}
    assert set(failed) == {"empty.txt", "binary.txt", "missing.txt"}
    assert all(r.result is None and r.error is not None for r in failed.values())
    good = [r for r in results if r.status != "failed"]
    assert len(good) == 20 and all(r.status == "new" and r.result.chunk_count == 1 for r in good)
    assert len(documents(driver, store.namespace)) == 20
    # again: nothing is chunked or embedded, and each group of files costs one read
    embedder.calls = 0
    before = store.runner.round_trips
    again = ingestor.ingest_paths(paths)
    assert [r.status for r in again if r.status != "failed"] == ["unchanged"] * 20
    assert all(r.result.chunk_count == 1 for r in again if r.status == "unchanged")
    assert embedder.calls == 0
    assert store.runner.round_trips - before == 1 + 4  # is anything stored; 23 files in groups of 7
    assert duplicates(driver, store.namespace) == 0


class _SizedStore(Neo4jStore):
    """The real store, recording how many chunks each bulk write carried."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sizes: list[int] = []

    def store_documents(self, items):
        items = list(items)
        # in the folder's order (two batches may be written at once): by their first file
        self.sizes.append((items[0][0].source, sum(len(item[1]) for item in items)))
        self.sizes.sort()
        return super().store_documents(items)

    @property
    def batch_sizes(self) -> list[int]:
        return [size for _, size in self.sizes]


def test_the_first_groups_and_batches_are_small_and_double(
    driver, schema_ready, namespace, make_namespace, hashing_embedder, tmp_path, monkeypatch
):
    # the writer gets work soon: 2 chunks, then 4, then 8 (the most), as the files arrive in
    # groups of 3, 6, then 12 (one read each)
    import kgrag_neo4j.ingestion.pipeline as pipeline_module

    for name, value in (
        ("FIRST_GROUP_FILES", 3),
        ("GROUP_FILES", 12),
        ("FIRST_WRITE_BATCH_CHUNKS", 2),
        ("WRITE_BATCH_CHUNKS", 8),
    ):
        monkeypatch.setattr(pipeline_module, name, value)
    store = _SizedStore(driver, namespace=namespace)
    paths = _folder(tmp_path, 40)
    results = Ingestor(store, hashing_embedder).ingest_paths(paths)
    assert [r.status for r in results] == ["new"] * 40
    # groups 3 | 6 | 12 | 12 | 7; a batch not full at the end of a group goes on with the
    # next group's files (no small transaction for a group's last files)
    assert store.batch_sizes == [2, 4, 8, 8, 8, 8, 2]
    assert len(documents(driver, namespace)) == 40
    before = store.runner.round_trips
    assert [r.status for r in Ingestor(store, hashing_embedder).ingest_paths(paths)] == ["unchanged"] * 40
    assert store.runner.round_trips - before == 1 + 5  # is anything stored; one read per group
    # with similarity edges the batches are full from the start: a chunk is linked to its own
    # and earlier batches, so a small first batch would give its chunks fewer candidates
    linked = _SizedStore(driver, namespace=make_namespace())
    Ingestor(linked, hashing_embedder, graph=IngestGraphOptions(similarity_edges=True)).ingest_paths(_folder(tmp_path, 40))
    # (and written one at a time, so half the size: 4)
    assert linked.batch_sizes == [4] * 10


class _StatesCounted(Neo4jStore):
    """The real store, counting its reads of content hashes."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.state_reads = 0

    def document_states(self, document_ids):
        self.state_reads += 1
        return super().document_states(document_ids)


def test_an_empty_namespace_reads_no_content_hashes(driver, schema_ready, namespace, hashing_embedder, tmp_path, monkeypatch):
    import kgrag_neo4j.ingestion.pipeline as pipeline_module

    monkeypatch.setattr(pipeline_module, "GROUP_FILES", 4)
    monkeypatch.setattr(pipeline_module, "FIRST_GROUP_FILES", 4)
    store = _StatesCounted(driver, namespace=namespace)
    paths = _folder(tmp_path, 10)
    assert [r.status for r in Ingestor(store, hashing_embedder).ingest_paths(paths[:6])] == ["new"] * 6
    assert store.state_reads == 0
    # a namespace that holds documents: one read per group, and the unchanged are not written
    results = Ingestor(store, hashing_embedder).ingest_paths(paths)
    assert [r.status for r in results] == ["unchanged"] * 6 + ["new"] * 4
    assert store.state_reads == 3
    assert len(documents(driver, namespace)) == 10 and duplicates(driver, namespace) == 0


def test_two_runs_into_an_empty_namespace_at_once_write_each_file_once(
    driver, schema_ready, namespace, hashing_embedder, tmp_path
):
    # neither run reads content hashes (the namespace was empty when each began): the write
    # itself finds the documents the other run wrote first
    paths = _folder(tmp_path, 30)
    results: list = []

    def run() -> None:
        results.append(Ingestor(Neo4jStore(driver, namespace=namespace), hashing_embedder).ingest_paths(paths))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(results) == 2
    for statuses in zip(*[[r.status for r in rs] for rs in results]):
        assert sorted(statuses) == ["new", "unchanged"], statuses  # written by one run, found by the other
    state = documents(driver, namespace)
    assert len(state) == 30 and all(len(doc["chunks"]) == 1 for doc in state.values())
    assert duplicates(driver, namespace) == 0 and orphan_chunks(driver, namespace) == 0


class _SlowStore(Neo4jStore):
    """The real store, with each bulk write held open a little and its interval recorded."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.writes: list[tuple[float, float]] = []

    def store_documents(self, items):
        start = time.monotonic()
        time.sleep(0.3)
        out = super().store_documents(items)
        self.writes.append((start, time.monotonic()))
        return out


class _TimedEmbedder(CountingEmbedder):
    def __init__(self, inner):
        super().__init__(inner)
        self.times: list[float] = []

    def embed(self, texts, *, input_type="document"):
        self.times.append(time.monotonic())
        return super().embed(texts, input_type=input_type)


def test_the_next_batch_is_embedded_while_the_current_one_is_written(
    driver, schema_ready, namespace, hashing_embedder, tmp_path, monkeypatch
):
    import kgrag_neo4j.ingestion.pipeline as pipeline_module

    monkeypatch.setattr(pipeline_module, "WRITE_BATCH_CHUNKS", 4)
    store = _SlowStore(driver, namespace=namespace)
    embedder = _TimedEmbedder(hashing_embedder)
    results = Ingestor(store, embedder, batch_size=4).ingest_paths(_folder(tmp_path, 12))
    assert [r.status for r in results] == ["new"] * 12
    assert len(store.writes) == 3
    # batches 2 and 3 were embedded before the write of the batch ahead of them had ended
    # (a sequential loop embeds each batch after the previous one is written)
    assert len(embedder.times) == 3
    assert embedder.times[1] < store.writes[0][1] and embedder.times[2] < store.writes[1][1], (embedder.times, store.writes)


class _OverlapStore(Neo4jStore):
    """The real store, with each bulk write held open a little, counting how many run at once."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._lock = threading.Lock()
        self._open = 0
        self.most_at_once = 0

    def store_documents(self, items):
        with self._lock:
            self._open += 1
            self.most_at_once = max(self.most_at_once, self._open)
        try:
            time.sleep(0.3)
            return super().store_documents(items)
        finally:
            with self._lock:
                self._open -= 1


def test_two_batches_are_written_at_once_unless_one_needs_the_last_committed(
    driver, schema_ready, make_namespace, hashing_embedder, tmp_path, monkeypatch
):
    import kgrag_neo4j.ingestion.pipeline as pipeline_module

    monkeypatch.setattr(pipeline_module, "WRITE_BATCH_CHUNKS", 4)
    plain = _OverlapStore(driver, namespace=make_namespace())
    results = Ingestor(plain, hashing_embedder, batch_size=4).ingest_paths(_folder(tmp_path, 16))
    assert [r.status for r in results] == ["new"] * 16
    # the database runs each transaction's statement on one thread: a second writer keeps
    # the other core busy while the main thread embeds the next batch
    assert plain.most_at_once == pipeline_module.WRITERS == 2
    assert len(documents(driver, plain.namespace)) == 16
    assert duplicates(driver, plain.namespace) == 0 and orphan_chunks(driver, plain.namespace) == 0
    # a chunk's similarity edges may point to a chunk of the batch before: that batch must be
    # committed first, so the batches are written one at a time
    linked = _OverlapStore(driver, namespace=make_namespace())
    graph = IngestGraphOptions(similarity_edges=True, similarity_threshold=0.0, similarity_top_k=3)
    results = Ingestor(linked, hashing_embedder, batch_size=4, graph=graph).ingest_paths(_folder(tmp_path, 16))
    assert [r.status for r in results] == ["new"] * 16
    assert linked.most_at_once == 1


def test_a_lost_connection_stops_the_folder(store, hashing_embedder, tmp_path):
    from kgrag_neo4j.errors import ConnectionFailed

    class Gone(Neo4jStore):
        def store_documents(self, items):
            raise ConnectionFailed("cannot reach Neo4j: gone")

    gone = Gone(store.driver, namespace=store.namespace)
    with pytest.raises(ConnectionFailed):
        Ingestor(gone, hashing_embedder).ingest_paths(_folder(tmp_path, 3))


# -- similarity edges -----------------------------------------------------------------------


TOPICS = ["rivers and mills and water wheels", "kings and queens of old castles", "trains and railway stations"]


def _topic_folder(tmp_path, n: int, prefix: str = "t") -> list:
    paths = []
    for i in range(n):
        p = tmp_path / f"{prefix}-{i:03d}.txt"
        p.write_text(f"{TOPICS[i % 3]} {TOPICS[i % 3]} note {i}\n")
        paths.append(p)
    return paths


def _similar(driver, namespace):
    records, _, _ = driver.execute_query(
        "MATCH (s:Chunk {namespace: $ns})-[r:RELATES_TO {relation: 'similar_to'}]->(t) RETURN s.id AS s, t.id AS t, r.weight AS w",
        ns=namespace,
    )
    return {(r["s"], r["t"]): r["w"] for r in records}


def test_folder_similarity_edges_are_the_ones_the_index_finds(store, driver, hashing_embedder, tmp_path):
    # top k above the namespace size: no tie at the k-th neighbour can make the two answers differ
    graph = IngestGraphOptions(similarity_edges=True, similarity_threshold=0.3, similarity_top_k=20)
    first = Ingestor(store, hashing_embedder, graph=graph).ingest_paths(_topic_folder(tmp_path, 12))
    assert all(r.status == "new" for r in first)
    found = _similar(driver, store.namespace)
    assert found and all(w >= 0.3 for w in found.values())
    # the same edges as the database computes from the stored vectors (small namespace: exact)
    driver.execute_query("MATCH (:Chunk {namespace: $ns})-[r:RELATES_TO]->() DELETE r", ns=store.namespace)
    chunk_ids = [c for d in documents(driver, store.namespace).values() for c in d["chunks"]]
    store.build_similarity_edges(chunk_ids, top_k=20, threshold=0.3)
    by_index = _similar(driver, store.namespace)
    assert by_index.keys() == found.keys()
    assert all(abs(by_index[k] - found[k]) < 1e-4 for k in found)
    # a second folder into the namespace links to the first one's chunks (through the index)
    second = Ingestor(store, hashing_embedder, graph=graph).ingest_paths(_topic_folder(tmp_path, 3, prefix="u"))
    new_ids = {c for r in second for c in documents(driver, store.namespace)[r.result.document_id]["chunks"]}
    old_ids = set(chunk_ids)
    assert any(s in new_ids and t in old_ids for s, t in _similar(driver, store.namespace))


def test_edges_build_reads_documents_in_pages(store, driver, hashing_embedder, tmp_path, monkeypatch):
    import kgrag_neo4j.ingestion.chunk_edges as chunk_edges_module

    monkeypatch.setattr(chunk_edges_module, "EDGE_PAGE_DOCUMENTS", 4)
    Ingestor(store, hashing_embedder, chunker=SMALL).ingest_paths(_topic_folder(tmp_path, 10))
    graph = IngestGraphOptions(sequence_edges=True, similarity_edges=True, similarity_threshold=0.3, similarity_top_k=2)
    before = store.runner.round_trips
    counts = Ingestor(store, hashing_embedder, graph=graph).build_edges()
    assert counts["documents"] == 10 and counts["edges"] > 0
    # list the documents, 3 pages of chunks (everything fits the window: exact), 3 edge writes
    assert store.runner.round_trips - before == 1 + 3 + 3
    edges = _similar(driver, store.namespace)
    assert edges and max(sum(1 for s, _ in edges if s == x) for x, _ in edges) <= 2
    assert Ingestor(store, hashing_embedder, graph=graph).build_edges()["edges"] == counts["edges"]
    assert duplicates(driver, store.namespace) == 0


# -- large documents --------------------------------------------------------------------------


LARGE_TEXT = "\n\n".join(f"Section {i}. The mill on river {i} grinds grain for village {i}." for i in range(60))


def _visible(driver, namespace) -> tuple[int, int]:
    records, _, _ = driver.execute_query(
        "OPTIONAL MATCH (d:Document {namespace: $ns}) WITH count(d) AS docs "
        "OPTIONAL MATCH (c:Chunk {namespace: $ns}) RETURN docs, count(c) AS chunks",
        ns=namespace,
    )
    return records[0]["docs"], records[0]["chunks"]


def test_a_large_document_is_staged_and_published_whole(store, driver, hashing_embedder, monkeypatch):
    monkeypatch.setattr(store_documents_module, "LARGE_DOCUMENT_CHUNKS", 20)
    monkeypatch.setattr(store_documents_module, "STAGE_ROWS", 8)
    chunker = RecursiveChunker(max_tokens=20, overlap_tokens=0)
    options = dict(chunker=chunker, graph=IngestGraphOptions(sequence_edges=True))
    seen_while_staging: list[tuple[int, int]] = []

    def look():
        seen_while_staging.append(_visible(driver, store.namespace))

    # a reader looks after each staging transaction: the tenant holds nothing yet
    registry = TriggerRegistry(load_registry(), name="chunks/stage_chunks", nth=3, action=look)
    watched = Neo4jStore(driver, namespace=store.namespace, registry=registry)
    result = Ingestor(watched, hashing_embedder, **options).ingest_text(LARGE_TEXT, "big.txt")
    assert result.status == "new" and result.chunk_count > 40
    assert registry.seen >= 5, "the document was not written in several transactions"
    assert seen_while_staging == [(0, 0)]
    state = documents(driver, store.namespace)[result.document_id]
    assert len(state["chunks"]) == result.chunk_count
    assert len(store.get_edges(sorted(state["chunks"]))) == result.chunk_count - 1
    assert _count(driver, "MATCH (c:Chunk) WHERE c.namespace STARTS WITH $p RETURN count(c)", p="\x1f" + store.namespace) == 0

    # the process dies before publishing a new version: the old one stays whole
    changed = LARGE_TEXT.replace("Section 59.", "Section fifty-nine, rewritten.")

    def crash():
        raise SimulatedCrash()

    dying = Neo4jStore(
        driver,
        namespace=store.namespace,
        registry=TriggerRegistry(load_registry(), name="documents/publish_staged_chunks", nth=1, action=crash),
    )
    with pytest.raises(SimulatedCrash):
        Ingestor(dying, hashing_embedder, **options).ingest_text(changed, "big.txt")
    assert documents(driver, store.namespace)[result.document_id] == state
    # the rerun publishes it: the unchanged chunks are kept (with their edges), the stale one goes
    rerun = Ingestor(store, hashing_embedder, **options).ingest_text(changed, "big.txt")
    assert rerun.status == "replaced"
    after = documents(driver, store.namespace)[result.document_id]
    assert len(after["chunks"]) == rerun.chunk_count and len(after["chunks"] & state["chunks"]) >= rerun.chunk_count - 2
    assert len(store.get_edges(sorted(after["chunks"]))) == rerun.chunk_count - 1
    assert _count(driver, "MATCH (c:Chunk) WHERE c.namespace STARTS WITH $p RETURN count(c)", p="\x1f" + store.namespace) == 0
    assert orphan_chunks(driver, store.namespace) == 0
    assert duplicates(driver, store.namespace) == 0
    assert Ingestor(store, hashing_embedder, **options).ingest_text(changed, "big.txt").status == "unchanged"


# -- cancellation, spans and cross-document edges in the folder path ------------------------------


def test_a_cancelled_folder_writes_nothing_more_and_says_so_per_file(store, driver, hashing_embedder, tmp_path, monkeypatch):
    import kgrag_neo4j.ingestion.pipeline as pipeline_module
    from kgrag_neo4j.errors import Cancelled

    monkeypatch.setattr(pipeline_module, "WRITE_BATCH_CHUNKS", 3)
    paths = _folder(tmp_path, 9)
    events: list[tuple[str, dict]] = []
    ingestor = Ingestor(store, hashing_embedder, tracer=lambda event, attrs: events.append((event, dict(attrs))))

    def stop_after_first_batch(result) -> None:
        if result.status == "new":
            ingestor.cancel()  # the user cancels as the first results come in

    results = ingestor.ingest_paths(paths, on_result=stop_after_first_batch)
    written = [r for r in results if r.status == "new"]
    cancelled = [r for r in results if isinstance(r.exception, Cancelled)]
    assert written and cancelled and len(written) + len(cancelled) == 9
    assert len(written) <= 3 * pipeline_module.WRITERS  # at most the batches in flight
    assert set(documents(driver, store.namespace)) == {r.result.document_id for r in written}
    assert all("cancelled" in str(r.error) for r in cancelled)
    # one span for the run, with its counts
    assert [e for e, _ in events] == ["ingest.paths.start", "ingest.paths.end"]
    end = events[-1][1]
    assert end["files"] == 9 and end["new"] == len(written) and end["failed"] == len(cancelled) and end["cancelled"] is True
    ingestor.reset_cancel()
    again = ingestor.ingest_paths(paths)
    assert sorted(r.status for r in again) == sorted(["unchanged"] * len(written) + ["new"] * len(cancelled))


def _small_groups(monkeypatch, *, files: int, chunks: int) -> None:
    import kgrag_neo4j.ingestion.pipeline as pipeline_module

    for name, value in (
        ("FIRST_GROUP_FILES", files),
        ("GROUP_FILES", files),
        ("FIRST_WRITE_BATCH_CHUNKS", chunks),
        ("WRITE_BATCH_CHUNKS", chunks),
    ):
        monkeypatch.setattr(pipeline_module, name, value)


def _loads_recorded(ingestor: Ingestor, events: list) -> None:
    real = ingestor._load_file

    def load(path, **kwargs):
        events.append(("load", path))
        return real(path, **kwargs)

    ingestor._load_file = load


def test_a_batch_held_over_to_the_next_group_is_cancelled_with_the_run(store, driver, hashing_embedder, tmp_path, monkeypatch):
    from kgrag_neo4j.errors import Cancelled

    # groups of 3 files, batches of 2 chunks: the third file waits for the next group's
    _small_groups(monkeypatch, files=3, chunks=2)
    paths = _folder(tmp_path, 9)
    embedder = CountingEmbedder(hashing_embedder)
    ingestor = Ingestor(store, embedder)
    real = ingestor._load_file

    def cancel_at_the_next_group(path, **kwargs):
        if path == str(paths[3]):
            ingestor.cancel()
        return real(path, **kwargs)

    ingestor._load_file = cancel_at_the_next_group
    results = ingestor.ingest_paths(paths)
    assert [r.status for r in results[:2]] == ["new", "new"]
    assert all(isinstance(r.exception, Cancelled) for r in results[2:]), [r.status for r in results]
    assert set(documents(driver, store.namespace)) == {r.result.document_id for r in results[:2]}
    assert embedder.calls == 1  # the held-over file was not even embedded after the cancel


class _PoisonedChunker(RecursiveChunker):
    """Refuses a text that says POISON, as a chunker refuses what it cannot cut."""

    def chunk(self, text):
        if "POISON" in text:
            raise InputError("the chunker refused this text")
        return super().chunk(text)


def test_a_file_that_cannot_be_chunked_is_reported_before_the_next_group_is_read(
    store, driver, hashing_embedder, tmp_path, monkeypatch
):
    _small_groups(monkeypatch, files=4, chunks=2)
    paths = _folder(tmp_path, 6)
    (tmp_path / "poison.txt").write_text("POISON for the chunker\n")
    # group 1: doc-000, doc-001 (a batch), doc-002 (held over to the next group), poison
    paths[3:3] = [tmp_path / "poison.txt"]
    ingestor = Ingestor(store, hashing_embedder, chunker=_PoisonedChunker())
    events: list = []
    _loads_recorded(ingestor, events)
    results = ingestor.ingest_paths(paths, on_result=lambda r: events.append(("result", r.path)))
    assert [r.status for r in results] == ["new", "new", "new", "failed", "new", "new", "new"]
    assert events.index(("result", str(paths[3]))) < events.index(("load", str(paths[4])))
    assert len(documents(driver, store.namespace)) == 6


def test_cross_document_edges_during_a_folder_ingest_complete_the_pending_hash(store, driver, hashing_embedder, tmp_path):
    import json as _json

    from kgrag_neo4j.types import PENDING_HASH_SUFFIX

    class LinkFirstTwo:
        def __init__(self):
            self.calls = 0

        def chat(self, messages, *, json_schema=None):
            import re

            self.calls += 1
            found = re.findall(r"^\[([^\]]+)\]: ", messages[-1]["content"], re.MULTILINE)
            return _json.dumps(
                {
                    "edges": [
                        {
                            "source": found[0],
                            "target": found[1],
                            "relation": "references",
                            "weight": 0.8,
                            "description": "mentions it",
                        }
                    ]
                }
            )

    texts = [
        "Graph databases store nodes and relationships.",
        "Graph databases store nodes and relationships too.",
        "Graph databases keep nodes and their relationships.",
    ]
    paths = []
    for i, t in enumerate(texts):
        p = tmp_path / f"g{i}.txt"
        p.write_text(t)
        paths.append(p)
    chat = LinkFirstTwo()
    graph = IngestGraphOptions(graph_extraction=chat, cross_document_edges=True)
    results = Ingestor(store, hashing_embedder, graph=graph).ingest_paths(paths)
    assert [r.status for r in results] == ["new"] * 3
    assert chat.calls >= 1 and sum(r.result.edge_count for r in results) >= 1
    chunk_ids = [c.id for r in results for c in store.list_document_chunks(r.result.document_id)]
    cross = [e for e in store.get_edges(chunk_ids) if e.origin == "cross_document"]
    assert cross and all(e.source_id != e.target_id for e in cross)
    # every document got its final hash: a re-run calls them unchanged
    hashes = {d.content_hash for d in store.list_documents()}
    assert hashes and not any(h.endswith(PENDING_HASH_SUFFIX) for h in hashes)
    assert [r.status for r in Ingestor(store, hashing_embedder, graph=graph).ingest_paths(paths)] == ["unchanged"] * 3
