"""Documents capability of Neo4jStore: the document writes, deletes and reads of the ``Store``
protocol (its chunk reads and searches are ``chunks.py``'s).

``store_document`` is one write transaction: check the stored content hash, upsert the
document and drop its stale chunks, upsert the chunks (in statements of ``CHUNK_ROWS`` rows).
A reader therefore sees either the old version or the new one, never both or neither.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import (
    AuthenticationFailed,
    ConnectionFailed,
    DatabaseNotFound,
    InputError,
    KgragError,
    StoreError,
)
from ..types import (
    Chunk,
    ChunkEdge,
    Document,
    meta_pairs,
)
from ._rows import (
    EDGE_ROWS,
    edge_rows,
    is_torn,
    metadata_text,
    same_content,
)
from .aio import AsyncDrivers
from .runner import CypherRunner, TxRunner, check_vanished, is_constraint_violation

if TYPE_CHECKING:
    from .schema import VectorSlot

__all__ = [
    "CHUNK_ROWS",
    "DocumentsMixin",
    "LARGE_DOCUMENT_BYTES",
    "LARGE_DOCUMENT_CHUNKS",
    "TRANSACTION_CHUNKS",
    "is_torn",
]

#: chunk rows per UNWIND statement: large enough to amortise the round trip, small enough to
#: keep one statement's parameter map well under the Bolt message limits
CHUNK_ROWS = 500
#: chunks per transaction of ``store_documents`` (documents are never split between two):
#: not many more (smaller transactions write faster one at a time), but with two writers at
#: once (``Ingestor.ingest_paths``) 2,000 cost the server less CPU than 1,000 and ran faster
#: (docs/benchmarks.md)
TRANSACTION_CHUNKS = 2_000
#: a document with more chunks, or more text, than this is written in several transactions
#: (staged, then published in its last one): one transaction for all of it may not fit the
#: server's transaction memory (a text of tens of MB overflows a 1 GB heap with
#: MemoryPoolOutOfMemoryError). Chunk rows per staging transaction: ``STAGE_ROWS``.
LARGE_DOCUMENT_CHUNKS = 5_000
LARGE_DOCUMENT_BYTES = 8 * 1024 * 1024
STAGE_ROWS = 1_000


def chunk_caption(document: Document, chunk: Chunk, *, parent: bool = False) -> str:
    """``title #index`` (``(parent)`` for a parent chunk): what Browser shows on the node."""
    label = document.title or document.source or document.id
    return f"{label} #{int(chunk.chunk_index)}" + (" (parent)" if parent else "")


class _ChunkIdTaken(Exception):
    """Raised inside a write transaction to roll it back: a new document's chunk id is taken,
    so the group is written again through the statements that tell who owns it."""


class _Refused(Exception):
    """Raised inside a write transaction to roll it back: these documents (by position) are
    refused; the others are written again without them."""

    def __init__(self, errors: dict[int, KgragError]):
        super().__init__(f"{len(errors)} document(s) refused")
        self.errors = errors


@dataclass
class _Pending:
    """One document of a ``store_documents`` call, checked and turned into statement rows."""

    pos: int
    document_id: str
    doc_props: dict[str, Any]
    rows: list[dict[str, Any]]
    edge_rows: list[dict[str, Any]]

    def has_parents(self) -> bool:
        return any(r["parent_id"] is not None for r in self.rows)

    def is_large(self) -> bool:
        if len(self.rows) > LARGE_DOCUMENT_CHUNKS:
            return True
        size = len(self.doc_props.get("content") or "") + sum(len(r["props"]["content"]) for r in self.rows)
        return size > LARGE_DOCUMENT_BYTES


def _transactions(pending: Sequence[_Pending]) -> list[list[_Pending]]:
    """Groups of documents for one transaction each: at most ``TRANSACTION_CHUNKS`` chunks (a larger
    document alone), a document id at most once, documents in id order (so concurrent writers
    lock them in the same order and rarely deadlock)."""
    groups: list[list[_Pending]] = []
    current: list[_Pending] = []
    ids: set[str] = set()
    size = 0
    for p in sorted(pending, key=lambda p: (p.document_id, p.pos)):
        if current and (size + len(p.rows) > TRANSACTION_CHUNKS or p.document_id in ids):
            groups.append(current)
            current, ids, size = [], set(), 0
        current.append(p)
        ids.add(p.document_id)
        size += len(p.rows)
    if current:
        groups.append(current)
    return groups


