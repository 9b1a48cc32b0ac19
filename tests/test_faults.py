"""Faults: the server dies mid-ingest or restarts between retrievals (on the tests' OWN
server, which they kill and restart), and providers fail, time out or talk garbage.

The server tests are ``slow``: each restart of a Neo4j costs tens of seconds.
"""

from __future__ import annotations

import json
import logging
import time
import uuid

import pytest
from click.testing import CliRunner

from kgrag_neo4j.cli import cli
from kgrag_neo4j.cypher_registry import load_registry
from kgrag_neo4j.errors import (
    ConnectionFailed,
    ProviderError,
    ProviderResponseError,
    ProviderTimeout,
    StoreError,
)
from kgrag_neo4j.ingestion.chunkers import RecursiveChunker
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.options import IngestGraphOptions
from kgrag_neo4j.retrieval.retrievers import GraphRetriever, HybridRetriever, VectorRetriever
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.store.runner import connect_driver
from kgrag_neo4j.types import PENDING_HASH_SUFFIX

from .conftest import TEST_DIMENSIONS
from .reliability_helpers import (  # noqa: F401  (no_leaked_threads is an autouse fixture)
    ScriptedChat,
    ScriptedEmbedder,
    SimulatedCrash,
    TriggerRegistry,
    documents,
    duplicates,
    edges_by_document,
    fail_with,
    no_leaked_threads,
    orphan_chunks,
)

#: the most an operation may take to fail while the server is down (retry window 15 s,
#: connection timeout 5 s, plus slack for a loaded 2-core machine)
OUTAGE_BOUND_SECONDS = 45.0


def corpus(n: int, *, tag: str = "") -> list[tuple[str, str]]:
    """``n`` (source, text) pairs, each text long enough for several chunks."""
    out = []
    for i in range(n):
        paragraphs = [
            f"Document {i}{tag} part {p}: the river {i} flows past the mill {p}. "
            + f"Topic {i % 3} words about bridges, harbours and railways number {p}. " * 3
            for p in range(6)
        ]
        out.append((f"fault/doc-{i}{tag}.txt", "\n\n".join(paragraphs)))
    return out


def small_chunks() -> RecursiveChunker:
    return RecursiveChunker(max_tokens=80, overlap_tokens=0)


# -- an outage stops a many-file ingest at once (red-team finding 12) -------------------------------


@pytest.mark.slow
@pytest.mark.server_restart
def test_an_outage_stops_a_folder_ingest_with_one_line_and_a_summary(own_server, tmp_path, monkeypatch):
    from kgrag_neo4j.ingestion import pipeline as pipeline_module
    from kgrag_neo4j.ingestion.writing import DocumentWriter

    settings = own_server.status().settings()
    folder = tmp_path / "kb"
    folder.mkdir()
    for source, text in corpus(6):
        (folder / source.replace("/", "-")).write_text(text)
    namespace = "outage-" + uuid.uuid4().hex[:8]
    real_write = DocumentWriter.write
    writes = []

    def write_then_outage(self, docs):
        writes.append([d.source for d in docs])
        written = real_write(self, docs)
        if len(writes) == 1:
            own_server.kill()  # the server dies after the first batch is stored
        return written

    monkeypatch.setattr(DocumentWriter, "write", write_then_outage)
    monkeypatch.setattr(pipeline_module, "WRITE_BATCH_CHUNKS", 1)  # one document per transaction
    # one writer: the test counts the batches tried after the outage (with two at once, the
    # batch written beside the first may or may not commit before the kill)
    monkeypatch.setattr(pipeline_module, "WRITERS", 1)
    restarted = False
    try:
        result = CliRunner().invoke(
            cli,
            [
                "--uri",
                settings.uri,
                "--password",
                settings.password,
                "ingest",
                str(folder),
                "--namespace",
                namespace,
                "--embedder",
                "hashing",
            ],
        )
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        assert result.exit_code == 1
        assert len(writes) == 2, f"the run went on after the outage: {len(writes)} batches written"
        lines = [line for line in result.stderr.splitlines() if not line.startswith("embedder:")]
        assert len(lines) == 1, lines  # no driver retry warnings: the stop, naming the error
        assert lines[0].startswith("stopped: ConnectionFailed: cannot reach Neo4j") and "5 files not written" in lines[0]
        assert "1 new" in result.stdout and "5 not attempted" in result.stdout

        own_server.start(timeout=300)
        restarted = True
        monkeypatch.setattr(DocumentWriter, "write", real_write)
        again = CliRunner().invoke(
            cli,
            [
                "--uri",
                settings.uri,
                "--password",
                settings.password,
                "ingest",
                str(folder),
                "--namespace",
                namespace,
                "--embedder",
                "hashing",
                "--json",
            ],
        )
        assert again.exit_code == 0, again.output
        summary = json.loads(again.stdout)["summary"]
        assert (summary["new"], summary["unchanged"], summary["stopped"]) == (5, 1, None)
    finally:
        if not restarted:
            own_server.start(timeout=300)


