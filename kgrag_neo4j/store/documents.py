"""Documents and chunks capability of Neo4jStore: the seed's ``Store`` plus keyword search.

``store_document`` is one write transaction: check the stored content hash, upsert the
document and drop its stale chunks, upsert the chunks (in statements of ``CHUNK_ROWS`` rows).
A reader therefore sees either the old version or the new one, never both or neither.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, Mapping, Sequence

from ..errors import InputError, NotFoundError
from ..types import (
    PENDING_HASH_SUFFIX,
    Chunk,
    ChunkEdge,
    ChunkFilter,
    ComponentScores,
    Document,
    RetrievalResult,
    filters_to_param,
    meta_pairs,
)
from .runner import CypherRunner, Plan, Read, TxRunner
from ..types import load_metadata as _load_metadata

__all__ = ["DocumentsMixin", "escape_lucene_query", "keyword_lucene_query", "CHUNK_ROWS"]

#: chunk rows per UNWIND statement: large enough to amortise the round trip, small enough to
#: keep one statement's parameter map well under the Bolt message limits
CHUNK_ROWS = 500

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
    of more than 1024 clauses (``TooManyClauses``), which a long pasted text used to trigger.
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


def chunk_caption(document: Document, chunk: Chunk, *, parent: bool = False) -> str:
    """``title #index`` (``(parent)`` for a parent chunk): what Browser shows on the node."""
    label = document.title or document.source or document.id
    return f"{label} #{int(chunk.chunk_index)}" + (" (parent)" if parent else "")


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


def _same_content(stored: Any, new: str) -> bool:
    """Equal hashes, a pending mark aside (``types.PENDING_HASH_SUFFIX``): an ingest racing
    another one that already completed the same content must not rewrite it as "replaced"."""
    return isinstance(stored, str) and stored.removesuffix(PENDING_HASH_SUFFIX) == new.removesuffix(PENDING_HASH_SUFFIX)


#: Neo4j reads at read-committed isolation: a retrieval racing a replace (or delete) of the
#: same document can read an old-version chunk together with the new document, or a chunk
#: deleted under it (found by tests/test_concurrency.py). Even ONE node's properties can be
#: read half old, half new while a commit lands (measured: 2 of 4,400 reads of a document's
#: title and hash under a rewriting writer), so each chunk also carries its document's title
#: and a row counts as whole only when both the hash and the title agree. Torn rows make the
#: read run again; after these retries the torn rows left are dropped.
TORN_READ_RETRIES = 2


def is_torn(row: Mapping[str, Any]) -> bool:
    """Whether a retrieval row mixes two versions of its document (see ``TORN_READ_RETRIES``)."""
    chunk = row.get("chunk") or {}
    if not chunk.get("id"):
        return True  # a node deleted while the statement ran
    written_by = chunk.get("document_hash")
    if written_by is None:
        return False  # a chunk stored before versions were recorded
    current = row.get("document_hash")
    if current is None or not _same_content(current, written_by):
        return True
    title_then = chunk.get("document_title")
    return title_then is not None and title_then != row.get("title")


def consistent(name: str, **params: Any) -> Plan[list[dict[str, Any]]]:
    """The rows of a retrieval statement, without torn rows (a read ``Plan``)."""
    for _ in range(TORN_READ_RETRIES + 1):
        rows = yield Read(name, params)
        if not any(is_torn(r) for r in rows):
            return rows
    return [r for r in rows if not is_torn(r)]


def read_consistent(runner: CypherRunner, name: str, **params: Any) -> list[dict[str, Any]]:
    """``runner.read`` of a retrieval statement, without torn rows."""
    return runner.run(consistent(name, **params))


