"""Resource hygiene: drivers, sessions and background threads are closed on every path,
including errors and Ctrl-C in the CLI. Every test here also fails on a leaked thread
(``no_leaked_threads``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import neo4j
import pytest
from click.testing import CliRunner

from kgrag_neo4j.cli import cli
from kgrag_neo4j.errors import DatabaseNotFound, InputError, ProviderError, StoreError
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.options import IngestGraphOptions
from kgrag_neo4j.retrieval.retrievers import HybridRetriever
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.store import neo4j_store as neo4j_store_module
from kgrag_neo4j.store.runner import CypherRunner
from kgrag_neo4j.triples.buffer import THREAD_NAME, GraphBuffer
from kgrag_neo4j.types.triples import Triple

from .reliability_helpers import ScriptedChat, driver_closed, live_threads, no_leaked_threads  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def opened(monkeypatch):
    """Every driver ``Neo4jStore.connect`` opens during the test."""
    drivers: list[neo4j.Driver] = []
    real = neo4j_store_module.connect_driver

    def recording(*args, **kwargs):
        d = real(*args, **kwargs)
        drivers.append(d)
        return d

    monkeypatch.setattr(neo4j_store_module, "connect_driver", recording)
    return drivers


def _closed(driver) -> bool:
    """Closed by the flag, and no connection left open in its pool."""
    pool = getattr(driver, "_pool", None)
    open_connections = sum(len(c) for c in getattr(pool, "connections", {}).values())
    return driver_closed(driver) and open_connections == 0


# -- the store ---------------------------------------------------------------------------------------


def test_connect_then_close_closes_the_driver(neo4j_settings, opened):
    store = Neo4jStore.connect(neo4j_settings)
    store.list_documents()
    store.close()
    store.close()  # idempotent
    assert len(opened) == 1 and _closed(opened[0])
    with Neo4jStore.connect(neo4j_settings) as store:
        store.list_documents()
    assert _closed(opened[1])


def test_a_failing_connect_closes_its_driver(neo4j_settings, opened):
    with pytest.raises(DatabaseNotFound):
        Neo4jStore.connect(neo4j_settings.with_(database="no-such-database"))
    assert len(opened) == 1 and _closed(opened[0])


def test_an_error_inside_a_with_block_closes_the_driver(neo4j_settings, opened):
    with pytest.raises(RuntimeError):
        with Neo4jStore.connect(neo4j_settings):
            raise RuntimeError("boom")
    assert _closed(opened[0])


def test_a_borrowed_driver_stays_open(driver, neo4j_settings):
    store = Neo4jStore(driver, namespace="borrow", database=neo4j_settings.database)
    store.with_namespace("other").close()
    store.close()
    assert not driver_closed(driver)
    driver.verify_connectivity()


def test_failed_statements_do_not_leak_sessions(neo4j_settings):
    """30 failing statements through a pool of 2 connections: a leaked session would hold
    its connection and the next acquisition would time out."""
    auth = (neo4j_settings.user, neo4j_settings.password)
    with neo4j.GraphDatabase.driver(
        neo4j_settings.uri,
        auth=auth,
        max_connection_pool_size=2,
        connection_acquisition_timeout=5,
        notifications_disabled_categories=["UNRECOGNIZED"],
    ) as drv:
        runner = CypherRunner(drv, database=neo4j_settings.database)
        for _ in range(15):
            with pytest.raises(StoreError):
                runner.read("documents/list_documents", namespace="x", limit=-1)
            with pytest.raises(StoreError):
                runner.write_fn(lambda tx: tx.run("documents/list_documents", namespace="x", limit=-1))
        started = time.monotonic()
        assert runner.read("documents/list_documents", namespace="x", limit=1) == []
        assert time.monotonic() - started < 4


# -- the CLI -------------------------------------------------------------------------------------------


def _invoke(settings, *args):
    return CliRunner().invoke(cli, ["--uri", settings.uri, "--password", settings.password, *args])


def test_cli_closes_its_store_on_success_and_on_errors(neo4j_settings, opened):
    assert _invoke(neo4j_settings, "docs", "list").exit_code == 0
    missing = _invoke(neo4j_settings, "docs", "show", "doc_missing")
    assert missing.exit_code == 1 and "NotFoundError" in missing.stderr
    bad = _invoke(neo4j_settings, "search", "q", "--top-k", "0", "--embedder", "hashing")
    assert bad.exit_code == 1
    assert len(opened) == 3 and all(_closed(d) for d in opened)


def test_cli_ctrl_c_exits_130_and_closes_the_store(neo4j_settings, opened, monkeypatch):
    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Neo4jStore, "list_documents_with_counts", interrupted)
    result = _invoke(neo4j_settings, "docs", "list")
    assert result.exit_code == 130
    assert result.stderr.strip() == "interrupted"
    assert len(opened) == 1 and _closed(opened[0])


def test_cli_unexpected_error_still_closes_the_store(neo4j_settings, opened, monkeypatch):
    def broken(self, *args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(Neo4jStore, "list_documents_with_counts", broken)
    result = _invoke(neo4j_settings, "docs", "list")
    assert result.exit_code == 1 and isinstance(result.exception, RuntimeError)
    assert len(opened) == 1 and _closed(opened[0])


@pytest.mark.slow
def test_real_sigint_during_an_ingest(neo4j_settings, tmp_path, make_namespace):
    """A real Ctrl-C (SIGINT) while ``kgrag ingest`` runs: exit 130, one line, no traceback."""
    # enough files that the signal lands mid-ingest: a folder is written many documents per
    # transaction, and a SIGINT that arrives while Python is shutting down kills it silently
    for i in range(4_000):
        (tmp_path / f"f{i:04d}.txt").write_text(f"File {i} about rivers and bridges. " * 40)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "NEO4J_URI": neo4j_settings.uri,
        "NEO4J_PASSWORD": neo4j_settings.password or "",
        "PYTHONUNBUFFERED": "1",
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kgrag_neo4j",
            "ingest",
            str(tmp_path),
            "--embedder",
            "hashing",
            "--namespace",
            make_namespace("sigint"),
            "--sequence-edges",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
        # a shell gives the command SIGINT's default disposition; inside a long pytest run an
        # earlier library may have left it ignored, and Python keeps an inherited SIG_IGN
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        first = proc.stderr.readline()  # "embedder: ..." is printed inside the command
        assert first.startswith("embedder:"), first
        # soon after the command started: on a quiet machine the 4,000 files take a few
        # seconds, and a signal that lands after the summary is no interrupt at all
        time.sleep(0.5)
        assert proc.poll() is None, "the ingest ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["interrupted"], err
    assert "Traceback" not in err + out


# -- background threads ---------------------------------------------------------------------------------


def _buffer_threads():
    return [t for t in live_threads() if t.name == THREAD_NAME]


def test_graph_buffer_thread_ends_on_stop_and_on_errors(store):
    triples = [Triple(f"s{i}", "caused_by", f"o{i}") for i in range(10)]
    with GraphBuffer(store.add_triples, batch_size=4, flush_interval=0.05) as buffer:
        buffer.enqueue(triples)
        assert _buffer_threads()
    assert not _buffer_threads() and buffer.stats.written == 10
    assert store.count_triples() == 10

    def failing(batch):
        raise StoreError("database down")

    buffer = GraphBuffer(failing, retries=1, retry_backoff=0.01, flush_interval=0.05).start()
    buffer.enqueue(triples)
    assert buffer.stop(timeout=10) is True
    assert not _buffer_threads() and buffer.stats.failed == 10

    with pytest.raises(ValueError):
        with GraphBuffer(store.add_triples, flush_interval=0.05) as buffer:
            buffer.enqueue(triples[:2])
            raise ValueError("the producer failed")
    assert not _buffer_threads() and buffer.stats.written == 2


def test_extraction_and_retrieval_pools_end_even_when_they_fail(store, hashing_embedder):
    def answer(n, prompt):
        raise ProviderError("chat down")

    graph = IngestGraphOptions(graph_extraction=ScriptedChat(answer), graph_extraction_workers=3, graph_batch_size=2)
    text = "\n\n".join(f"Paragraph {i} with words about rivers." * 3 for i in range(8))
    from kgrag_neo4j.ingestion.chunkers import RecursiveChunker

    Ingestor(store, hashing_embedder, chunker=RecursiveChunker(max_tokens=30, overlap_tokens=0), graph=graph).ingest_text(
        text, "pool.txt"
    )

    class BrokenKeyword(Neo4jStore):
        def search_chunks_keyword(self, *args, **kwargs):
            raise InputError("keyword index gone")

    broken = BrokenKeyword(store.driver, namespace=store.namespace)
    assert HybridRetriever(broken, hashing_embedder).retrieve("rivers", 3)
    # the no_leaked_threads fixture checks the kgrag-edges and kgrag-hybrid pools are gone
