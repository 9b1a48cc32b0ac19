"""The peers, driven through their public APIs on the same server, driver, index
(``chunk_embedding``), label (``Chunk``), vector property (``embedding``) and text property
(``content``) as kgrag. Each one is given precomputed vectors, so no embedder runs.

- neo4j-graphrag-python: ``VectorCypherRetriever`` (retrieval) and ``Neo4jWriter`` (ingest).
- langchain-neo4j: ``Neo4jVector.from_existing_index`` (retrieval) and ``add_embeddings`` (ingest).
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .common import BenchServer, bench_cypher

__all__ = ["PeerUnavailable", "graphrag_retriever", "graphrag_writer", "langchain_store", "peer_query_text"]

INDEX = "chunk_embedding"


class PeerUnavailable(RuntimeError):
    """The peer package is not installed (``pip install "kgrag-neo4j[bench]"``)."""


def _quiet() -> None:
    # the peers log every query at INFO / warn on deprecations once per call
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    for name in ("neo4j_graphrag", "langchain_neo4j", "neo4j.notifications"):
        logging.getLogger(name).setLevel(logging.ERROR)


def graphrag_retriever(
    srv: BenchServer, *, seeds: int = 10, result_k: int = 20, ratio: int = 1, with_hops: bool = False
) -> Callable[[list[float]], list[Any]]:
    """``VectorCypherRetriever.search(query_vector=..., top_k=seeds, effective_search_ratio=ratio)``
    (the index is asked for ``seeds * ratio`` candidates, the best ``seeds`` kept) with the
    2-hop retrieval query; returns the chunk ids in rank order (``with_hops``: (id, hop))."""
    try:
        from neo4j_graphrag.retrievers import VectorCypherRetriever
    except ImportError as exc:
        raise PeerUnavailable(f"neo4j-graphrag is not installed: {exc}") from None
    _quiet()
    retriever = VectorCypherRetriever(srv.driver, INDEX, bench_cypher("peer_two_hop"), neo4j_database=srv.settings.database)

    def search(vector: list[float]) -> list[Any]:
        result = retriever.search(
            query_vector=vector, top_k=seeds, effective_search_ratio=ratio, query_params={"result_k": result_k}
        )
        if with_hops:
            return [(item.metadata["id"], item.metadata["hop"]) for item in result.items]
        return [item.metadata["id"] for item in result.items]

    return search


class _PrecomputedEmbeddings:
    """A LangChain ``Embeddings`` that refuses to embed: every call here passes vectors."""

    def __init__(self, dimensions: int):
        self.dimensions = dimensions

    def embed_query(self, text: str) -> list[float]:
        raise RuntimeError("the benchmark passes precomputed vectors")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise RuntimeError("the benchmark passes precomputed vectors")


def langchain_store(srv: BenchServer, *, dimensions: int, retrieval_query: str = "") -> Any:
    """``Neo4jVector.from_existing_index`` on our index, then given our driver."""
    try:
        from langchain_core.embeddings import Embeddings
        from langchain_neo4j import Neo4jVector
    except ImportError as exc:
        raise PeerUnavailable(f"langchain-neo4j is not installed: {exc}") from None
    _quiet()
    embeddings = type("PrecomputedEmbeddings", (_PrecomputedEmbeddings, Embeddings), {})(dimensions)
    store = Neo4jVector.from_existing_index(
        embeddings,
        index_name=INDEX,
        url=srv.settings.uri,
        username=srv.settings.user,
        password=srv.settings.password,
        database=srv.settings.database or "neo4j",
        embedding_dimension=dimensions,
        text_node_property="content",
        retrieval_query=retrieval_query,
    )
    # same driver as every other system, so no one gets a warmer connection pool
    store._driver.close()
    store._driver = srv.driver
    return store


def langchain_retriever(
    srv: BenchServer, *, dimensions: int, seeds: int = 10, result_k: int = 20, ratio: int = 1, with_hops: bool = False
) -> Callable[[list[float]], list[Any]]:
    """``Neo4jVector.similarity_search_with_score_by_vector(k=seeds, effective_search_ratio=ratio)``
    with the 2-hop retrieval query; chunk ids in rank order (``with_hops``: (id, hop))."""
    store = langchain_store(srv, dimensions=dimensions, retrieval_query=bench_cypher("peer_two_hop"))

    def search(vector: list[float]) -> list[Any]:
        docs = store.similarity_search_with_score_by_vector(
            vector, k=seeds, effective_search_ratio=ratio, params={"result_k": result_k}
        )
        if with_hops:
            return [(doc.metadata["id"], doc.metadata["hop"]) for doc, _score in docs]
        return [doc.metadata["id"] for doc, _score in docs]

    return search


def peer_query_text() -> str:
    """The exact statement neo4j-graphrag sends for the 2-hop retrieval (for PROFILE)."""
    from neo4j_graphrag.neo4j_queries import get_search_query
    from neo4j_graphrag.types import SearchType

    _quiet()
    text, _params = get_search_query(SearchType.VECTOR, retrieval_query=bench_cypher("peer_two_hop"))
    return text


def graphrag_writer(srv: BenchServer) -> Callable[[Sequence[dict[str, Any]]], None]:
    """``Neo4jWriter.run`` on a graph of ``Chunk`` nodes (properties + embedding property)."""
    try:
        from neo4j_graphrag.components.kg_writer import Neo4jWriter
        from neo4j_graphrag.components.types import Neo4jGraph, Neo4jNode
    except ImportError as exc:
        raise PeerUnavailable(f"neo4j-graphrag is not installed: {exc}") from None
    _quiet()
    writer = Neo4jWriter(srv.driver, neo4j_database=srv.settings.database)

    def write(rows: Sequence[dict[str, Any]]) -> None:
        graph = Neo4jGraph(
            nodes=[
                Neo4jNode(
                    id=r["id"],
                    label="Chunk",
                    properties={"id": r["id"], **r["props"]},
                    embedding_properties={"embedding": r["embedding"]},
                )
                for r in rows
            ]
        )
        result = asyncio.run(writer.run(graph))
        if result.status != "SUCCESS":
            raise RuntimeError(f"neo4j-graphrag writer failed: {result.metadata}")

    return write


def langchain_writer(srv: BenchServer, *, dimensions: int) -> Callable[[Sequence[dict[str, Any]]], None]:
    """``Neo4jVector.add_embeddings`` (its own ``UNWIND ... MERGE`` in transactions of 1000)."""
    store = langchain_store(srv, dimensions=dimensions)

    def write(rows: Sequence[dict[str, Any]]) -> None:
        store.add_embeddings(
            texts=[r["props"]["content"] for r in rows],
            embeddings=[r["embedding"] for r in rows],
            metadatas=[{k: v for k, v in r["props"].items() if k != "content"} for r in rows],
            ids=[r["id"] for r in rows],
        )

    return write