# -- the server dies mid-ingest, is down for a while, and restarts ----------------------------------
#
# One scenario, one restart (a Neo4j restart costs tens of seconds): the server is SIGKILLed
# inside the third document's transaction; during the outage retrievals and the CLI fail fast
# with one clear error; after the restart the SAME driver serves the next retrieval, every
# document is whole or absent, and re-running the ingest completes it without duplicates.


@pytest.mark.slow
@pytest.mark.server_restart
def test_server_killed_mid_ingest_then_restarted(own_server, hashing_embedder):
    settings = own_server.status().settings()
    # a short retry window: the outage is certain, the test need not wait 15 s for it
    driver = connect_driver(settings, max_retry_seconds=3.0, connect_seconds=2.0)
    namespace = "kill-" + uuid.uuid4().hex[:8]
    docs = corpus(5)
    restarted = False
    try:
        # SIGKILL the server while the third document's transaction is open: its document and
        # chunks are written, its edges are about to be
        registry = TriggerRegistry(load_registry(), name="graph/store_edges", nth=3, action=own_server.kill)
        dying = Neo4jStore(driver, namespace=namespace, registry=registry)
        options = dict(chunker=small_chunks(), graph=IngestGraphOptions(sequence_edges=True))
        ingestor = Ingestor(dying, hashing_embedder, **options)
        done = [ingestor.ingest_text(text, source, source) for source, text in docs[:2]]
        store = Neo4jStore(driver, namespace=namespace)
        retrievers = [
            VectorRetriever(store, hashing_embedder),
            HybridRetriever(store, hashing_embedder),
            GraphRetriever(store, hashing_embedder),
        ]
        before = [[r.id for r in ret.retrieve("river mill bridges", 4)] for ret in retrievers]
        assert all(len(ids) == 4 for ids in before)

        failure, started = None, time.monotonic()
        for source, text in docs[2:]:
            try:
                done.append(ingestor.ingest_text(text, source, source))
            except StoreError as exc:
                failure = exc
                break
        assert registry.seen == 3 and len(done) == 2, "the kill did not land in the third document"
        assert isinstance(failure, ConnectionFailed), repr(failure)
        assert "\n" not in str(failure) and "cannot reach Neo4j" in str(failure)
        assert time.monotonic() - started < OUTAGE_BOUND_SECONDS

        # during the outage: one clear error, in bounded time, from every retriever...
        for retriever in retrievers:
            started = time.monotonic()
            with pytest.raises(ConnectionFailed) as caught:
                retriever.retrieve("river mill bridges", 4)
            assert time.monotonic() - started < OUTAGE_BOUND_SECONDS
            assert "\n" not in str(caught.value) and "cannot reach Neo4j" in str(caught.value)
        # ... and from the CLI, with its default timeouts, in one line and exit code 1
        started = time.monotonic()
        result = CliRunner().invoke(
            cli,
            [
                "--uri",
                settings.uri,
                "--password",
                settings.password,
                "search",
                "river",
                "--mode",
                "vector",
                "--embedder",
                "hashing",
                "--namespace",
                namespace,
            ],
        )
        assert time.monotonic() - started < OUTAGE_BOUND_SECONDS
        assert result.exit_code == 1, result.output
        lines = [line for line in result.stderr.splitlines() if not line.startswith("embedder:")]
        assert len(lines) == 1 and lines[0].startswith("Error: ConnectionFailed: cannot reach Neo4j"), lines
        assert settings.password not in result.output

        own_server.start(timeout=300)
        restarted = True
        # the same driver reconnects: the next retrieval answers as before the outage
        assert [[r.id for r in ret.retrieve("river mill bridges", 4)] for ret in retrievers] == before

        after_crash = documents(driver, namespace)
        edges_after_crash = edges_by_document(driver, namespace)
        assert set(after_crash) == {r.document_id for r in done}, "only committed documents may survive"

        rerun = Ingestor(store, hashing_embedder, **options)
        results = [rerun.ingest_text(text, source, source) for source, text in docs]
        assert [r.status for r in results] == ["unchanged", "unchanged", "new", "new", "new"]

        final = documents(driver, namespace)
        final_edges = edges_by_document(driver, namespace)
        assert set(final) == {r.document_id for r in results}
        for r in results:
            chunks = final[r.document_id]["chunks"]
            assert len(chunks) == r.chunk_count > 2
            # flat chunks of one document: a chain of sequence edges
            assert len(final_edges.get(r.document_id, ())) == len(chunks) - 1
        for doc_id, state in after_crash.items():  # whatever survived was already whole
            assert state["chunks"] == final[doc_id]["chunks"]
            assert edges_after_crash.get(doc_id) == final_edges[doc_id]
        assert duplicates(driver, namespace) == 0
        assert orphan_chunks(driver, namespace) == 0
    finally:
        if not restarted:
            own_server.start(timeout=300)  # leave the server up for the tests after this one
        driver.close()


