"""Shared by the reliability tests (faults, concurrency, hostile input, isolation,
credentials, resource hygiene): a thread-leak guard, graph snapshots read straight from the
database, and test doubles for providers. Nothing here mocks Neo4j."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from kgrag_neo4j.errors import ProviderError

# -- leaks ------------------------------------------------------------------------------------


def live_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.is_alive()}


def wait_for_threads(before: set[threading.Thread], *, timeout: float = 5.0) -> list[threading.Thread]:
    """Threads started since ``before`` that are still alive after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        extra = [t for t in live_threads() - before]
        if not extra or time.monotonic() > deadline:
            return extra
        time.sleep(0.05)


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    """Fail a test that leaves a thread running (a buffer, a pool, a driver helper)."""
    before = live_threads()
    yield
    leaked = wait_for_threads(before)
    assert not leaked, f"threads leaked by the test: {sorted(t.name for t in leaked)}"


def driver_closed(driver: Any) -> bool:
    """Whether a neo4j driver was closed (the 5.x driver keeps a ``_closed`` flag)."""
    return bool(getattr(driver, "_closed", False))


# -- what the database holds ----------------------------------------------------------------------

# Test-only inspection queries, static text with parameters (the library's own Cypher lives
# in cypher/); they read what the library wrote without going through it.
_DOCS = (
    "MATCH (d:Document {namespace: $ns}) "
    "OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk) "
    "WITH d, collect(c.id) AS chunks "
    "RETURN d.id AS id, d.source AS source, d.content_hash AS hash, chunks"
)
_EDGES = (
    "MATCH (s:Chunk {namespace: $ns})-[r:RELATES_TO]->(t:Chunk) "
    "RETURN s.id AS s, t.id AS t, r.relation AS relation, s.document_id AS sd, t.document_id AS td"
)
_DUPLICATES = (
    "CALL () { MATCH (d:Document {namespace: $ns}) WITH d.source AS k, count(*) AS n WHERE n > 1 RETURN count(*) AS x "
    "UNION ALL MATCH (c:Chunk {namespace: $ns}) WITH c.id AS k, count(*) AS n WHERE n > 1 RETURN count(*) AS x "
    "UNION ALL MATCH (d:Document {namespace: $ns})-[:HAS_CHUNK]->(c:Chunk) "
    "  WITH d, c.chunk_index AS i, c.parent_id AS p, count(c) AS n WHERE n > 1 RETURN count(*) AS x "
    "UNION ALL MATCH (s:Chunk {namespace: $ns})-[r:RELATES_TO]->(t) "
    "  WITH s, t, r.relation AS rel, count(r) AS n WHERE n > 1 RETURN count(*) AS x } "
    "RETURN sum(x) AS duplicates"
)
_ORPHANS = "MATCH (c:Chunk {namespace: $ns}) WHERE NOT EXISTS { (:Document)-[:HAS_CHUNK]->(c) } RETURN count(c) AS n"
_COUNTS = (
    "MATCH (n) WHERE n.namespace = $ns WITH count(n) AS nodes "
    "OPTIONAL MATCH ()-[r]->() WHERE r.namespace = $ns OR startNode(r).namespace = $ns "
    "RETURN nodes, count(r) AS rels"
)


def documents(driver, namespace: str, *, database: str | None = None) -> dict[str, dict[str, Any]]:
    """``{document id: {source, hash, chunks: set}}`` of one namespace."""
    records, _, _ = driver.execute_query(_DOCS, ns=namespace, database_=database)
    return {r["id"]: {"source": r["source"], "hash": r["hash"], "chunks": set(r["chunks"])} for r in records}


def edges(driver, namespace: str, *, database: str | None = None) -> set[tuple[str, str, str]]:
    records, _, _ = driver.execute_query(_EDGES, ns=namespace, database_=database)
    return {(r["s"], r["t"], r["relation"]) for r in records}


def edges_by_document(driver, namespace: str, *, database: str | None = None) -> dict[str, set[tuple[str, str, str]]]:
    """Edges whose two ends are chunks of the same document, by that document."""
    records, _, _ = driver.execute_query(_EDGES, ns=namespace, database_=database)
    out: dict[str, set[tuple[str, str, str]]] = {}
    for r in records:
        if r["sd"] == r["td"]:
            out.setdefault(r["sd"], set()).add((r["s"], r["t"], r["relation"]))
    return out


def duplicates(driver, namespace: str, *, database: str | None = None) -> int:
    """Duplicate documents (by source), chunks (by id or by position) and edges."""
    records, _, _ = driver.execute_query(_DUPLICATES, ns=namespace, database_=database)
    return int(records[0]["duplicates"])


def orphan_chunks(driver, namespace: str, *, database: str | None = None) -> int:
    records, _, _ = driver.execute_query(_ORPHANS, ns=namespace, database_=database)
    return int(records[0]["n"])


def counts(driver, namespace: str, *, database: str | None = None) -> tuple[int, int]:
    """Nodes of the namespace and relationships touching them."""
    records, _, _ = driver.execute_query(_COUNTS, ns=namespace, database_=database)
    return int(records[0]["nodes"]), int(records[0]["rels"])


# -- providers ------------------------------------------------------------------------------------


class ScriptedEmbedder:
    """Wraps a real embedder; ``script(call_number, texts)`` may raise or return garbage
    instead (returning None means: answer normally)."""

    def __init__(self, inner, script: Callable[[int, list[str]], Any] | None = None):
        self.inner, self.script, self.calls = inner, script, 0
        self.name, self.dimensions = inner.name, inner.dimensions

    def embed(self, texts, *, input_type="document"):
        self.calls += 1
        if self.script is not None:
            out = self.script(self.calls, list(texts))
            if out is not None:
                return out
        return self.inner.embed(texts, input_type=input_type)


class ScriptedChat:
    """A ChatProvider answering ``answer(call_number, prompt)``; it may raise."""

    def __init__(self, answer: Callable[[int, str], str]):
        self.answer, self.calls = answer, 0
        self._lock = threading.Lock()

    def chat(self, messages, *, json_schema=None):
        with self._lock:
            self.calls += 1
            n = self.calls
        return self.answer(n, messages[-1]["content"])


def fail_with(exc: BaseException):
    def script(*_args):
        raise exc

    return script


class TriggerRegistry(Mapping):
    """A Cypher registry that calls ``action()`` when statement ``name`` is fetched for the
    ``nth`` time: fetched inside the transaction, so the action lands mid-transaction."""

    def __init__(self, inner, *, name: str, nth: int, action: Callable[[], None]):
        self.inner, self.name, self.nth, self.action = inner, name, nth, action
        self.seen = 0
        self.root = getattr(inner, "root", None)

    def __getitem__(self, key):
        if key == self.name:
            self.seen += 1
            if self.seen == self.nth:
                self.action()
        return self.inner[key]

    def __iter__(self):
        return iter(self.inner)

    def __len__(self):
        return len(self.inner)


class SimulatedCrash(BaseException):
    """Stands for the ingesting process dying: not an Exception, so nothing catches it."""


def provider_down(message: str = "provider unavailable") -> ProviderError:
    return ProviderError(message)
