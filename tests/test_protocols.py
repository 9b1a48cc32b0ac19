"""The ports: one runtime-checkable protocol per capability a pipeline calls, all of which
``Neo4jStore`` provides, and a store with only the base ``Store`` still works (degrading)."""

from __future__ import annotations

import typing

import pytest

from kgrag_neo4j import protocols
from kgrag_neo4j.entities.centrality import entity_centrality
from kgrag_neo4j.errors import ConfigurationError
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.retrieval.entity import EntityGraphRetriever
from kgrag_neo4j.retrieval.local_search import LocalSearchRetriever
from kgrag_neo4j.retrieval.ppr import PPRRetriever
from kgrag_neo4j.retrieval.retrievers import VectorRetriever
from kgrag_neo4j.triples.learning import ErrorResolutionRecorder

#: the protocols that are not store capabilities
NOT_OF_THE_STORE = {"ChatProvider", "EmbeddingProvider", "InputType", "Reranker", "Retriever"}


def store_protocols() -> list[type]:
    return [getattr(protocols, n) for n in protocols.__all__ if n not in NOT_OF_THE_STORE]


def test_every_store_protocol_is_runtime_checkable():
    for proto in store_protocols():
        assert getattr(proto, "_is_runtime_protocol", False), proto.__name__
        assert typing.Protocol in proto.__mro__, proto.__name__


def test_neo4j_store_has_every_capability(store):
    missing = [p.__name__ for p in store_protocols() if not isinstance(store, p)]
    assert missing == []


def test_round_trips_count_the_statements_sent(store):
    store.vector_slot()  # the namespace's embedding record is read once per store, then kept
    before = store.round_trips
    store.list_documents()
    store.has_embedded_chunks()
    assert store.round_trips - before == 2
    assert isinstance(store, protocols.RoundTripCounter)


class PlainStore:
    """Only the base ``Store`` and a namespace: none of the optional capabilities."""

    def __init__(self, inner):
        self.inner = inner
        self.namespace = inner.namespace

    def store_document(self, document, chunks):
        return self.inner.store_document(document, chunks)

    def get_document(self, document_id):
        return self.inner.get_document(document_id)

    def list_documents(self, *, limit=None):
        return self.inner.list_documents(limit=limit)

    def delete_document(self, document_id):
        return self.inner.delete_document(document_id)

    def search_chunks(self, embedding, top_k, filters=()):
        return self.inner.search_chunks(embedding, top_k, filters)

    def get_chunks_by_ids(self, chunk_ids):
        return self.inner.get_chunks_by_ids(chunk_ids)


def test_a_plain_store_has_only_the_store_capability(store):
    plain = PlainStore(store)
    have = {p.__name__ for p in store_protocols() if isinstance(plain, p)}
    assert have == {"Namespaced", "Store"}


def test_a_plain_store_ingests_and_retrieves_without_the_optional_capabilities(store, hashing_embedder):
    """No content hash to compare (``DocumentStates``), no bulk writer, no embedder record:
    the ingest writes anyway, and writes again (nothing tells it the text is the same, the
    store's own check finds it unchanged); vector retrieval works."""
    plain = PlainStore(store)
    text = "Plain stores hold documents.\n\nThey have chunks and vectors only."
    first = Ingestor(plain, hashing_embedder).ingest_text(text, "plain.txt")
    again = Ingestor(plain, hashing_embedder).ingest_text(text, "plain.txt")
    assert first.status == "new" and first.chunk_count >= 1
    assert again.status == "unchanged"
    results = VectorRetriever(plain, hashing_embedder).retrieve("plain stores", 2)
    assert results and results[0].document_id == first.document_id


def test_pipelines_refuse_a_store_without_the_capability_they_need(store, hashing_embedder):
    plain = PlainStore(store)
    with pytest.raises(ConfigurationError, match="entity capability"):
        EntityGraphRetriever(plain, hashing_embedder)
    with pytest.raises(ConfigurationError, match="centrality"):
        EntityGraphRetriever(_BoostOnly(store), hashing_embedder, centrality="pagerank")
    with pytest.raises(ConfigurationError):
        LocalSearchRetriever(plain, hashing_embedder)
    with pytest.raises(ConfigurationError):
        PPRRetriever(plain, hashing_embedder)
    with pytest.raises(ConfigurationError):
        ErrorResolutionRecorder(plain)


class _BoostOnly:
    """The entity-boost context but no centrality source."""

    def __init__(self, inner):
        self.inner = inner

    def entity_boost_context(self, embedding, *, chunk_k, **options):
        return self.inner.entity_boost_context(embedding, chunk_k=chunk_k, **options)


def test_centrality_is_computed_outside_the_store(store):
    """The store reads (degrees, the graph); ``entities.centrality`` computes, on any source."""

    class Source:
        def entity_degrees(self):
            return {"a": 2, "b": 1, "c": 0}

        def read_entity_graph(self):
            return store.read_entity_graph()

    assert entity_centrality(Source(), "degree") == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert entity_centrality(store, "pagerank") == {}  # an empty namespace
    with pytest.raises(ConfigurationError):
        entity_centrality(Source(), "closeness")