def test_ingest_dying_while_writing_similarity_edges_leaves_the_document_absent(store, driver, hashing_embedder):
    """Similarity edges are written in the document's own transaction (found before it, exact
    in memory and by a vector-index read): the process dying while they are written leaves
    the document absent, not stored without them, and the same ingest run again writes it
    whole. (Before, they were a post-commit step guarded by a pending hash.)"""
    docs = corpus(3, tag="-sim")
    options = dict(
        chunker=small_chunks(),
        graph=IngestGraphOptions(sequence_edges=True, similarity_edges=True, similarity_threshold=0.2),
    )

    def crash():
        raise SimulatedCrash()

    registry = TriggerRegistry(load_registry(), name="graph/store_edges", nth=2, action=crash)
    dying = Neo4jStore(driver, namespace=store.namespace, registry=registry)
    ingestor = Ingestor(dying, hashing_embedder, **options)
    first = ingestor.ingest_text(docs[0][1], docs[0][0])
    with pytest.raises(SimulatedCrash):
        ingestor.ingest_text(docs[1][1], docs[1][0])
    state = documents(driver, store.namespace)
    assert set(state) == {first.document_id}, "the dying document's transaction must not commit"
    assert state[first.document_id]["hash"] == first.document.content_hash
    assert orphan_chunks(driver, store.namespace) == 0

    rerun = Ingestor(store, hashing_embedder, **options)
    results = [rerun.ingest_text(text, source) for source, text in docs]
    assert [r.status for r in results] == ["unchanged", "new", "new"]
    assert rerun.ingest_text(docs[1][1], docs[1][0]).status == "unchanged"
    final = documents(driver, store.namespace)
    assert not any(s["hash"].endswith(PENDING_HASH_SUFFIX) for s in final.values())
    for r in results:
        relations = _relations_of(driver, store.namespace, r.document_id)
        assert "similar_to" in relations and "sequence" in relations
    assert duplicates(driver, store.namespace) == 0


def _relations_of(driver, namespace, document_id):
    records, _, _ = driver.execute_query(
        "MATCH (s:Chunk {namespace: $ns, document_id: $d})-[r:RELATES_TO]->() RETURN r.relation AS rel",
        ns=namespace,
        d=document_id,
    )
    return [r["rel"] for r in records]


# -- providers that fail, time out or answer garbage mid-ingest ----------------------------------

EMBEDDING_FAULTS = {
    "error": fail_with(ProviderError("embedding service down")),
    "timeout": fail_with(ProviderTimeout("embedding call timed out after 30s")),
    "foreign exception": fail_with(RuntimeError("socket closed")),
    "too few vectors": lambda n, texts: [[0.1] * TEST_DIMENSIONS] * (len(texts) - 1),
    "wrong dimensions": lambda n, texts: [[0.1] * (TEST_DIMENSIONS - 1) for _ in texts],
    "NaN": lambda n, texts: [[float("nan")] * TEST_DIMENSIONS for _ in texts],
    "not numbers": lambda n, texts: [["x"] * TEST_DIMENSIONS for _ in texts],
    "None": lambda n, texts: [None for _ in texts],
}


