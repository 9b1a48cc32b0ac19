"""The steps every document takes to the store, alone or in a batch of a folder's: the
unchanged ones found (one read for the batch), the others chunked, embedded, given their own
edges and written, many per transaction when the store can.

``Ingestor`` runs them for one document, ``pipeline.FolderPipeline`` for batches of many.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Sequence

from ..errors import InputError, KgragError, NotFoundError, SchemaNotReady
from ..options import IngestOptions
from ..protocols import EmbeddingProvider
from ..types import IngestResult
from .capabilities import StoreCapabilities
from .chunk_edges import ChunkEdgeBuilder
from .chunking import DocumentChunker
from .document import IngestDocument, mark_cancelled
from .vectors import embed_chunks, embed_or_skip

__all__ = ["DocumentWriter"]


class DocumentWriter:
    """Checks, chunks, embeds and writes documents; each ends with its result or its error."""

    def __init__(
        self,
        capabilities: StoreCapabilities,
        embedder: EmbeddingProvider,
        options: IngestOptions,
        edges: ChunkEdgeBuilder,
        *,
        cancel: threading.Event,
        log: logging.Logger,
    ) -> None:
        self.caps = capabilities
        self.embedder = embedder
        self.options = options
        self.edges = edges
        self.cancel = cancel
        self.log = log
        self.chunker = DocumentChunker(options)
        self._schema_checked = False

    # -- the namespace's embedder ----------------------------------------------------------
    def check_schema(self) -> None:
        """Refuse an embedder the namespace cannot take before any work is done (reads only)."""
        if self._schema_checked:
            return
        registry = self.caps.embedders
        if registry is None:
            return
        try:
            registry.check_embedder(self.embedder.name, self.embedder.dimensions)
        except SchemaNotReady:
            pass  # an empty database: the first write creates the schema

    def ensure_schema(self) -> None:
        if self._schema_checked:
            return
        if self.caps.embedders is not None:
            self.caps.embedders.ensure_embedder(self.embedder.name, self.embedder.dimensions)
        self._schema_checked = True

    # -- the steps -------------------------------------------------------------------------
    def skip_unchanged(self, docs: Sequence[IngestDocument]) -> list[IngestDocument]:
        """Decide the documents whose stored content hash is theirs (one read for all); they
        get their result and are returned."""
        if not docs:
            return []
        states = self.caps.states
        if states is None:
            return []  # a store that keeps no content hash: everything is written again
        found = states.document_states([d.document_id for d in docs])
        unchanged = []
        for d in docs:
            state = found.get(d.document_id)
            if state is not None and state.get("content_hash") == d.digest:
                d.result = IngestResult(
                    document_id=d.document_id, chunk_count=int(state.get("chunk_count") or 0), status="unchanged"
                )
                unchanged.append(d)
        return unchanged

    def chunk(self, d: IngestDocument, *, created_at: int) -> None:
        """The document's ``Document`` record and chunks (``InputError`` when it has no text);
        ``created_at``: its run's time (``chunking.run_time``)."""
        self.chunker.chunk_document(d, namespace=self.caps.namespace, pending=self.edges.pending_hash, created_at=created_at)

    def prepare(self, batch: Sequence[IngestDocument]) -> list[IngestDocument]:
        """Embed the batch's chunks (in ``batch_size`` calls across documents) and build each
        document's own edges (sequence, LLM). Returns the documents ready to link and write."""
        docs = [d for d in batch if d.error is None]
        if not docs:
            return []
        if self.cancel.is_set():
            mark_cancelled(docs)
            return []
        o = self.options
        try:
            if len(docs) > 1:
                embed_chunks(self.embedder, [c for d in docs for c in d.chunks], batch_size=o.batch_size)
            else:
                docs[0].skipped = self._embed_or_skip(docs[0])
        except KgragError as exc:
            if len(docs) == 1:
                docs[0].error = exc
            else:
                # Why: one document's text must not fail the others: embed them one by one,
                # so only the failing one fails (or is stored unembedded, as options say)
                for d in docs:
                    try:
                        d.skipped = self._embed_or_skip(d)
                    except KgragError as exc:
                        d.error = exc
        if self.cancel.is_set():
            mark_cancelled(docs)
            return []
        ready = [d for d in docs if d.error is None]
        if ready:
            # Why here: the first write records the embedder for the namespace (and, on an
            # empty database, its dimensions); an embedder that failed must not bind it
            self.ensure_schema()
        if self.edges.text_edges_wanted:
            for d in ready:  # a cancel from here on keeps the document, with the edges found
                # similarity edges follow (ChunkEdgeBuilder.link), across the run and the stored namespace
                d.edges = self.edges.text_edges(d.chunks)
        return ready

    def _embed_or_skip(self, d: IngestDocument) -> list[str]:
        o = self.options
        return embed_or_skip(self.embedder, d.chunks, batch_size=o.batch_size, on_failure=o.embedding_failure, log=self.log)

    def write(self, docs: Sequence[IngestDocument]) -> list[IngestDocument]:
        """Write the documents (many per transaction when the store can); each gets its result
        or its error, then its cross-document edges when wanted. A lost connection raises."""
        caps = self.caps
        outcomes: list[str | Exception]
        if caps.bulk_writer is not None:
            outcomes = caps.bulk_writer.store_documents(
                [(d.document, d.chunks, d.edges) for d in docs]  # type: ignore[misc]  # prepare passes chunked documents only
            )
        else:
            outcomes = []
            for d in docs:
                try:
                    status = caps.store.store_document(d.document, d.chunks)  # type: ignore[arg-type]  # prepare passes chunked documents only
                    if status != "unchanged" and d.edges and caps.graph is not None:
                        caps.graph.store_edges(d.edges)
                    outcomes.append(status)
                except (InputError, NotFoundError) as exc:
                    outcomes.append(exc)
        cross, pending = self.edges.cross_document, self.edges.pending_hash
        for d, outcome in zip(docs, outcomes):
            if isinstance(outcome, Exception):
                d.error = outcome  # type: ignore[assignment]  # the store refuses with KgragError values only
                continue
            assert d.document is not None
            document = dataclasses.replace(d.document, content_hash=d.digest) if pending else d.document
            d.result = IngestResult(
                document_id=d.document_id, chunk_count=len(d.chunks), status=outcome, document=document, skipped=d.skipped
            )
            if outcome != "unchanged":
                d.result.edge_count = len(d.edges)
            # with a pending hash also after "unchanged": the stored hash was then this very
            # pending one, left by a run that died before this step (which is idempotent)
            if cross and (pending or outcome != "unchanged"):
                d.result.edge_count += self.edges.at_ingest(d.document_id)
            if pending and caps.completer is not None:
                caps.completer.complete_document(d.document_id, pending_hash=d.document.content_hash, content_hash=d.digest)
            d.result.cancelled = self.cancel.is_set()
        return list(docs)