class DocumentsMixin:
    runner: CypherRunner
    namespace: str
    vector_overfetch: int
    aio: AsyncDrivers

    if TYPE_CHECKING:  # defined by SchemaMixin

        def check_embedding(self, embedding: Any, *, what: str = "embedding") -> list[float]: ...
        def vector_slot(self) -> VectorSlot: ...
        def unlink_documents(
            self, tx: TxRunner, document_ids: Sequence[str], *, stale_only: bool, limit: int | None = None
        ) -> int: ...
        def document_states(self, document_ids: Sequence[str]) -> dict[str, dict[str, Any]]: ...

    #: ``store_document`` takes ``edges=`` and writes them in the document's transaction
    atomic_document_edges = True

    # -- write ----------------------------------------------------------------------------
    def store_document(self, document: Document, chunks: Sequence[Chunk], *, edges: Sequence[ChunkEdge] = ()) -> str:
        """See ``protocols.Store.store_document``. Returns new / unchanged / replaced.

        ``edges`` (from chunks of this document) are written in the SAME transaction, so a
        crash leaves the document with all its chunks and edges, or not at all (with edges in a
        second transaction, a kill in between would leave a document without edges that a
        re-ingest calls "unchanged" and never completes). A document too large for one
        transaction is written as ``store_documents`` writes large ones."""
        outcome = self.store_documents([(document, chunks, edges)])[0]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def store_documents(
        self, items: Sequence[tuple[Document, Sequence[Chunk]] | tuple[Document, Sequence[Chunk], Sequence[ChunkEdge]]]
    ) -> list[str | KgragError]:
        """Write many documents (each with its chunks and edges) in few transactions.

        Returns, in the order given, each document's status (new / unchanged / replaced) or the
        error that refused it. Each document is all or nothing: documents share a transaction
        of up to ``TRANSACTION_CHUNKS`` chunks, and one the database refuses is written again on its
        own so it does not take the others down; a lost connection raises. Edges may point to
        chunks of other documents of the call or of the namespace. A document of more than
        ``LARGE_DOCUMENT_CHUNKS`` chunks is written in several transactions into a staging
        namespace and made visible in its last one (never half-visible to readers)."""
        out: list[str | KgragError | None] = [None] * len(items)
        self.vector_slot()  # read before any transaction: the statements name its property
        normal: list[_Pending] = []
        large: list[_Pending] = []

        claimed: dict[str, str] = {}  # chunk id -> the document of this call that has it
        for pos, item in enumerate(items):
            document, chunks = item[0], item[1]
            edges: Sequence[ChunkEdge] = item[2] if len(item) == 3 else ()
            try:
                doc_props, rows = self._prepare(document, chunks)
                pending = _Pending(pos, document.id, doc_props, rows, edge_rows(edges) if edges else [])
                # Why here: two rows of one statement cannot see each other's writes, so the
                # database's check only catches chunks stored by earlier transactions
                for r in rows:
                    owner = claimed.setdefault(r["id"], document.id)
                    if owner != document.id:
                        raise InputError(f"chunk id {r['id']!r} already belongs to document {owner!r}")
            except InputError as exc:
                out[pos] = exc
                continue
            (large if pending.is_large() else normal).append(pending)
        for group in _transactions(normal):
            self._write_group(group, out)
        for pending in large:
            try:
                out[pending.pos] = self._write_large(pending)
            except InputError as exc:
                out[pending.pos] = exc
        return out  # type: ignore[return-value]  # every position was filled above (None only before)

    def _write_group(self, group: list[_Pending], out: list, *, fresh: bool = True) -> None:
        while group:
            try:
                decided = self.runner.write_fn(lambda tx: self._write_tx(tx, group, fresh=fresh))  # noqa: B023 (run before group changes)
            except _ChunkIdTaken:
                # rolled back: a new document's chunk id was taken; the careful statements
                # tell who owns it (or take over a staged leftover of the same document)
                fresh = False
                continue
            except _Refused as refused:
                # rolled back: the refused documents get their error, the others go again
                for pos, error in refused.errors.items():
                    out[pos] = error
                group = [p for p in group if p.pos not in refused.errors]
                continue
            except (ConnectionFailed, AuthenticationFailed, DatabaseNotFound):
                raise
            except (InputError, StoreError) as exc:
                if len(group) == 1:
                    out[group[0].pos] = exc
                    return
                # Why: one document the database refuses (or a batch too big for its memory)
                # must not take the others down: write them again in halves, down to one
                half = len(group) // 2
                self._write_group(group[:half], out, fresh=fresh)
                self._write_group(group[half:], out, fresh=fresh)
                return
            for pos, outcome in decided.items():
                out[pos] = outcome
            return

    def _write_tx(self, tx: TxRunner, group: list[_Pending], *, fresh: bool) -> dict[int, str | KgragError]:
        """One transaction for ``group``; pure (it may run again on a retry). With ``fresh``,
        the chunks of new documents are created by the documents' own statement (a taken
        chunk id raises ``_ChunkIdTaken``). Raises ``_Refused`` (which rolls it back) when a
        chunk id belongs to another document."""
        decided: dict[int, str | KgragError] = {}
        documents = [
            {
                "id": p.document_id,
                "props": p.doc_props,
                # rows with a parent link need the careful statement (it MERGEs the parent)
                "chunks": p.rows if fresh and not p.has_parents() else None,
            }
            for p in group
        ]
        try:
            upserted = tx.run(
                "documents/write_documents",
                namespace=self.namespace,
                documents=documents,
                vector_property=self.vector_slot().vector_property,
            )[0]
        except Exception as exc:
            if fresh and is_constraint_violation(exc):
                raise _ChunkIdTaken() from exc
            raise
        check_vanished("document", upserted["vanished"])
        written = {w["id"]: w for w in upserted["written"]}
        ours, todo = [], []
        for p in group:
            if p.document_id not in written:
                decided[p.pos] = InputError(f"document id {p.document_id!r} belongs to another namespace")
                continue
            before = written[p.document_id]["before"]
            # the same content written again (a concurrent ingest got there first) is harmless
            decided[p.pos] = (
                "new" if before is None else "unchanged" if same_content(before, p.doc_props["content_hash"]) else "replaced"
            )
            ours.append(p)
            if not written[p.document_id]["created"]:
                todo.append(p)
        rows = [r for p in todo for r in p.rows]
        conflicts: list[dict[str, Any]] = []
        for start in range(0, len(rows), CHUNK_ROWS):
            conflicts += tx.run(
                "chunks/upsert_chunks",
                namespace=self.namespace,
                vector_property=self.vector_slot().vector_property,
                rows=rows[start : start + CHUNK_ROWS],
            )[0]["conflicts"]
        if conflicts:
            errors: dict[int, KgragError] = {}
            position = {p.document_id: p.pos for p in todo}
            for c in conflicts:
                errors.setdefault(
                    position[c["document_id"]],
                    InputError(f"chunk id {c['id']!r} already belongs to document {c['owner']!r}"),
                )
            raise _Refused(errors)
        replaced = sorted(p.document_id for p in todo if written[p.document_id]["before"] is not None)
        if replaced:
            self.unlink_documents(tx, replaced, stale_only=True)
            tx.run("documents/drop_stale_chunks", namespace=self.namespace, ids=replaced)

        edges = [e for p in ours for e in p.edge_rows]
        for start in range(0, len(edges), EDGE_ROWS):
            tx.run("graph/store_edges", namespace=self.namespace, rows=edges[start : start + EDGE_ROWS])
        return decided

    def _foreign_chunks(self, tx: TxRunner, group: list[_Pending]) -> dict[str, dict[str, Any]]:
        """The first chunk of each document of ``group`` that another document owns; chunks
        left staged by an interrupted write of the same document are cleared instead."""
        rows = [{"id": r["id"], "document_id": p.document_id} for p in group for r in p.rows]
        found: dict[str, dict[str, Any]] = {}
        stale_staging: set[str] = set()
        for start in range(0, len(rows), CHUNK_ROWS * 4):
            for row in tx.run(
                "chunks/find_foreign_chunks",
                namespace=self.namespace,
                rows=rows[start : start + CHUNK_ROWS * 4],
            ):
                if row["staged"]:
                    stale_staging.add(row["document_id"])
                else:
                    found.setdefault(row["document_id"], row)
        for document_id in sorted(stale_staging):
            while tx.run("documents/purge_staged_chunks", namespace=self.namespace, document_id=document_id, limit=STAGE_ROWS)[0][
                "deleted"
            ]:
                pass
        return found

    # -- large documents ---------------------------------------------------------------------
    def _staging_prefix(self) -> str:
        # control characters are refused in namespaces (settings.validate_namespace), so no
        # tenant can name, read or write a staging namespace; the Cypher files that touch one
        # build the same name from $namespace and $document_id
        return f"\x1f{self.namespace}\x1f"

    def _staging(self, document_id: str) -> str:
        return self._staging_prefix() + document_id

    def _purge_staging(self, document_id: str) -> int:
        total = 0
        while True:
            deleted = self.runner.write(
                "documents/purge_staged_chunks", namespace=self.namespace, document_id=document_id, limit=STAGE_ROWS
            )[0]["deleted"]
            total += deleted
            if not deleted:
                return total

    def _write_large(self, p: _Pending) -> str:
        """Stage the chunks (and the edges between them) in transactions of ``STAGE_ROWS``,
        then publish the document in one last, small transaction."""
        state = self.runner.read("documents/document_states", namespace=self.namespace, ids=[p.document_id])
        if state and state[0]["foreign"]:
            raise InputError(f"document id {p.document_id!r} belongs to another namespace")
        if state and same_content(state[0]["content_hash"], p.doc_props["content_hash"]):
            return "unchanged"
        self._purge_staging(p.document_id)  # what an interrupted earlier write left
        foreign = self.runner.write_fn(lambda tx: self._foreign_chunks(tx, [p]))
        if foreign:
            row = foreign[p.document_id]
            raise InputError(f"chunk id {row['id']!r} already belongs to document {row['owner']!r}")
        staging = self._staging(p.document_id)
        kept: set[str] = set()
        for start in range(0, len(p.rows), STAGE_ROWS):
            rows = p.rows[start : start + STAGE_ROWS]
            kept.update(
                self.runner.write(
                    "chunks/stage_chunks",
                    namespace=self.namespace,
                    document_id=p.document_id,
                    rows=rows,
                    vector_property=self.vector_slot().vector_property,
                )[0]["kept"]
            )
        staged_ids = {r["id"] for r in p.rows} - kept
        inner = [e for e in p.edge_rows if e["source_id"] in staged_ids and e["target_id"] in staged_ids]
        outer = [e for e in p.edge_rows if not (e["source_id"] in staged_ids and e["target_id"] in staged_ids)]

        for start in range(0, len(inner), EDGE_ROWS * 5):
            self.runner.write("graph/store_edges", namespace=staging, rows=inner[start : start + EDGE_ROWS * 5])
        kept_rows = [{**r, "embedding": None} for r in p.rows if r["id"] in kept]

        def publish(tx: TxRunner) -> str:
            # the upsert says all the publish needs: another tenant's id (not written), a
            # concurrent delete (vanished), or the hash it had before (null: a new document)
            upserted = tx.run(
                "documents/upsert_documents", namespace=self.namespace, documents=[{"id": p.document_id, "props": p.doc_props}]
            )[0]
            check_vanished("document", upserted["vanished"])
            if not upserted["written"]:
                raise InputError(f"document id {p.document_id!r} belongs to another namespace")
            tx.run("documents/publish_staged_chunks", namespace=self.namespace, document_id=p.document_id)
            for start in range(0, len(kept_rows), CHUNK_ROWS):
                tx.run(
                    "chunks/upsert_chunks",
                    namespace=self.namespace,
                    vector_property=self.vector_slot().vector_property,
                    rows=kept_rows[start : start + CHUNK_ROWS],
                )
            for start in range(0, len(outer), EDGE_ROWS):
                tx.run("graph/store_edges", namespace=self.namespace, rows=outer[start : start + EDGE_ROWS])
            self.unlink_documents(tx, [p.document_id], stale_only=True)
            tx.run("documents/park_stale_chunks", namespace=self.namespace, document_id=p.document_id)
            return "new" if upserted["written"][0]["before"] is None else "replaced"

        status = self.runner.write_fn(publish)
        self._purge_staging(p.document_id)  # the old version's chunks, parked by publish
        return status

    def _prepare(self, document: Document, chunks: Sequence[Chunk]) -> tuple[dict, list[dict]]:
        if not document.id or not isinstance(document.id, str):
            raise InputError("document.id must be a non-empty string")
        if document.namespace and document.namespace != self.namespace:
            raise InputError(f"document namespace {document.namespace!r} differs from the store's {self.namespace!r}")
        created = int(document.created_at or time.time())
        # the namespace and the document id are the statements' own parameters, never props
        doc_props = {
            "source": document.source,
            "title": document.title,
            "content": document.content,
            "content_hash": document.content_hash,
            "created_at": created,
            "metadata": metadata_text(document.metadata),
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
                    "document_id": document.id,
                    "props": {
                        "content": c.content,
                        "chunk_index": int(c.chunk_index),
                        "parent_id": c.parent_id,
                        "token_count": int(c.token_count),
                        "metadata": metadata_text(c.metadata),
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
        """Delete a document with its chunks, edges and the entities only it mentioned. A
        document of more than ``LARGE_DOCUMENT_CHUNKS`` chunks goes in bounded transactions
        (see :meth:`_delete_large`); a smaller one in one."""
        state = self.document_states([document_id]).get(document_id)
        if state is None:
            return False
        if state["chunk_count"] > LARGE_DOCUMENT_CHUNKS:
            return self._delete_large(document_id)

        def work(tx: TxRunner) -> bool:
            self.unlink_documents(tx, [document_id], stale_only=False)
            return bool(tx.run("documents/delete_document", namespace=self.namespace, document_id=document_id))

        return bool(self.runner.write_fn(work))

    def delete_documents(self, document_ids: Sequence[str]) -> list[str]:
        """Delete several documents as :meth:`delete_document` does, small ones together in
        transactions of up to ``TRANSACTION_CHUNKS`` chunks. Returns the ids deleted, in the
        order given (an id that is no document of the namespace is left out)."""
        ids = list(dict.fromkeys(document_ids))
        states = self.document_states(ids)
        deleted: set[str] = set()
        group: list[str] = []
        size = 0

        def flush() -> None:
            if not group:
                return
            names = list(group)

            def work(tx: TxRunner) -> list[str]:
                self.unlink_documents(tx, names, stale_only=False)
                rows = tx.run("documents/delete_documents", namespace=self.namespace, document_ids=names)
                return list(rows[0]["deleted"]) if rows else []

            deleted.update(self.runner.write_fn(work))
            group.clear()

        for document_id in ids:
            state = states.get(document_id)
            if state is None:
                continue
            chunks = int(state["chunk_count"])
            if chunks > LARGE_DOCUMENT_CHUNKS:
                if self._delete_large(document_id):
                    deleted.add(document_id)
                continue
            if group and size + chunks > TRANSACTION_CHUNKS:
                flush()
                size = 0
            group.append(document_id)
            size += chunks
        flush()
        return [d for d in ids if d in deleted]

    def _delete_large(self, document_id: str) -> bool:
        """Take back the document's part of the entity graph ``STAGE_ROWS`` chunks a
        transaction (readers still see the whole document, its mentions included), then park
        its chunks and delete the document in one transaction (from then on no reader sees
        any of it), then purge the parked chunks and the entities only it mentioned in bounded
        transactions. Interrupted after the park, nothing of it is visible; its parked chunks
        go with the next write of a document of that id."""
        while self.runner.write_fn(lambda tx: self.unlink_documents(tx, [document_id], stale_only=False, limit=STAGE_ROWS)):
            pass

        def park(tx: TxRunner) -> dict[str, Any] | None:
            self.unlink_documents(tx, [document_id], stale_only=False)  # what another run linked meanwhile
            rows = tx.run("documents/park_document", namespace=self.namespace, document_id=document_id)
            return rows[0] if rows else None

        parked = self.runner.write_fn(park)
        if parked is None:
            return False
        self._purge_staging(document_id)
        ids = list(parked["entity_ids"])
        for start in range(0, len(ids), STAGE_ROWS):
            self.runner.write("entities/delete_orphans", namespace=self.namespace, entity_ids=ids[start : start + STAGE_ROWS])
        return True