def _faulty_second_document(fault):
    """A script that is healthy except while embedding the second document (after a healthy
    first batch of it: the failure is mid-document)."""
    state = {"doc": 0}

    def script(call, texts):
        if any("Document 1-emb" in t for t in texts):
            state["doc"] += 1
            if state["doc"] >= 2:
                return fault(call, texts)
        return None

    return script


@pytest.mark.parametrize("fault", sorted(EMBEDDING_FAULTS))
@pytest.mark.parametrize("policy", ["raise", "store_unembedded"])
def test_embedding_provider_failing_mid_ingest(store, driver, hashing_embedder, fault, policy):
    docs = corpus(3, tag="-emb")
    embedder = ScriptedEmbedder(hashing_embedder, _faulty_second_document(EMBEDDING_FAULTS[fault]))
    ingestor = Ingestor(store, embedder, chunker=small_chunks(), batch_size=2, embedding_failure=policy)
    outcomes = []
    for source, text in docs:
        try:
            outcomes.append(ingestor.ingest_text(text, source))
        except ProviderError as exc:
            outcomes.append(exc)
    first, second, third = outcomes
    assert first.status == "new" and third.status == "new" and not first.skipped
    stored = documents(driver, store.namespace)
    if policy == "raise":
        assert isinstance(second, ProviderError)
        assert "\n" not in str(second)
        assert set(stored) == {first.document_id, third.document_id}
    else:
        assert second.status == "new" and second.skipped and "embedding failed" in second.skipped[0]
        assert set(stored) == {first.document_id, second.document_id, third.document_id}
        chunks = store.list_document_chunks(second.document_id, with_embedding=True)
        assert len(chunks) == second.chunk_count and all(c.embedding is None for c in chunks)
        # an unembedded document is still found by keyword search
        hits = store.search_chunks_keyword("Document 1-emb river", 5)
        assert any(h.document_id == second.document_id for h in hits)
    assert duplicates(driver, store.namespace) == 0


def test_garbage_embedding_is_a_provider_response_error(store, hashing_embedder):
    embedder = ScriptedEmbedder(hashing_embedder, EMBEDDING_FAULTS["NaN"])
    with pytest.raises(ProviderResponseError, match="NaN"):
        Ingestor(store, embedder).ingest_text("some text to embed", "nan.txt")


# -- the LLM fails mid-ingest: graceful degradation ---------------------------------------------


def _edge_answer(prompt: str, *, good: bool = True, **override) -> str:
    import json
    import re

    ids = re.findall(r"^\[(chk_[0-9a-f]+)\]:", prompt, flags=re.M)
    edge = {"source": ids[1], "target": ids[0], "relation": "elaborates", "weight": 0.8, "description": "more"}
    edge.update(override)
    return json.dumps({"edges": [edge] if good else []})


LLM_FAULTS = {
    # seed: "LLM call fails during extraction" -> batch skipped, the others continue, WARN
    "call fails": lambda n, p: (_ for _ in ()).throw(ProviderError("chat service down")),
    "times out": lambda n, p: (_ for _ in ()).throw(ProviderTimeout("chat timed out")),
    "foreign exception": lambda n, p: (_ for _ in ()).throw(ConnectionResetError("peer reset")),
    # seed: "LLM returns invalid JSON" -> batch skipped
    "invalid JSON": lambda n, p: "Sure! Here are the edges: {edges: [oops",
    "wrong shape": lambda n, p: '{"relationships": []}',
    "not text": lambda n, p: None,
}


