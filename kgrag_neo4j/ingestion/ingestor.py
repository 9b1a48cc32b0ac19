"""The public write API: ``Ingestor`` takes text, files, streams and folders into a store,
and gives each document its identity.

The write path is extract -> chunk -> embed in batches -> edges -> store, a document with its
chunks and edges in one transaction. Re-ingesting the same content (same source, same text,
same chunking and embedder) is a no-op decided before any embedding is computed; a changed
document replaces the old one atomically (``Store.store_document``). A single text or file is
a batch of one (``writing.DocumentWriter``); ``ingest_paths`` runs the same steps over many
files (``pipeline.FolderPipeline``); edges are built by ``chunk_edges.ChunkEdgeBuilder``; a
whole ``kgrag ingest`` run with its report is ``batch.ingest_run``.

A document's identity is its id (the namespace and its ``source``) and its content hash
(the text under the chunking and embedding options): see ``_identify`` and ``_load_file``.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from .. import ids
from ..errors import Cancelled, ConfigurationError, ExtractionError, InputError
from ..options import IngestOptions
from ..protocols import EmbeddingProvider, Store
from ..tracing import TracerOption, check_tracer, span
from ..types import IngestResult
from .batch import IngestObserver, IngestTally, ingest_run
from .capabilities import StoreCapabilities
from .chunk_edges import ChunkEdgeBuilder
from .chunking import run_time
from .document import IngestDocument, stop_if_cancelled
from .extractors.markdown import markdown_to_text
from .extractors.registry import ExtractorRegistry
from .extractors.text import decode_text
from .files import read_regular_file, select_files
from .outcomes import FileResult
from .pipeline import FolderPipeline
from .writing import DocumentWriter

if TYPE_CHECKING:
    from ..entities.maintain import MaintenanceResult
    from .reembed import ReembedResult

__all__ = ["Ingestor"]

log = logging.getLogger("kgrag_neo4j.ingest")


class Ingestor:
    """Ingest text, files and streams into a ``Store``.

    ``Ingestor(store, embedder, options=IngestOptions(...))`` or keyword overrides of the
    options (``Ingestor(store, embedder, strategy="parent-child")``). What the store can do
    beyond ``Store`` (bulk writes, edges, content hashes...) is found once, here
    (``capabilities.StoreCapabilities``).

    ``tracer``: every document ingested by ``ingest_text``, ``ingest_file`` or
    ``ingest_reader`` is an ``ingest.document`` span, and an ``ingest_paths`` run is one
    ``ingest.paths`` span with its counts (:mod:`kgrag_neo4j.tracing`: OpenTelemetry, or a
    callable). ``cancel``: a ``threading.Event`` (one is made when not given; ``cancel()``
    sets it). Once it is set, a document not yet written is not written (``Cancelled``; in
    ``ingest_paths``, the file's ``FileResult.error``), model calls not yet sent are not sent
    (the document is kept with the edges found so far, ``IngestResult.cancelled``), and
    ``build_edges`` stops before the next page of documents. ``reset_cancel()`` clears it.
    """

    def __init__(
        self,
        store: Store,
        embedder: EmbeddingProvider,
        *,
        options: IngestOptions | None = None,
        logger: logging.Logger | None = None,
        tracer: TracerOption = None,
        cancel: threading.Event | None = None,
        **overrides: Any,
    ):
        if options is None:
            # Why not replace() on a default: the options (and the graph options given) are
            # validated once, not once for a throwaway default and again for the copy
            self.options = IngestOptions(**overrides)
        else:
            self.options = dataclasses.replace(options, **overrides) if overrides else options
        self.store = store
        self.embedder = embedder
        self.extractors = self.options.extractors or ExtractorRegistry.default()
        self.log = logger or log
        self.tracer = check_tracer(tracer)
        if cancel is not None and not callable(getattr(cancel, "is_set", None)):
            raise ConfigurationError("cancel must be a threading.Event (or anything with is_set() and set())")
        self.cancel_event = cancel if cancel is not None else threading.Event()
        self._capabilities = StoreCapabilities.of(store)
        #: what the last upkeep of the entity graph did (None: none ran)
        self.last_maintenance: MaintenanceResult | None = None
        self._edges = ChunkEdgeBuilder(self._capabilities, self.options.graph, cancel=self.cancel_event, log=self.log)
        self._writer = DocumentWriter(
            self._capabilities, embedder, self.options, self._edges, cancel=self.cancel_event, log=self.log
        )
        self._fingerprints: dict[str, str] = {}

    # -- cancellation -------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop the work in progress (see the class docstring); safe from any thread."""
        self.cancel_event.set()

    def reset_cancel(self) -> None:
        """Let this ingestor work again after ``cancel()``."""
        self.cancel_event.clear()

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    # -- entry points -------------------------------------------------------------------
    def ingest_text(
        self,
        text: str,
        source: str,
        title: str = "",
        *,
        metadata: Mapping[str, Any] | None = None,
        content_type: str = "text/plain",
        document_id: str | None = None,
    ) -> IngestResult:
        """Ingest already-extracted text (Markdown keeps its structure for the chunker)."""
        if not isinstance(text, str):
            raise InputError("ingest_text takes text (str); use ingest_file for bytes")
        if not text.strip():
            raise InputError(f"{source or 'text'} is empty")
        doc = self._identify(
            text, source=source, title=title, metadata=metadata, content_type=content_type, document_id=document_id
        )
        return self._maintained(self._one(doc))

    def ingest_file(
        self,
        path: str | os.PathLike[str],
        *,
        content: bytes | None = None,
        content_type: str | None = None,
        source: str | None = None,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> IngestResult:
        """Ingest a file (read from ``path``, or ``content`` bytes named by ``path``); the
        content type comes from the extension unless given.

        The document's identity is its ``source``: by default the file's resolved path, so the
        same file reached as ``docs/a.md``, ``./docs/a.md``, an absolute path, a ``..`` path or a
        symlink is one document (with ``content``, ``path`` is only a name and is used as it
        is). Only a regular file is read (``files.read_regular_file``). A file name that is not
        valid UTF-8 cannot be an identity: it is refused unless ``source`` names the file."""
        doc = self._load_file(path, content=content, content_type=content_type, source=source, title=title, metadata=metadata)
        return self._maintained(self._one(doc))

    async def aingest_paths(
        self, paths: Sequence[str | os.PathLike[str]], *, content_type: str | None = None
    ) -> list[FileResult]:
        """Ingest files, folders (recursive) and globs without blocking the event loop:
        ``ingest_paths`` (many documents per transaction) runs in a worker thread (writes are
        transactions on the sync driver; the loop stays free meanwhile). A file that fails is
        reported in its ``FileResult`` and the others go on; so is what the file selection
        skips (FIFOs, devices, symlinks leaving a folder: ``files.select_files``), as an
        ``InputError``. Cancelling the task cancels the ingestor (``cancel()``: files not yet
        written are not written) and stops; an ingestor cancelled otherwise raises
        ``Cancelled``; ``reset_cancel()`` makes it usable again."""
        import asyncio

        if isinstance(paths, (str, os.PathLike)):
            raise InputError("aingest_paths takes a list of paths, not one path")
        selection = select_files([os.fspath(p) for p in paths], extensions=self.extractors.extensions)
        skipped = [FileResult.failed(os.fsdecode(s.path), InputError(f"skipped: {s.reason}")) for s in selection.skipped]
        try:
            out = await asyncio.to_thread(self.ingest_paths, selection.files, content_type=content_type)
        except asyncio.CancelledError:
            self.cancel_event.set()  # the run in its thread stops as cancel() would stop it
            raise
        stopped = next((r.exception for r in out if isinstance(r.exception, Cancelled)), None)
        if stopped is not None:
            raise stopped
        return skipped + out

    def ingest_reader(
        self,
        reader: BinaryIO | io.RawIOBase,
        filename: str,
        *,
        content_type: str | None = None,
        source: str | None = None,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> IngestResult:
        """Ingest a stream, read in bounded pieces (a stream over the size limit is refused
        before it is all in memory)."""
        limit = self.extractors.max_bytes
        buf = bytearray()
        while True:
            piece = reader.read(1 << 20)
            if not piece:
                break
            buf += piece
            if len(buf) > limit:
                raise InputError(f"{filename} is over the limit of {limit} bytes")
        return self.ingest_file(
            filename, content=bytes(buf), content_type=content_type, source=source, title=title, metadata=metadata
        )

    def ingest_paths(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        content_type: str | None = None,
        on_result: Callable[[FileResult], None] | None = None,
    ) -> list[FileResult]:
        """Ingest many files, many documents per transaction: what ``kgrag ingest FOLDER`` runs
        (``pipeline.FolderPipeline``: groups of files hash-checked in one read, batches of
        chunks embedded while the batches before are written).

        Each document is still all or nothing, and a failing file (unreadable, empty, refused
        by the store) is reported in its ``FileResult`` without stopping the others; a lost
        connection to the database stops the run (it raises). ``on_result`` is called once
        per file, in the calling thread, as results come in (for progress).
        Returns one ``FileResult`` per path, in the order given. Once the ingestor is
        cancelled, the files not yet written get a ``Cancelled`` error."""
        items = [os.fspath(p) for p in paths]
        with span(self.tracer, "ingest.paths", {"files": len(items), "strategy": self.options.strategy}) as sp:
            pipeline = FolderPipeline(self._writer, load=self._load_file, cancel=self.cancel_event, on_result=on_result)
            out = pipeline.run(items, content_type=content_type)
            if any(r.result is not None and r.result.status != "unchanged" for r in out) and not self.cancelled:
                self.maintain_entities()
            counts: dict[str, int] = {}
            for r in out:
                counts[r.status] = counts.get(r.status, 0) + 1
            sp.update({**counts, "cancelled": self.cancel_event.is_set()})
        return out

    def ingest_run(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        content_type: str | None = None,
        source: str | None = None,
        follow_symlinks: bool = False,
        observer: IngestObserver | None = None,
    ) -> IngestTally:
        """Ingest files, folders (recursive) and globs as ``kgrag ingest`` does: the selection
        (what it skips is recorded), ``ingest_paths``, and a stop at an error that ends the
        run; returns the rows and counts (:func:`kgrag_neo4j.ingestion.batch.ingest_run`)."""
        return ingest_run(
            self, paths, content_type=content_type, source=source, follow_symlinks=follow_symlinks, observer=observer
        )

    # -- one document -------------------------------------------------------------------
    def _one(self, doc: IngestDocument) -> IngestResult:
        """A single document through the same steps as a folder's, in the calling thread,
        as an ``ingest.document`` span."""
        attributes = {"source": doc.source, "content_type": doc.content_type, "strategy": self.options.strategy}
        writer = self._writer
        with span(self.tracer, "ingest.document", attributes) as sp:
            stop_if_cancelled(self.cancel_event, doc.source)
            writer.check_schema()
            if not writer.skip_unchanged([doc]):
                writer.chunk(doc, created_at=run_time())
                ready = writer.prepare([doc])
                if ready:
                    self._edges.link(ready, self._edges.linker(stored_outside=True))
                    writer.write(ready)
            if doc.error is not None:
                raise doc.error
            result = doc.result
            assert result is not None
            sp.update(
                {
                    "document_id": result.document_id,
                    "status": result.status,
                    "chunk_count": result.chunk_count,
                    "edge_count": result.edge_count,
                    "cancelled": result.cancelled,
                }
            )
        return result

    def _maintained(self, result: IngestResult) -> IngestResult:
        if result.status != "unchanged" and not self.cancelled:
            self.maintain_entities()
        return result

    # -- identity -----------------------------------------------------------------------
    def _identify(
        self,
        text: str,
        *,
        source: str,
        title: str,
        metadata: Mapping[str, Any] | None,
        content_type: str,
        document_id: str | None,
    ) -> IngestDocument:
        """The document's id (namespace and ``source``) and content hash (the text under this
        ingestor's chunking and embedding: a change of either is a change of content)."""
        if not source or not isinstance(source, str):
            raise InputError("source must be a non-empty string")
        for what, value in (("source", source), ("title", title), ("text", text)):
            if not _is_utf8(value):  # a lone surrogate: nothing can store or hash it
                raise InputError(f"the {what} of {_shown(source)} is not valid Unicode text")
        fingerprint = self._fingerprints.get(content_type)
        if fingerprint is None:
            fingerprint = self._fingerprints[content_type] = self.options.fingerprint(content_type, self.embedder.name)
        return IngestDocument(
            source=source,
            title=title,
            text=text,
            content_type=content_type,
            metadata=dict(metadata or {}),
            document_id=document_id or ids.document_id(self._capabilities.namespace, source),
            digest=ids.content_hash(fingerprint + "\x1f" + text),
        )

    def _load_file(
        self,
        path: str | os.PathLike[str],
        *,
        content: bytes | None = None,
        content_type: str | None = None,
        source: str | None = None,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> IngestDocument:
        """A file read (or ``content`` named by ``path``) and extracted, with its identity."""
        name = os.fsdecode(path)
        ctype = content_type or self.extractors.content_type_for_path(name)
        if content is None:
            # a regular file only, checked on the opened file (a FIFO or a device never blocks
            # or floods the run), at most max_bytes
            content = read_regular_file(path, max_bytes=self.extractors.max_bytes)
            if source is None:
                source = os.path.realpath(name)  # one document however the file is reached (Path.resolve's answer)
        if source is None:
            source = name
        if not _is_utf8(source):
            raise InputError(
                f"the file name {_shown(name)} is not valid UTF-8, so it cannot name the document; "
                "rename the file or give the document a source (--source)"
            )
        plain: str | None = None
        if ctype == "text/markdown":
            # the Markdown chunker needs the headings: keep the source, and its plain text
            raw, plain = self._markdown(content)
        else:
            raw = self.extractors.extract(content, content_type=ctype)
        doc = self._identify(
            raw,
            source=source,
            title=title if title is not None else _shown(os.path.basename(name) or Path(name).name),
            metadata=metadata,
            content_type=ctype,
            document_id=None,
        )
        doc.plain = plain
        return doc

    def _markdown(self, content: bytes) -> tuple[str, str]:
        """A Markdown file's source and its text without formatting, converted once; refused
        as ``ExtractorRegistry.extract`` refuses it (over the size limit, not text, empty)."""
        if len(content) > self.extractors.max_bytes:
            raise InputError(
                f"content is {len(content)} bytes, over the limit of {self.extractors.max_bytes} bytes "
                "(raise max_bytes to accept it)"
            )
        raw = decode_text(content, what="Markdown")
        plain = markdown_to_text(raw)
        if not plain.strip():
            raise ExtractionError("Markdown is empty (no text left after extraction)")
        return raw, plain

    # -- after the writes -----------------------------------------------------------------
    def maintain_entities(self) -> MaintenanceResult | None:
        """Bring the namespace's entity graph up to date with what is stored (what every
        ingest does at its end, see ``IngestOptions.entities``); None when there is nothing
        to maintain (no entity graph, ``entities=False``, or a store without the capability)."""
        wanted = self.options.entities
        if wanted is False or self._capabilities.entity_graph is None:
            return None
        from ..entities.maintain import maintain_entity_graph

        self.last_maintenance = maintain_entity_graph(self.store, self.embedder, create=bool(wanted))
        return self.last_maintenance

    def reembed(
        self, *, batch_size: int = 256, grace: float = 10.0, progress: Callable[[str, int, int], None] | None = None
    ) -> ReembedResult:
        """Embed this namespace's chunks and entities again with this ingestor's embedder and
        switch the namespace to it without downtime (``ingestion.reembed.reembed_namespace``:
        resumable; ingest is refused until it finishes). Returns its ``ReembedResult``."""
        from .reembed import reembed_namespace

        return reembed_namespace(self.store, self.embedder, batch_size=batch_size, grace=grace, progress=progress)

    def build_edges(self, document_ids: Sequence[str] | None = None) -> dict[str, int]:
        """(Re)build the edges the graph options ask for over stored documents (all of the
        namespace by default); idempotent, since edges are upserted. Returns counts. Stops
        before the next page of documents once cancelled (``cancelled`` in the counts).

        Documents are read ``chunk_edges.EDGE_PAGE_DOCUMENTS`` at a time and each page's edges
        are written in one call. Similarity edges of a whole namespace that fits the linker's
        window are exact (numpy over every stored vector); otherwise the vector index finds
        them, one read per page."""
        return self._edges.build(document_ids)

    def extract_cross_document_edges(
        self,
        *,
        similarity_threshold: float = 0.5,
        max_pairs_per_chunk: int = 3,
        batch_size: int = 5,
        document_ids: Sequence[str] | None = None,
        cancel: threading.Event | None = None,
    ) -> int:
        """Candidates by vector similarity across documents (``max_pairs_per_chunk`` chunks of
        other documents with cosine >= ``similarity_threshold`` per chunk of ``document_ids``,
        all documents by default), relations from the LLM in calls of ``batch_size`` chunks
        that together cover every candidate pair (``edges.cross_document_batches``), run on
        ``graph_extraction_workers`` threads. Only edges between chunks of different
        documents are kept, then deduplicated and pruned. Returns the number of edges stored.
        Needs ``graph.graph_extraction`` and a GraphStore; ``cancel`` (default: this
        ingestor's event) stops the model calls not yet sent."""
        return self._edges.cross_document_edges(
            similarity_threshold=similarity_threshold,
            max_pairs_per_chunk=max_pairs_per_chunk,
            batch_size=batch_size,
            document_ids=document_ids,
            cancel=cancel,
        )


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 (kept by the OS as lone surrogates)
    become U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
