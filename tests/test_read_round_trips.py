"""A store read is one network round trip: its statement runs in an auto-commit transaction
(RUN and PULL sent together, no BEGIN, no COMMIT), on the sync and the async driver. When that
attempt meets a dead connection, the read runs again as the driver's managed, retried
transaction, so it still answers (the connection is cut by a TCP relay in front of the real
server: a network fault, not a fake server)."""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import urlsplit

import pytest
from neo4j import exceptions as neo4j_exc

from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.store.runner import ConcurrentDelete, connect_driver, worth_a_managed_retry
from kgrag_neo4j.types import Chunk, Document

from .tcp_cut import CuttingRelay

DIMS = 256


def _vector(i: int) -> list[float]:
    v = [0.0] * DIMS
    v[i % DIMS] = 1.0
    v[(i * 7 + 3) % DIMS] = 0.5
    return v


@pytest.fixture
def stored(store):
    chunks = [
        Chunk(
            id=f"{store.namespace}-c{i}",
            document_id=f"{store.namespace}-d",
            content=f"chunk {i}",
            chunk_index=i,
            embedding=_vector(i),
        )
        for i in range(6)
    ]
    store.store_documents(
        [(Document(id=f"{store.namespace}-d", source="round-trips.md", title="t", content="x", content_hash="h"), chunks)]
    )
    yield store
    store.delete_document(f"{store.namespace}-d")


def _messages(caplog) -> list[str]:
    """The Bolt requests the driver sent (``C: BEGIN``, ``C: RUN`` ...), from its debug log."""
    out = []
    for record in caplog.records:
        text = record.getMessage()
        if "  C: " in text:
            out.append(text.split("  C: ", 1)[1].split(" ", 1)[0])
    return out


def test_a_read_sends_one_run_and_no_transaction_of_its_own(stored, caplog):
    query = _vector(2)
    with caplog.at_level(logging.DEBUG, logger="neo4j"):
        caplog.clear()
        hits = stored.search_chunks(query, 3)
        sent = _messages(caplog)
    assert hits[0].id == f"{stored.namespace}-c2"
    requests = [m for m in sent if not m.startswith("<")]
    assert requests.count("RUN") == 1 and requests.count("PULL") == 1, sent
    assert "BEGIN" not in requests and "COMMIT" not in requests, sent


def test_an_async_read_sends_one_run_and_no_transaction_of_its_own(stored, caplog):
    query = _vector(4)

    async def search():
        try:
            await stored.asearch_chunks(query, 3)  # opens the loop's AsyncDriver (its HELLO)
            caplog.clear()
            return await stored.asearch_chunks(query, 3)
        finally:
            await stored.aclose()

    with caplog.at_level(logging.DEBUG, logger="neo4j"):
        hits = asyncio.run(search())
        sent = [m for m in _messages(caplog) if not m.startswith("<")]
    assert hits[0].id == f"{stored.namespace}-c4"
    assert sent.count("RUN") == 1 and "BEGIN" not in sent and "COMMIT" not in sent, sent


@pytest.fixture
def relay(neo4j_settings):
    parts = urlsplit(neo4j_settings.uri)
    r = CuttingRelay((parts.hostname or "127.0.0.1", parts.port or 7687))
    yield r, neo4j_settings.with_(uri=f"bolt://127.0.0.1:{r.port}")
    r.close()


def test_a_read_whose_connection_dies_under_it_runs_again_as_a_managed_transaction(stored, relay, caplog):
    cutter, settings = relay
    driver = connect_driver(settings)
    try:
        store = Neo4jStore(driver, namespace=stored.namespace, database=settings.database)
        query = _vector(5)
        before = [h.id for h in store.search_chunks(query, 3)]  # the connection is now pooled
        cutter.cut_next()
        with caplog.at_level(logging.DEBUG, logger="neo4j"):
            after = [h.id for h in store.search_chunks(query, 3)]
            sent = [m for m in _messages(caplog) if not m.startswith("<")]
        assert cutter.cuts == 1
        assert after == before and before[0] == f"{stored.namespace}-c5"
        # the first RUN went down with the connection; the answer came from a managed one
        assert sent.count("RUN") == 2 and "BEGIN" in sent and "COMMIT" in sent, sent
    finally:
        driver.close()


def test_an_async_read_whose_connection_dies_under_it_runs_again(stored, relay):
    cutter, settings = relay
    driver = connect_driver(settings)
    store = Neo4jStore(driver, namespace=stored.namespace, database=settings.database, settings=settings)
    query = _vector(1)

    async def search_twice():
        try:
            first = [h.id for h in await store.asearch_chunks(query, 3)]
            cutter.cut_next()
            return first, [h.id for h in await store.asearch_chunks(query, 3)]
        finally:
            await store.aclose()

    try:
        first, second = asyncio.run(search_twice())
    finally:
        driver.close()
    assert cutter.cuts == 1
    assert second == first and first[0] == f"{stored.namespace}-c1"


@pytest.mark.parametrize(
    ("error", "managed"),
    [
        (neo4j_exc.SessionExpired("connection lost"), True),
        (neo4j_exc.ServiceUnavailable("cannot connect"), True),
        (neo4j_exc.ConfigurationError("bad option"), False),
        (neo4j_exc.ResultConsumedError(None, "consumed"), False),
        (ConcurrentDelete("deleted meanwhile"), False),  # RaceRetry's, not the driver's
        (ValueError("not a driver error"), False),
    ],
)
def test_which_failures_of_the_one_round_trip_attempt_go_to_a_managed_transaction(error, managed):
    assert worth_a_managed_retry(error) is managed