@pytest.mark.parametrize("fault", sorted(LLM_FAULTS))
def test_llm_failing_batch_is_skipped_and_the_rest_kept(store, driver, hashing_embedder, caplog, fault):
    def answer(n, prompt):
        # batches alternate: even calls fail, odd ones answer well
        return LLM_FAULTS[fault](n, prompt) if n % 2 == 0 else _edge_answer(prompt)

    chat = ScriptedChat(answer)
    graph = IngestGraphOptions(graph_extraction=chat, graph_batch_size=2, graph_extraction_workers=1)
    ingestor = Ingestor(store, hashing_embedder, chunker=small_chunks(), graph=graph)
    source, text = corpus(1, tag="-llm")[0]
    with caplog.at_level(logging.WARNING):
        result = ingestor.ingest_text(text, source)
    batches = chat.calls
    assert batches >= 3
    llm_edges = {e for e in edges_by_document(driver, store.namespace)[result.document_id] if e[2] == "elaborates"}
    assert len(llm_edges) == (batches + 1) // 2  # one edge per healthy batch
    assert result.edge_count == len(llm_edges)
    skipped = [r for r in caplog.records if r.levelno == logging.WARNING and "skipped" in r.getMessage()]
    assert len(skipped) == batches // 2


@pytest.mark.parametrize(
    "bad",
    [
        {"source": "chk_not_in_batch"},
        {"relation": "owns"},
        {"relation": "x'}]->() DETACH DELETE n //"},
        {"weight": 1.5},
        {"weight": 0},
        {"weight": "high"},
        {"source": None},
    ],
    ids=["bad id", "unknown relation", "injected relation", "weight > 1", "weight 0", "weight text", "no source"],
)
def test_llm_invalid_edge_is_dropped_and_the_others_kept(store, driver, hashing_embedder, bad):
    import json

    def answer(n, prompt):
        good = json.loads(_edge_answer(prompt))["edges"][0]
        broken = json.loads(_edge_answer(prompt, **bad))["edges"][0]
        broken["description"] = "broken"
        return json.dumps({"edges": [broken, good]})

    graph = IngestGraphOptions(graph_extraction=ScriptedChat(answer), graph_batch_size=3, graph_extraction_workers=2)
    ingestor = Ingestor(store, hashing_embedder, chunker=small_chunks(), graph=graph)
    source, text = corpus(1, tag="-bad")[0]
    result = ingestor.ingest_text(text, source)
    stored = edges_by_document(driver, store.namespace)[result.document_id]
    assert stored and all(rel == "elaborates" for _, _, rel in stored)
    assert result.edge_count == len(stored)
    records, _, _ = driver.execute_query(
        "MATCH (:Chunk {namespace: $ns})-[r:RELATES_TO]->() WHERE r.description = 'broken' RETURN count(r) AS n",
        ns=store.namespace,
    )
    assert records[0]["n"] == 0


class _FailingGraphStore(Neo4jStore):
    """The real store with one graph capability broken (seed degradation rows 5 and 6)."""

    fail: str = ""

    def get_edges(self, chunk_ids):
        if self.fail == "get_edges":
            raise StoreError("edges unavailable")
        return super().get_edges(chunk_ids)

    def get_chunks_by_ids(self, chunk_ids):
        if self.fail == "get_chunks_by_ids":
            raise StoreError("chunks unavailable")
        return super().get_chunks_by_ids(chunk_ids)

    def graph_retrieve(self, *args, **kwargs):
        raise StoreError("native traversal unavailable")


@pytest.mark.parametrize("fail", ["get_edges", "get_chunks_by_ids", "graph_retrieve"])
def test_graph_retrieval_degrades_to_the_seeds(store, driver, hashing_embedder, fail):
    ingestor = Ingestor(store, hashing_embedder, chunker=small_chunks(), graph=IngestGraphOptions(sequence_edges=True))
    for source, text in corpus(2, tag="-deg"):
        ingestor.ingest_text(text, source)
    broken = _FailingGraphStore(driver, namespace=store.namespace)
    broken.fail = fail
    seeds = {r.id for r in VectorRetriever(store, hashing_embedder).retrieve("river mill", 3)}
    # native=None uses the one-statement path, which fails here and falls back to the seeds
    retriever = GraphRetriever(broken, hashing_embedder, native=None if fail == "graph_retrieve" else False, seed_top_k=3)
    results = retriever.retrieve("river mill", 5)
    assert results and {r.id for r in results} <= seeds
    # nothing graph-found comes back; under the propagate blend a seed another seed raised
    # names that seed as its context
    assert all(c.from_chunk_id in seeds for r in results for c in r.graph_context)
