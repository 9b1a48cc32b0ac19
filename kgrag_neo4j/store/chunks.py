"""Chunks capability of Neo4jStore: the chunk reads of the ``Store`` protocol, the vector and
keyword searches (``search_chunks``, ``search_chunks_keyword``) and the Lucene query a keyword
search sends. Each read a retriever calls is one body of steps with its async twin
(``steps.twin_methods``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..steps import Steps, run_steps, twin_methods
from ..types import Chunk, ChunkFilter, ComponentScores, RetrievalResult, filters_to_param
from ._rows import _check_top_k, chunk_from_row, consistent, result_from_row
from .aio import AsyncDrivers, Read
from .runner import CypherRunner

if TYPE_CHECKING:
    from .schema import VectorSlot

__all__ = ["ChunksMixin", "MIN_VECTOR_CANDIDATES", "escape_lucene_query", "keyword_lucene_query"]

_TERM = re.compile(r"\w+", re.UNICODE)
#: distinct terms of a keyword query sent to Lucene (its clause limit is 1024)
MAX_QUERY_TERMS = 256
MAX_QUERY_CHARS = 900


def escape_lucene_query(text: str) -> str:
    """Reduce user text to plain terms joined by spaces (OR semantics).

    Only word characters survive, so Lucene syntax (``AND``, ``*``, ``field:``, quotes,
    brackets, ``~``) can neither break the query nor widen it; the operators ``AND``/``OR``/
    ``NOT`` are lower-cased so Lucene reads them as ordinary words. Repeated terms are kept
    once and at most ``MAX_QUERY_TERMS`` (``MAX_QUERY_CHARS``) are sent: Lucene refuses a query
    of more than 1024 clauses (``TooManyClauses``), which a long pasted text would trigger.
    """
    kept: list[str] = []
    size = 0
    for term in dict.fromkeys(t.lower() for t in _TERM.findall(text or "")):
        if not any(ch.isalnum() for ch in term):
            continue  # "___" or a lone combining mark: the analyser makes no token of it
        # the analyser may split a term further (CJK: one token per character), so the
        # characters are bounded too
        if len(kept) == MAX_QUERY_TERMS or size + len(term) > MAX_QUERY_CHARS:
            break
        kept.append(term)
        size += len(term) + 1
    return " ".join(kept)


def keyword_lucene_query(escaped: str, namespace: str | None) -> str:
    """The Lucene query of a keyword search over ``chunk_content`` from escaped terms.

    The terms search the ``content`` field only. With ``namespace`` (an index that holds the
    chunk's namespace, see ``schema/fulltext_indexes``) the namespace is a required phrase of
    boost 0: the index answers with this namespace's chunks only, so other tenants can neither
    crowd its hits nor make the exact fallback read theirs, and the scores stay the BM25 of the
    content. The namespace test in Cypher still decides what is returned: the phrase may match
    a longer namespace that contains it, and one with no word characters matches everything."""
    if not escaped:
        return ""
    terms = f"content:({escaped})"
    if namespace is None:
        return terms
    phrase = namespace.replace("\\", "\\\\").replace('"', '\\"')
    return f'+namespace:"{phrase}"^0 +{terms}'


#: the fewest candidates a vector search asks of the index: below about 100 the HNSW search
#: misses exact nearest neighbours on real text (docs/benchmarks.md, "Vector seeds on real
#: text"; bench/seed_recall.py)
MIN_VECTOR_CANDIDATES = 200


class ChunksMixin:
    runner: CypherRunner
    namespace: str
    vector_overfetch: int
    aio: AsyncDrivers

    if TYPE_CHECKING:  # defined by SchemaMixin

        def _chunk_text_is_namespaced(self) -> Steps[bool]: ...
        def _query_vector(self, embedding: Any, what: str = ...) -> Steps[tuple[list[float], dict[str, str]]]: ...
        def vector_slot(self) -> VectorSlot: ...

    def keyword_query(self, text: str) -> str:
        """The Lucene query a keyword search of ``text`` sends ('' when no term is left)."""
        return run_steps(self._keyword_query(text))

    def _keyword_query(self, text: str) -> Steps[str]:
        namespaced = yield from self._chunk_text_is_namespaced()
        return keyword_lucene_query(escape_lucene_query(text), self.namespace if namespaced else None)

    def vector_fetch_k(self, top_k: int) -> int:
        """Candidates asked of the approximate vector index for ``top_k`` hits: the index
        finds more of the exact nearest neighbours when asked for more (HNSW explores wider),
        so ``top_k * vector_overfetch``, and never fewer than ``MIN_VECTOR_CANDIDATES``
        (docs/retrieval.md, "The vector stage", has the measured recall against an exact
        search)."""
        return max(top_k * self.vector_overfetch, MIN_VECTOR_CANDIDATES)

    def has_embedded_chunks(self) -> bool:
        """Whether the namespace holds any chunk with an embedding."""
        return bool(
            self.runner.read(
                "chunks/has_embedded_chunks", namespace=self.namespace, vector_property=self.vector_slot().vector_property
            )[0]["found"]
        )

    def list_chunks_of_documents(self, document_ids: Sequence[str], *, with_embedding: bool = False) -> dict[str, list[Chunk]]:
        """``list_document_chunks`` of several documents in one read: ``{document id: chunks}``
        (documents without chunks, or not of this namespace, are left out)."""
        rows = self.runner.read(
            "chunks/list_chunks_of_documents",
            namespace=self.namespace,
            vector_property=self.vector_slot().vector_property,
            document_ids=list(document_ids),
            with_embedding=with_embedding,
        )
        out: dict[str, list[Chunk]] = {}
        for r in rows:
            if not (r["chunk"] or {}).get("id") or not r["chunk"].get("document_id"):
                continue  # a chunk deleted while the statement ran
            chunk = chunk_from_row(r["chunk"], embedding=r["embedding"])
            out.setdefault(chunk.document_id, []).append(chunk)
        return out

    def _get_chunks_by_ids(self, chunk_ids: Sequence[str]) -> Steps[list[Chunk]]:
        if not chunk_ids:
            return []
        rows = yield from Read(self, "chunks/get_chunks_by_ids", {"namespace": self.namespace, "ids": list(chunk_ids)})
        return [chunk_from_row(r["chunk"]) for r in rows]

    get_chunks_by_ids, aget_chunks_by_ids = twin_methods(_get_chunks_by_ids)

    def list_document_chunks(self, document_id: str, *, with_embedding: bool = False) -> list[Chunk]:
        rows = self.runner.read(
            "chunks/list_document_chunks",
            namespace=self.namespace,
            vector_property=self.vector_slot().vector_property,
            document_id=document_id,
            with_embedding=with_embedding,
        )
        return [chunk_from_row(r["chunk"], embedding=r["embedding"]) for r in rows]

    def _search_chunks(
        self, embedding: Sequence[float], top_k: int, filters: Sequence[ChunkFilter] = ()
    ) -> Steps[list[RetrievalResult]]:
        _check_top_k(top_k)
        vector, slot = yield from self._query_vector(embedding)
        rows = yield from consistent(
            self,
            "chunks/search_vector",
            namespace=self.namespace,
            vector_property=slot["vector_property"],
            chunk_index=slot["chunk_index"],
            embedding=vector,
            top_k=top_k,
            fetch_k=self.vector_fetch_k(top_k),
            filter=filters_to_param(filters),
        )
        return [result_from_row(r, scores=ComponentScores(vector=float(r["score"]))) for r in rows]

    search_chunks, asearch_chunks = twin_methods(_search_chunks)

    def _search_chunks_keyword(self, query: str, top_k: int, filters: Sequence[ChunkFilter] = ()) -> Steps[list[RetrievalResult]]:
        _check_top_k(top_k)
        if not isinstance(query, str):
            raise InputError("keyword query must be text")
        lucene = yield from self._keyword_query(query)
        if not lucene:
            return []
        rows = yield from consistent(
            self,
            "chunks/search_keyword",
            namespace=self.namespace,
            query=lucene,
            top_k=top_k,
            fetch_k=self.vector_fetch_k(top_k),
            filter=filters_to_param(filters),
        )
        return [result_from_row(r, scores=ComponentScores(keyword=float(r["score"]))) for r in rows]

    search_chunks_keyword, asearch_chunks_keyword = twin_methods(_search_chunks_keyword)