def _metadata_json(metadata: Mapping[str, Any]) -> str:
    try:
        return json.dumps(dict(metadata), sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputError(f"metadata must be JSON-serialisable: {exc}") from None




def chunk_from_row(row: Mapping[str, Any], *, embedding: Sequence[float] | None = None) -> Chunk:
    return Chunk(
        id=row["id"],
        document_id=row.get("document_id") or "",
        content=row.get("content") or "",
        chunk_index=int(row.get("chunk_index") or 0),
        parent_id=row.get("parent_id"),
        embedding=list(embedding) if embedding is not None else None,
        token_count=int(row.get("token_count") or 0),
        metadata=_load_metadata(row.get("metadata")),
        namespace=row.get("namespace") or "",
        source=row.get("source") or "",
        created_at=int(row.get("created_at") or 0),
    )


def result_from_row(row: Mapping[str, Any], *, kind: str) -> RetrievalResult:
    c = row["chunk"]
    score = float(row["score"])
    scores = ComponentScores(vector=score) if kind == "vector" else ComponentScores(keyword=score)
    return RetrievalResult(
        id=c["id"],
        content=c.get("content") or "",
        score=score,
        document_id=c.get("document_id") or "",
        source=c.get("source") or "",
        title=row.get("title") or "",
        chunk_index=int(c.get("chunk_index") or 0),
        parent_id=c.get("parent_id"),
        metadata=_load_metadata(c.get("metadata")),
        scores=scores,
    )


def _document_from_row(row: Mapping[str, Any]) -> Document:
    return Document(
        id=row["id"],
        source=row.get("source") or "",
        title=row.get("title") or "",
        content=row.get("content") or "",
        namespace=row.get("namespace") or "",
        content_hash=row.get("content_hash") or "",
        created_at=int(row.get("created_at") or 0),
        metadata=_load_metadata(row.get("metadata")),
    )


#: the most results one search may ask for (the vector index is asked for a multiple of it)
MAX_TOP_K = 1_000_000
#: the largest integer Neo4j stores (a LIMIT beyond it cannot even be sent)
MAX_INT64 = 2**63 - 1


def _check_top_k(top_k: Any) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise InputError(f"top_k must be a positive integer, got {top_k!r}")
    if top_k > MAX_TOP_K:
        raise InputError(f"top_k must be at most {MAX_TOP_K:,}, got {top_k:,}")
    return top_k


def _check_limit(limit: Any) -> int:
    """A listing's ``limit``: None means every row; otherwise a positive 64-bit integer."""
    if limit is None:
        return MAX_INT64
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_INT64:
        raise InputError(f"limit must be a positive integer of at most 64 bits, got {limit!r}")
    return limit


#: the fewest candidates a vector search asks of the index: below about 100 the HNSW search
#: misses exact nearest neighbours (measured on real text: 20 candidates find 95-99% of the
#: exact top 5, 100 find all of them; bench/seed_recall.py)
MIN_VECTOR_CANDIDATES = 200


class DocumentsMixin:
    runner: CypherRunner
    namespace: str
    vector_overfetch: int

    def check_embedding(self, embedding: Any, *, what: str = "embedding") -> list[float]: ...

    def _chunk_text_is_namespaced(self) -> Plan[bool]: ...

    def keyword_query(self, text: str) -> str:
        """The Lucene query a keyword search of ``text`` sends ('' when no term is left)."""
        return self.runner.run(self._keyword_query(text))

    def _keyword_query(self, text: str) -> Plan[str]:
        namespaced = yield from self._chunk_text_is_namespaced()
        return keyword_lucene_query(escape_lucene_query(text), self.namespace if namespaced else None)

    #: ``store_document`` takes ``edges=`` and writes them in the document's transaction
    atomic_document_edges = True

    def vector_fetch_k(self, top_k: int) -> int:
        """Candidates asked of the approximate vector index for ``top_k`` hits: the index
        finds more of the exact nearest neighbours when asked for more (HNSW explores wider),
        so ``top_k * vector_overfetch``, and never fewer than ``MIN_VECTOR_CANDIDATES``
        (docs/retrieval.md, "The vector stage", has the measured recall against an exact
        search)."""
        return max(top_k * self.vector_overfetch, MIN_VECTOR_CANDIDATES)

    # -- write ----------------------------------------------------------------------------
    def store_document(self, document: Document, chunks: Sequence[Chunk], *, edges: Sequence[ChunkEdge] = ()) -> str:
        """See ``protocols.Store.store_document``. Returns new / unchanged / replaced.

        ``edges`` (between chunks of this document) are written in the SAME transaction, so a
        crash leaves the document with all its chunks and edges, or not at all (before, they
        were a second transaction: a kill in between left a document without edges that a
        re-ingest then called "unchanged" and never completed)."""
        doc_props, rows = self._prepare(document, chunks)
        chunk_ids = [r["id"] for r in rows]
        from .graph import EDGE_ROWS, edge_rows  # graph.py imports this module

        edge_params = edge_rows(edges) if edges else []

        def work(tx: TxRunner) -> str:
            found = tx.run("documents/get_content_hash", namespace=self.namespace, document_id=document.id)
            if found and not found[0]["owned"]:
                raise InputError(f"document id {document.id!r} belongs to another namespace")
            if found and _same_content(found[0]["content_hash"], doc_props["content_hash"]):
                return "unchanged"
            tx.run("documents/upsert_document", namespace=self.namespace, document=doc_props, chunk_ids=chunk_ids)
            foreign = tx.run(
                "chunks/find_foreign_chunks", namespace=self.namespace, document_id=document.id, ids=chunk_ids
            )
            if foreign:
                # raising inside the managed transaction rolls back the upsert above
                raise InputError(
                    f"chunk id {foreign[0]['id']!r} already belongs to document {foreign[0]['document_id']!r}"
                )
            for start in range(0, len(rows), CHUNK_ROWS):
                tx.run(
                    "chunks/upsert_chunks",
                    namespace=self.namespace,
                    document_id=document.id,
                    rows=rows[start : start + CHUNK_ROWS],
                )
            for start in range(0, len(edge_params), EDGE_ROWS):
                tx.run("graph/store_edges", namespace=self.namespace, rows=edge_params[start : start + EDGE_ROWS])
            return "replaced" if found else "new"

        return self.runner.write_fn(work)

    def _prepare(self, document: Document, chunks: Sequence[Chunk]) -> tuple[dict, list[dict]]:
        if not document.id or not isinstance(document.id, str):
            raise InputError("document.id must be a non-empty string")
        if document.namespace and document.namespace != self.namespace:
            raise InputError(
                f"document namespace {document.namespace!r} differs from the store's {self.namespace!r}"
            )
        created = int(document.created_at or time.time())
        doc_props = {
            "id": document.id,
            "namespace": self.namespace,
            "source": document.source,
            "title": document.title,
            "content": document.content,
            "content_hash": document.content_hash,
            "created_at": created,
            "metadata": _metadata_json(document.metadata),
        }
        if not doc_props["content_hash"]:
            raise InputError("document.content_hash is required (it decides re-ingest)")
        ids = [c.id for c in chunks]
        if len(set(ids)) != len(ids):
            raise InputError("chunk ids must be unique within a document")
        known = set(ids)
        parents = {c.parent_id for c in chunks if c.parent_id is not None}
        rows: list[dict] = []
        for c in chunks:
            if c.document_id and c.document_id != document.id:
                raise InputError(f"chunk {c.id} belongs to document {c.document_id}, not {document.id}")
            if c.parent_id is not None and c.parent_id not in known:
                raise InputError(f"chunk {c.id} names parent {c.parent_id}, which is not in this document")
            if not isinstance(c.content, str):
                raise InputError(f"chunk {c.id} content must be text")
            embedding = self.check_embedding(c.embedding, what=f"chunk {c.id} embedding") if c.embedding is not None else None
            merged_meta = {**document.metadata, **c.metadata}
            rows.append(
                {
                    "id": c.id,
                    "embedding": embedding,
                    "parent_id": c.parent_id,
                    "props": {
                        "namespace": self.namespace,
                        "document_id": document.id,
                        "content": c.content,
                        "chunk_index": int(c.chunk_index),
                        "parent_id": c.parent_id,
                        "token_count": int(c.token_count),
                        "metadata": _metadata_json(c.metadata),
                        "meta_pairs": meta_pairs(merged_meta),
                        "source": document.source,
                        "created_at": int(c.created_at or created),
                        # which version of the document wrote it: lets a read spot a torn row
                        "document_hash": doc_props["content_hash"],
                        "document_title": document.title,
                        # Neo4j Browser captions a node with its name (kgrag_neo4j/browser.py)
                        "name": chunk_caption(document, c, parent=c.id in parents),
                    },
                }
            )
        return doc_props, rows

    def complete_document(self, document_id: str, *, pending_hash: str, content_hash: str) -> bool:
        """Swap a document's pending hash for its final one (see the Cypher file); False if
        the document is gone or was replaced meanwhile."""
        rows = self.runner.write(
            "documents/complete_document",
            namespace=self.namespace,
            document_id=document_id,
            pending_hash=pending_hash,
            content_hash=content_hash,
        )
        return bool(rows and rows[0]["updated"])

    def delete_document(self, document_id: str) -> bool:
        rows = self.runner.write("documents/delete_document", namespace=self.namespace, document_id=document_id)
        return bool(rows)

    # -- read -----------------------------------------------------------------------------
    def get_document(self, document_id: str) -> Document:
        rows = self.runner.read("documents/get_document", namespace=self.namespace, document_id=document_id)
        if not rows:
            raise NotFoundError(f"no document {document_id!r} in namespace {self.namespace!r}")
        return _document_from_row(rows[0]["document"])

    def document_state(self, document_id: str) -> str | None:
        """The stored content hash of a document of this namespace, or None (one cheap read,
        so an unchanged re-ingest costs no chunking and no embedding)."""
        rows = self.runner.read("documents/get_content_hash", namespace=self.namespace, document_id=document_id)
        if not rows or not rows[0]["owned"]:
            return None
        return rows[0]["content_hash"]

    def document_chunk_count(self, document_id: str) -> int:
        rows = self.runner.read("documents/get_document", namespace=self.namespace, document_id=document_id)
        return int(rows[0]["chunk_count"]) if rows else 0

    def list_documents(self, *, limit: int | None = None) -> list[Document]:
        rows = self.runner.read("documents/list_documents", namespace=self.namespace, limit=_check_limit(limit))
        return [_document_from_row(r["document"]) for r in rows]

    def list_documents_with_counts(self, *, limit: int | None = None) -> list[tuple[Document, int]]:
        rows = self.runner.read("documents/list_documents", namespace=self.namespace, limit=_check_limit(limit))
        return [(_document_from_row(r["document"]), int(r["chunk_count"])) for r in rows]

    def get_chunks_by_ids(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        return self.runner.run(self._get_chunks_by_ids(chunk_ids))

    async def aget_chunks_by_ids(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        return await self.aio.run(self._get_chunks_by_ids(chunk_ids))

    def _get_chunks_by_ids(self, chunk_ids: Sequence[str]) -> Plan[list[Chunk]]:
        if not chunk_ids:
            return []
        rows = yield Read("chunks/get_chunks_by_ids", {"namespace": self.namespace, "ids": list(chunk_ids)})
        return [chunk_from_row(r["chunk"]) for r in rows]

    def list_document_chunks(self, document_id: str, *, with_embedding: bool = False) -> list[Chunk]:
        rows = self.runner.read(
            "chunks/list_document_chunks",
            namespace=self.namespace,
            document_id=document_id,
            with_embedding=with_embedding,
        )
        return [chunk_from_row(r["chunk"], embedding=r["embedding"]) for r in rows]

    def search_chunks(
        self, embedding: Sequence[float], top_k: int, filters: Sequence[ChunkFilter] = ()
    ) -> list[RetrievalResult]:
        return self.runner.run(self._search_chunks(embedding, top_k, filters))

    async def asearch_chunks(
        self, embedding: Sequence[float], top_k: int, filters: Sequence[ChunkFilter] = ()
    ) -> list[RetrievalResult]:
        return await self.aio.run(self._search_chunks(embedding, top_k, filters))

    def _search_chunks(
        self, embedding: Sequence[float], top_k: int, filters: Sequence[ChunkFilter]
    ) -> Plan[list[RetrievalResult]]:
        _check_top_k(top_k)
        vector = yield from self._check_embedding(embedding, "query embedding")
        rows = yield from consistent(
            "chunks/search_vector",
            namespace=self.namespace,
            embedding=vector,
            top_k=top_k,
            fetch_k=self.vector_fetch_k(top_k),
            filter=filters_to_param(filters),
        )
        return [result_from_row(r, kind="vector") for r in rows]

    def search_chunks_keyword(
        self, query: str, top_k: int, filters: Sequence[ChunkFilter] = ()
    ) -> list[RetrievalResult]:
        return self.runner.run(self._search_chunks_keyword(query, top_k, filters))

    async def asearch_chunks_keyword(
        self, query: str, top_k: int, filters: Sequence[ChunkFilter] = ()
    ) -> list[RetrievalResult]:
        return await self.aio.run(self._search_chunks_keyword(query, top_k, filters))

    def _search_chunks_keyword(
        self, query: str, top_k: int, filters: Sequence[ChunkFilter]
    ) -> Plan[list[RetrievalResult]]:
        _check_top_k(top_k)
        if not isinstance(query, str):
            raise InputError("keyword query must be text")
        lucene = yield from self._keyword_query(query)
        if not lucene:
            return []
        rows = yield from consistent(
            "chunks/search_keyword",
            namespace=self.namespace,
            query=lucene,
            top_k=top_k,
            fetch_k=self.vector_fetch_k(top_k),
            filter=filters_to_param(filters),
        )
        return [result_from_row(r, kind="keyword") for r in rows]
