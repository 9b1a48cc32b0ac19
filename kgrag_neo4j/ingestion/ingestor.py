"""The write path: extract -> chunk -> embed in batches -> edges -> store, a
document with its chunks and edges in one transaction.

Re-ingesting the same content (same source, same text, same chunking and embedder) is a
no-op decided before any embedding is computed; a changed document replaces the old one
atomically (``Store.store_document``). ``ingest_paths`` (``kgrag ingest FOLDER``) runs the same
pipeline over many files: content hashes checked a group at a time, many documents per
transaction (``store_documents``), the next batch embedded while the current one is written.
A single text or file is a batch of one.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from .. import ids
from ..errors import (
    Cancelled,
    ConfigurationError,
    ExtractionError,
    InputError,
    KgragError,
    NotFoundError,
    ProviderError,
    ProviderResponseError,
    SchemaNotReady,
)
from ..options import STRATEGIES, IngestOptions
from ..protocols import (
    BulkDocumentWriter,
    ChunkPager,
    CrossDocumentPairer,
    DocumentChunkLister,
    DocumentCompleter,
    DocumentPresence,
    DocumentStates,
    EdgeDeleter,
    EmbedderRegistry,
    EmbeddingProvider,
    GraphStore,
    MaintainedEntityGraph,
    Namespaced,
    NearestChunkFinder,
    Store,
    embed_batched,
)
from ..tracing import TracerOption, check_tracer, span
from ..types import PENDING_HASH_SUFFIX, Chunk, ChunkEdge, Document, IngestResult
from .batch import IngestObserver, IngestTally, ingest_run
from .chunkers import Chunker, ChunkPiece, MarkdownChunker, RecursiveChunker
from .edges import (
    build_text_edges,
    cross_document_batches,
    dedupe_edges,
    edges_to_prune,
    extract_batch_edges,
    prune_edges,
)
from .extractors import ExtractorRegistry, decode_text, markdown_to_text
from .files import read_regular_file
from .outcomes import FileResult
from .similarity import WINDOW_CHUNKS, SimilarityLinker

if TYPE_CHECKING:
    from ..entities.maintain import MaintenanceResult
    from .reembed import ReembedResult

__all__ = ["IngestOptions", "Ingestor", "STRATEGIES"]

log = logging.getLogger("kgrag_neo4j.ingest")

Progress = Callable[[str, Mapping[str, Any]], None]

#: files read and hash-checked together by ``ingest_paths`` (one read of the store each), up
#: to ``GROUP_BYTES`` characters of text
GROUP_FILES = 2_048
GROUP_BYTES = 32_000_000
#: chunks per write batch of ``ingest_paths``: one transaction each (``Store.store_documents``
#: splits further if it must); a document with more chunks is a batch of its own; half of it
#: when batches are written one at a time
WRITE_BATCH_CHUNKS = 2_000
#: a run's first group and first batch are this small, and each next one twice the last (up to
#: the sizes above), so the writer gets work early instead of waiting idle while a whole first batch is
#: read, hashed, chunked and embedded
FIRST_GROUP_FILES = 128
FIRST_WRITE_BATCH_CHUNKS = 64
#: write transactions ``ingest_paths`` keeps open at once: the database runs a transaction's
#: statement on one thread, so one writer left a core idle while the next batch was embedded
WRITERS = 2
#: documents whose chunks ``build_edges`` reads (and whose edges it writes) at a time
EDGE_PAGE_DOCUMENTS = 200


class _Doubling:
    """A size limit that starts at ``first`` and doubles at each ``grow`` up to ``most``."""

    def __init__(self, first: int, most: int) -> None:
        self.limit = max(1, min(first, most))
        self.most = most

    def grow(self) -> None:
        self.limit = max(1, min(self.limit * 2, self.most))


class _Batcher:
    """Documents cut into write batches of about ``limit.limit`` chunks (a larger document
    alone; the limit grows after each batch). A batch runs on across the groups the files are
    read in: the last documents of a group wait for the next group's rather than go alone in a
    small transaction (each commit costs the database about the same whatever its size)."""

    def __init__(self, limit: _Doubling) -> None:
        self.limit = limit
        self.batch: list[_Doc] = []
        self.size = 0

    def add(self, d: _Doc) -> list[_Doc] | None:
        """Take a chunked document; the batch it closed, if adding it would overflow one."""
        n = len(d.chunks)
        full = None
        if self.batch and self.size + n > self.limit.limit:
            full = self.take()
            self.limit.grow()
        self.batch.append(d)
        self.size += n
        return full

    def take(self) -> list[_Doc]:
        batch, self.batch, self.size = self.batch, [], 0
        return batch


@dataclass(eq=False)
class _Doc:
    """One document on its way through the pipeline."""

    source: str = ""
    title: str = ""
    text: str = ""
    #: Markdown's text without its formatting (the document's content), made where the file
    #: is read: the Markdown is converted once
    plain: str | None = None
    content_type: str = "text/plain"
    metadata: dict[str, Any] = field(default_factory=dict)
    document_id: str = ""
    digest: str = ""
    position: int = 0
    document: Document | None = None
    chunks: list[Chunk] = field(default_factory=list)
    edges: list[ChunkEdge] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    result: IngestResult | None = None
    error: KgragError | None = None

    @classmethod
    def failed(cls, error: KgragError) -> _Doc:
        return cls(error=error)


def _chunks_of(docs: Sequence[_Doc]) -> int:
    return sum(len(d.chunks) for d in docs)


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


def _check_vector(vector: Any, dimensions: int, index: int) -> list[float]:
    try:
        values = [float(x) for x in vector]
    except (TypeError, ValueError):
        raise ProviderResponseError(f"the embedder returned a non-numeric vector for text {index}") from None
    if len(values) != dimensions:
        raise ProviderResponseError(
            f"the embedder returned {len(values)} numbers for text {index}; it declares {dimensions} dimensions"
        )
    if not all(math.isfinite(x) for x in values):
        raise ProviderResponseError(f"the embedder returned NaN or infinity for text {index}")
    return values


def _check_vectors(vectors: Sequence[Any], dimensions: int) -> list[list[float]]:
    """All vectors checked at once; the first bad one named as ``_check_vector`` does.

    Lists of numbers (what the embedders give) are checked where they are: right lengths and a
    finite sum (finite terms, one C loop per vector; the store makes them floats); turning
    them into an array and back costs CPU a large ingest notices. Anything else goes
    through numpy, and what fails either test through ``_check_vector`` (an infinite sum may
    only have overflowed)."""
    if type(vectors) is list and all(type(v) is list and len(v) == dimensions for v in vectors):
        try:
            if math.isfinite(sum(map(sum, vectors))):
                return vectors
        except TypeError:
            pass
    try:
        matrix = np.asarray(vectors, dtype=np.float64)
        good = matrix.ndim == 2 and matrix.shape[1] == dimensions and bool(np.isfinite(matrix).all())
    except (TypeError, ValueError):
        good = False
    if not good:
        return [_check_vector(v, dimensions, i) for i, v in enumerate(vectors)]
    return matrix.tolist()


#: edge origins one ingest run of a document writes (pruned together)
DOCUMENT_ORIGINS = frozenset({"sequence", "llm", "similarity"})
#: edge origins one cross-document run writes (pruned together)
CROSS_DOCUMENT_ORIGINS = frozenset({"cross_document"})


class Ingestor:
    """Ingest text, files and streams into a ``Store``.

    ``Ingestor(store, embedder, options=IngestOptions(...))`` or keyword overrides of the
    options (``Ingestor(store, embedder, strategy="parent-child")``).

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
        self._schema_checked = False
        self._fingerprints: dict[str, str] = {}
        self._namespace_of: tuple[object, str] = (None, "")
        self._default_chunkers: dict[str, Chunker] = {}

    @property
    def _namespace(self) -> str:
        """The store's namespace (ids embed it); "default" for a store that has none."""
        # a runtime protocol check costs ~20 us and this runs once per document
        store = self.store
        if self._namespace_of[0] is not store:
            self._namespace_of = (store, store.namespace if isinstance(store, Namespaced) else "default")
        return self._namespace_of[1]

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

    def _stop_if_cancelled(self, what: str) -> None:
        if self.cancel_event.is_set():
            raise Cancelled(f"ingest of {what} cancelled; nothing of it was written")

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
        doc = self._identify(text, source=source, title=title, metadata=metadata, content_type=content_type,
                             document_id=document_id)
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
        doc = self._load_file(path, content=content, content_type=content_type, source=source, title=title,
                              metadata=metadata)
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

        from .files import select_files

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
        """Ingest many files, many documents per transaction: what ``kgrag ingest FOLDER`` runs.

        Files are read and their content hashes checked against the store a group at a time
        (one read per ``GROUP_FILES`` files or ``GROUP_BYTES`` of text: unchanged files cost no
        chunking and no embedding); the changed ones are chunked, embedded and written in batches of about
        ``WRITE_BATCH_CHUNKS`` chunks, one transaction each, ``WRITERS`` at once while the next batch
        is embedded (one at a time, and half the size, when a batch's edges may point to the
        batch before it). A group's last files may wait for the next group's to fill a batch.
        Each document is still all or nothing, and a failing file (unreadable, empty, refused
        by the store) is reported in its ``FileResult`` without stopping the others; a lost
        connection to the database stops the run (it raises). ``on_result`` is called once
        per file, in the calling thread, as results come in (for progress).
        Returns one ``FileResult`` per path, in the order given. Once the ingestor is
        cancelled, the files not yet written get a ``Cancelled`` error."""
        items = [os.fspath(p) for p in paths]
        with span(self.tracer, "ingest.paths", {"files": len(items), "strategy": self.options.strategy}) as sp:
            out = self._ingest_paths(items, content_type=content_type, on_result=on_result)
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
        return ingest_run(self, paths, content_type=content_type, source=source,
                          follow_symlinks=follow_symlinks, observer=observer)

    def _ingest_paths(
        self,
        items: Sequence[str],
        *,
        content_type: str | None,
        on_result: Callable[[FileResult], None] | None,
    ) -> list[FileResult]:
        out = [FileResult(path=p) for p in items]
        self._check_schema()
        linker = self._linker(stored_outside=None)

        def finish(docs: Sequence[_Doc]) -> None:
            for d in docs:
                path = out[d.position].path
                out[d.position] = FileResult.failed(path, d.error) if d.error is not None else FileResult(path, result=d.result)
                if on_result is not None:
                    on_result(out[d.position])

        # not with similarity edges: a chunk is linked to the chunks of its own and earlier
        # batches, so smaller first batches would give their chunks fewer candidates
        ramp = linker is None
        writers = self._writers(linker)
        # one writer at a time: half the size, which that writer commits sooner (a larger
        # transaction costs the server less CPU but kept a lone writer waiting: bench/NOTES.md)
        most = WRITE_BATCH_CHUNKS if writers > 1 else max(1, WRITE_BATCH_CHUNKS // 2)
        batcher = _Batcher(_Doubling(FIRST_WRITE_BATCH_CHUNKS if ramp else most, most))
        # an empty namespace has nothing unchanged: one read instead of one per group (a file
        # written meanwhile by another run is still found by the write, which MERGEs documents)
        nothing_stored = isinstance(self.store, DocumentPresence) and not self.store.has_documents()
        with ThreadPoolExecutor(max_workers=writers, thread_name_prefix="kgrag-ingest-writer") as writer:
            in_flight: deque[tuple[Future, list[_Doc]]] = deque()

            def send(batch: list[_Doc]) -> None:
                ready = self._prepare(batch)  # while the previous batches are being written
                prepared = {id(d) for d in ready}
                finish([d for d in batch if id(d) not in prepared])
                if not ready:
                    return
                if in_flight and linker is not None and \
                        _chunks_of(in_flight[-1][1]) + _chunks_of(ready) > linker.window:
                    # chunks leaving the linker's window must be committed: the index
                    # answers for them from now on
                    while in_flight:
                        finish(self._collect(in_flight.popleft()))
                self._link(ready, linker)
                while len(in_flight) >= writers:
                    finish(self._collect(in_flight.popleft()))
                if self.cancel_event.is_set():
                    # cancelled while the batches ahead were written: not this one
                    finish(self._cancelled(ready))
                    return
                in_flight.append((writer.submit(self._write, ready), ready))

            try:
                for group in self._groups(items, content_type, ramp=ramp):
                    docs = [d for d in group if d.error is None]
                    done = [d for d in group if d.error is not None] + ([] if nothing_stored else self._skip_unchanged(docs))
                    finish(done)
                    for batch in self._batches([d for d in docs if d.result is None], batcher):
                        send(batch)
                if batcher.batch:
                    send(batcher.take())
                while in_flight:
                    finish(self._collect(in_flight.popleft()))
            finally:
                for future, _ in in_flight:
                    future.cancel()
        return out

    # -- the pipeline -------------------------------------------------------------------
    def _groups(self, paths: Sequence[str], content_type: str | None, *, ramp: bool) -> Iterator[list[_Doc]]:
        """The files read (or refused) in groups of ``GROUP_FILES`` (with ``ramp``, the first
        ones smaller) or ``GROUP_BYTES`` of text."""
        group: list[_Doc] = []
        size = 0
        files = _Doubling(FIRST_GROUP_FILES if ramp else GROUP_FILES, GROUP_FILES)
        for position, path in enumerate(paths):
            try:
                self._stop_if_cancelled(path)
                doc = self._load_file(path, content_type=content_type)
            except KgragError as exc:
                doc = _Doc.failed(exc)
            doc.position = position
            group.append(doc)
            size += len(doc.text)
            if len(group) >= files.limit or size >= GROUP_BYTES:
                yield group
                group, size = [], 0
                files.grow()
        if group:
            yield group

    def _identify(
        self,
        text: str,
        *,
        source: str,
        title: str,
        metadata: Mapping[str, Any] | None,
        content_type: str,
        document_id: str | None,
    ) -> _Doc:
        if not source or not isinstance(source, str):
            raise InputError("source must be a non-empty string")
        for what, value in (("source", source), ("title", title), ("text", text)):
            if not _is_utf8(value):  # a lone surrogate: nothing can store or hash it
                raise InputError(f"the {what} of {_shown(source)} is not valid Unicode text")
        namespace = self._namespace
        fingerprint = self._fingerprints.get(content_type)
        if fingerprint is None:
            fingerprint = self._fingerprints[content_type] = self.options.fingerprint(content_type, self.embedder.name)
        return _Doc(
            source=source,
            title=title,
            text=text,
            content_type=content_type,
            metadata=dict(metadata or {}),
            document_id=document_id or ids.document_id(namespace, source),
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
    ) -> _Doc:
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

    def _one(self, doc: _Doc) -> IngestResult:
        """A single document through the same pipeline as a folder, in the calling thread,
        as an ``ingest.document`` span."""
        attributes = {"source": doc.source, "content_type": doc.content_type, "strategy": self.options.strategy}
        with span(self.tracer, "ingest.document", attributes) as sp:
            self._stop_if_cancelled(doc.source)
            self._check_schema()
            if not self._skip_unchanged([doc]):
                self._chunk_doc(doc)
                ready = self._prepare([doc])
                if ready:
                    self._link(ready, self._linker(stored_outside=True))
                    self._write(ready)
            if doc.error is not None:
                raise doc.error
            result = doc.result
            assert result is not None
            sp.update({"document_id": result.document_id, "status": result.status, "chunk_count": result.chunk_count,
                       "edge_count": result.edge_count, "cancelled": result.cancelled})
        return result

    def _maintained(self, result: IngestResult) -> IngestResult:
        if result.status != "unchanged" and not self.cancelled:
            self.maintain_entities()
        return result

    def maintain_entities(self) -> MaintenanceResult | None:
        """Bring the namespace's entity graph up to date with what is stored (what every
        ingest does at its end, see ``IngestOptions.entities``); None when there is nothing
        to maintain (no entity graph, ``entities=False``, or a store without the capability)."""
        wanted = self.options.entities
        if wanted is False or not isinstance(self.store, MaintainedEntityGraph):
            return None
        from ..entities.maintain import maintain_entity_graph

        return maintain_entity_graph(self.store, self.embedder, create=bool(wanted))

    def _skip_unchanged(self, docs: Sequence[_Doc]) -> list[_Doc]:
        """Decide the documents whose stored content hash is theirs (one read for all); they
        get their result and are returned."""
        if not docs:
            return []
        if not isinstance(self.store, DocumentStates):
            return []  # a store that keeps no content hash: everything is written again
        found = self.store.document_states([d.document_id for d in docs])
        unchanged = []
        for d in docs:
            state = found.get(d.document_id)
            if state is not None and state.get("content_hash") == d.digest:
                d.result = IngestResult(document_id=d.document_id, chunk_count=int(state.get("chunk_count") or 0),
                                        status="unchanged")
                unchanged.append(d)
        return unchanged

    def _batches(self, docs: Sequence[_Doc], batcher: _Batcher) -> Iterator[list[_Doc]]:
        """Chunk the documents and yield the write batches they fill (``_Batcher``); the
        documents of a batch not yet full wait in the batcher. A document that cannot be
        chunked (or comes after a cancel) gets its error and is yielded alone, so it is reported
        at once."""
        for d in docs:
            if self.cancel_event.is_set():
                yield self._cancelled([d])
                continue
            try:
                self._chunk_doc(d)
            except KgragError as exc:
                d.error = exc
                yield [d]
                continue
            full = batcher.add(d)
            if full is not None:
                yield full

    def _chunk_doc(self, d: _Doc) -> None:
        plain = d.text
        if d.content_type == "text/markdown":
            plain = d.plain if d.plain is not None else markdown_to_text(d.text)
        d.document = Document(
            id=d.document_id,
            source=d.source,
            title=d.title,
            content=plain,
            namespace=self._namespace,
            # Why pending: cross-document edges need the committed vector index, so they follow
            # the document's transaction; until they are done the document carries a hash that
            # never equals the real one, and a re-run after a crash redoes them
            content_hash=d.digest + PENDING_HASH_SUFFIX if self._pending_hash() else d.digest,
            created_at=int(time.time()),
            metadata=d.metadata,
        )
        d.chunks = self._chunk(d.document, d.text, d.content_type)
        if not any(c.content.strip() for c in d.chunks):
            raise InputError(f"{d.source} has no text to chunk")

    def _prepare(self, batch: Sequence[_Doc]) -> list[_Doc]:
        """Embed the batch's chunks (in ``batch_size`` calls across documents) and build each
        document's own edges (sequence, LLM). Returns the documents ready to link and write."""
        docs = [d for d in batch if d.error is None]
        if not docs:
            return []
        if self.cancel_event.is_set():
            self._cancelled(docs)
            return []
        try:
            if len(docs) > 1:
                self._embed_chunks([c for d in docs for c in d.chunks])
            else:
                docs[0].skipped = self._embed_or_skip(docs[0].chunks)
        except KgragError as exc:
            if len(docs) == 1:
                docs[0].error = exc
            else:
                # Why: one document's text must not fail the others: embed them one by one,
                # so only the failing one fails (or is stored unembedded, as options say)
                for d in docs:
                    try:
                        d.skipped = self._embed_or_skip(d.chunks)
                    except KgragError as exc:
                        d.error = exc
        if self.cancel_event.is_set():
            self._cancelled(docs)
            return []
        ready = [d for d in docs if d.error is None]
        if ready:
            # Why here: the first write records the embedder for the namespace (and, on an
            # empty database, its dimensions); an embedder that failed must not bind it
            self._ensure_schema()
        g = self.options.graph
        if g.text_edges and isinstance(self.store, GraphStore):  # seed: without GraphStore, no edges
            for d in ready:  # a cancel from here on keeps the document, with the edges found
                # similarity edges follow in _link, across the run and the stored namespace
                d.edges = self._pruned(build_text_edges(d.chunks, g, cancel=self.cancel_event, logger=self.log))
        return ready

    @staticmethod
    def _cancelled(docs: list[_Doc]) -> list[_Doc]:
        for d in docs:
            if d.error is None:
                d.error = Cancelled(f"ingest of {d.source} cancelled; nothing of it was written")
        return docs

    def _pruned(self, edges: Sequence[ChunkEdge]) -> list[ChunkEdge]:
        g = self.options.graph
        return prune_edges(dedupe_edges(edges), min_weight=g.min_edge_weight, max_edges_per_chunk=g.max_edges_per_chunk)

    def _link(self, docs: Sequence[_Doc], linker: SimilarityLinker | None) -> None:
        """similar_to edges of the batch (exact within the run, the index for the rest), then
        each document's edges deduplicated and pruned together."""
        if linker is None or not docs:
            return
        embedded = [(d, c) for d in docs for c in d.chunks if c.embedding is not None]
        if not embedded:
            return
        owner = {c.id: d for d, c in embedded}
        linker.forget_documents(d.document_id for d in docs)
        found = linker.link([c.id for _, c in embedded], [c.embedding for _, c in embedded if c.embedding is not None])
        for e in found:
            owner[e.source_id].edges.append(e)
        for d in docs:
            d.edges = self._pruned(d.edges)

    def _linker(self, *, stored_outside: bool | None) -> SimilarityLinker | None:
        g = self.options.graph
        if not (g.similarity_edges and isinstance(self.store, GraphStore)):
            return None
        nearest = self.store.nearest_chunks if isinstance(self.store, NearestChunkFinder) else None
        stored: tuple[list[str], list[list[float]], list[str]] | None = None
        if isinstance(self.store, NearestChunkFinder) and stored_outside is None:
            stored_outside = self.store.has_embedded_chunks()
            if stored_outside:
                stored = self._stored_vectors(WINDOW_CHUNKS // 2)
        linker = SimilarityLinker(
            top_k=g.similarity_top_k,
            threshold=g.similarity_threshold,
            nearest=(lambda ids, vectors: nearest(ids, vectors, top_k=g.similarity_top_k, threshold=g.similarity_threshold))
            if nearest is not None else None,
            stored_outside=bool(stored_outside) and stored is None,
        )
        if stored is not None:
            linker.preload(stored[0], stored[1], documents=stored[2])
        return linker

    def _stored_vectors(self, most: int) -> tuple[list[str], list[list[float]], list[str]] | None:
        """The ids, vectors and documents of every embedded chunk of the namespace, when it
        holds at most ``most``: a run (a re-ingest, typically) then links against them exactly
        in memory. Asking the vector index instead costs a read per batch and, when other
        namespaces crowd the index, a scan of the namespace per chunk: in memory is several
        times faster (docs/benchmarks.md)."""
        store = self.store
        if not isinstance(store, ChunkPager):
            return None
        documents = [d.id for d in store.list_documents(limit=most + 1)]
        if len(documents) > most:
            return None
        ids: list[str] = []
        vectors: list[list[float]] = []
        owners: list[str] = []
        for start in range(0, len(documents), EDGE_PAGE_DOCUMENTS):
            page = store.list_chunks_of_documents(documents[start : start + EDGE_PAGE_DOCUMENTS], with_embedding=True)
            for document_id, chunks in page.items():
                for c in chunks:
                    if c.embedding is not None:
                        ids.append(c.id)
                        vectors.append(c.embedding)
                        owners.append(document_id)
            if len(ids) > most:
                return None
        return (ids, vectors, owners) if ids else None

    def _write(self, docs: Sequence[_Doc]) -> list[_Doc]:
        """Write the documents (many per transaction when the store can); each gets its result
        or its error. A lost connection raises."""
        if isinstance(self.store, BulkDocumentWriter):
            outcomes = self.store.store_documents(
                [(d.document, d.chunks, d.edges) for d in docs]  # type: ignore[misc]  # _prepare passes chunked documents only
            )
        else:
            outcomes = []
            for d in docs:
                try:
                    status = self.store.store_document(d.document, d.chunks)  # type: ignore[arg-type]  # _prepare passes chunked documents only
                    if status != "unchanged" and d.edges and isinstance(self.store, GraphStore):
                        self.store.store_edges(d.edges)
                    outcomes.append(status)
                except (InputError, NotFoundError) as exc:
                    outcomes.append(exc)
        cross, pending = self._cross_document_wanted(), self._pending_hash()
        for d, outcome in zip(docs, outcomes):
            if isinstance(outcome, Exception):
                d.error = outcome  # type: ignore[assignment]  # the store refuses with KgragError values only
                continue
            assert d.document is not None
            document = dataclasses.replace(d.document, content_hash=d.digest) if pending else d.document
            d.result = IngestResult(document_id=d.document_id, chunk_count=len(d.chunks), status=outcome,
                                    document=document, skipped=d.skipped)
            if outcome != "unchanged":
                d.result.edge_count = len(d.edges)
            # with a pending hash also after "unchanged": the stored hash was then this very
            # pending one, left by a run that died before this step (which is idempotent)
            if cross and (pending or outcome != "unchanged"):
                d.result.edge_count += self._cross_document_at_ingest(d.document_id)
            if pending and isinstance(self.store, DocumentCompleter):
                self.store.complete_document(
                    d.document_id, pending_hash=d.document.content_hash, content_hash=d.digest
                )
            d.result.cancelled = self.cancel_event.is_set()
        return list(docs)

    def _cross_document_wanted(self) -> bool:
        g = self.options.graph
        return (
            g.cross_document_edges
            and g.graph_extraction is not None
            and isinstance(self.store, GraphStore)
            and isinstance(self.store, CrossDocumentPairer)
        )

    def _pending_hash(self) -> bool:
        """Whether documents are written with a pending hash, completed after the
        cross-document edges that follow their transaction."""
        return self._cross_document_wanted() and isinstance(self.store, DocumentCompleter)

    def _cross_document_at_ingest(self, doc_id: str) -> int:
        """Seed ``WithCrossDocumentEdges``: edges from the new document to the others."""
        if not self._cross_document_wanted() or self.cancel_event.is_set():
            return 0
        g = self.options.graph
        return self.extract_cross_document_edges(
            similarity_threshold=g.cross_document_threshold,
            max_pairs_per_chunk=g.cross_document_max_pairs,
            batch_size=g.cross_document_batch_size,
            document_ids=[doc_id],
        )

    def _prune_stored(self, chunk_ids: Sequence[str], origins: frozenset[str]) -> int:
        """Apply the pruning rule to the stored outgoing edges of ``chunk_ids`` that one run
        writes (``origins``): edges stored by an earlier run (an ingest's LLM edges, say)
        count against ``max_edges_per_chunk`` too, whatever their source. Returns how many
        were deleted."""
        g = self.options.graph
        if not g.prunes or not chunk_ids or not isinstance(self.store, GraphStore) or not isinstance(self.store, EdgeDeleter):
            return 0
        stored = [e for e in self.store.get_edges(list(chunk_ids)) if e.origin in origins]
        doomed = edges_to_prune(stored, min_weight=g.min_edge_weight, max_edges_per_chunk=g.max_edges_per_chunk)
        return int(self.store.delete_edges(doomed)) if doomed else 0

    def _writers(self, linker: SimilarityLinker | None) -> int:
        """How many batches ``ingest_paths`` writes at once: ``WRITERS`` where no batch's write
        needs an earlier one committed, else one at a time (similarity edges point to chunks
        of earlier batches; cross-document edges read the documents written before)."""
        if linker is not None or self._cross_document_wanted() or not isinstance(self.store, BulkDocumentWriter):
            return 1
        return WRITERS

    @staticmethod
    def _collect(in_flight: tuple[Future, list[_Doc]]) -> list[_Doc]:
        """Wait for a batch being written; its documents, each with its result or error."""
        future, batch = in_flight
        future.result()
        return batch

    def _check_schema(self) -> None:
        """Refuse an embedder the namespace cannot take before any work is done (reads only)."""
        if self._schema_checked:
            return
        if not isinstance(self.store, EmbedderRegistry):
            return
        try:
            self.store.check_embedder(self.embedder.name, self.embedder.dimensions)
        except SchemaNotReady:
            pass  # an empty database: the first write creates the schema

    def _ensure_schema(self) -> None:
        if self._schema_checked:
            return
        if isinstance(self.store, EmbedderRegistry):
            self.store.ensure_embedder(self.embedder.name, self.embedder.dimensions)
        self._schema_checked = True

    def _flat_chunker(self, content_type: str) -> Chunker:
        if self.options.chunker is not None:
            return self.options.chunker
        key = "markdown" if content_type == "text/markdown" else "recursive"
        chunker = self._default_chunkers.get(key)
        if chunker is None:
            chunker = MarkdownChunker(max_tokens=512) if key == "markdown" else RecursiveChunker()
            self._default_chunkers[key] = chunker
        return chunker

    def _chunk(self, document: Document, text: str, content_type: str) -> list[Chunk]:
        o = self.options
        source_text = text if content_type == "text/markdown" else document.content
        if o.strategy == "flat":
            pieces = self._flat_chunker(content_type).chunk(source_text)
            return [self._make_chunk(document, "flat", i, p) for i, p in enumerate(pieces) if p.content.strip()]
        parent_chunker = o.parent_chunker or RecursiveChunker(max_tokens=o.parent_tokens)
        child_chunker = o.child_chunker or RecursiveChunker(
            max_tokens=o.child_tokens, overlap_tokens=min(50, o.child_tokens // 4)
        )
        out: list[Chunk] = []
        child_index = 0
        for p_index, parent_piece in enumerate(parent_chunker.chunk(document.content)):
            if not parent_piece.content.strip():
                continue
            parent = self._make_chunk(document, "parent", p_index, parent_piece)
            out.append(parent)
            for child_piece in child_chunker.chunk(parent_piece.content):
                if not child_piece.content.strip():
                    continue
                child = self._make_chunk(document, "child", child_index, child_piece, parent_id=parent.id)
                child.metadata = {**parent_piece.metadata, **child.metadata}
                out.append(child)
                child_index += 1
        return out

    @staticmethod
    def _make_chunk(document: Document, kind: str, index: int, piece: ChunkPiece, *, parent_id: str | None = None) -> Chunk:
        return Chunk(
            id=ids.chunk_id(document.id, kind + (":" + parent_id if parent_id else ""), index, piece.content),
            document_id=document.id,
            content=piece.content,
            chunk_index=index,
            parent_id=parent_id,
            token_count=piece.token_count,
            metadata=dict(piece.metadata),
        )

    def _embed_chunks(self, chunks: Sequence[Chunk]) -> None:
        """Embed every chunk but parents (parent-child strategy stores parents bare); a
        failing or misbehaving embedder raises ``ProviderError`` and sets no vector."""
        parent_ids = {c.parent_id for c in chunks if c.parent_id}
        targets = [c for c in chunks if c.id not in parent_ids]
        if not targets:
            return
        try:
            vectors = embed_batched(
                self.embedder, [c.content for c in targets], batch_size=self.options.batch_size, input_type="document"
            )
        except KgragError:
            raise
        except Exception as exc:  # Why: a third-party provider's own error is still a provider failure
            raise ProviderError(f"embedder {self.embedder.name!r} failed: {type(exc).__name__}: {exc}") from exc
        if len(vectors) != len(targets):
            raise ProviderError(f"the embedder returned {len(vectors)} vectors for {len(targets)} texts")
        # Why: garbage vectors (wrong length, NaN, not numbers) are a provider failure, so
        # embedding_failure decides; before, they surfaced later as a store InputError that
        # "store_unembedded" could not catch.
        checked = _check_vectors(vectors, self.embedder.dimensions)
        for c, v in zip(targets, checked):
            c.embedding = v

    def _embed_or_skip(self, chunks: Sequence[Chunk]) -> list[str]:
        """``_embed_chunks`` under the ``embedding_failure`` option; returns what was skipped."""
        try:
            self._embed_chunks(chunks)
        except KgragError as exc:
            if self.options.embedding_failure == "raise" or not isinstance(exc, ProviderError):
                raise
            for c in chunks:
                c.embedding = None
            self.log.warning("embedding failed; storing %d chunks without vectors: %s", len(chunks), exc)
            return [f"embedding failed: {exc}"]
        return []

    def reembed(self, *, batch_size: int = 256, grace: float = 10.0,
                progress: Callable[[str, int, int], None] | None = None) -> ReembedResult:
        """Embed this namespace's chunks and entities again with this ingestor's embedder and
        switch the namespace to it without downtime (``ingestion.reembed.reembed_namespace``:
        resumable; ingest is refused until it finishes). Returns its ``ReembedResult``."""
        from .reembed import reembed_namespace

        return reembed_namespace(self.store, self.embedder, batch_size=batch_size, grace=grace, progress=progress)

    def build_edges(self, document_ids: Sequence[str] | None = None) -> dict[str, int]:
        """(Re)build the edges the graph options ask for over stored documents (all of the
        namespace by default); idempotent, since edges are upserted. Returns counts. Stops
        before the next page of documents once cancelled (``cancelled`` in the counts).

        Documents are read ``EDGE_PAGE_DOCUMENTS`` at a time and each page's edges are written
        in one call. Similarity edges of a whole namespace that fits the linker's window are
        exact (numpy over every stored vector); otherwise the vector index finds them, one
        read per page."""
        if not isinstance(self.store, GraphStore) or not isinstance(self.store, DocumentChunkLister):
            return {"documents": 0, "edges": 0, "cross_document": 0, "cancelled": False}
        everything = document_ids is None
        if document_ids is None:
            document_ids = [d.id for d in self.store.list_documents()]
        document_ids = list(dict.fromkeys(document_ids))
        g = self.options.graph
        store = self.store
        many = store.list_chunks_of_documents if isinstance(store, ChunkPager) else None

        def pages() -> Iterator[dict[str, list[Chunk]]]:
            for start in range(0, len(document_ids), EDGE_PAGE_DOCUMENTS):
                page = document_ids[start : start + EDGE_PAGE_DOCUMENTS]
                if many is not None:
                    yield many(page, with_embedding=g.similarity_edges)
                else:
                    yield {d: store.list_document_chunks(d, with_embedding=g.similarity_edges) for d in page}

        linker = self._linker(stored_outside=True)
        source: Iterable[dict[str, list[Chunk]]] = pages()
        if linker is not None and everything:
            # a namespace that fits the window: every vector in memory, exact neighbours
            held = list(pages())
            embedded = [c for page in held for chunks in page.values() for c in chunks if c.embedding is not None]
            if len(embedded) <= linker.window:
                linker.stored_outside = False
                linker.preload([c.id for c in embedded], [c.embedding for c in embedded if c.embedding is not None])
            source = held
        total = 0
        done = 0
        for page in source:
            if self.cancel_event.is_set():
                break
            edges: list[ChunkEdge] = []
            for chunks in page.values():
                if g.text_edges:
                    edges += self._pruned(build_text_edges(chunks, g, cancel=self.cancel_event, logger=self.log))
            if linker is not None:
                embedded = [c for chunks in page.values() for c in chunks if c.embedding is not None]
                edges += linker.link([c.id for c in embedded], [c.embedding for c in embedded if c.embedding is not None], add=False)
            edges = self._pruned(edges)
            total += self.store.store_edges(edges) if edges else 0
            if linker is not None:
                # edges an earlier run stored on these chunks count against the cap too
                total -= self._prune_stored([c.id for chunks in page.values() for c in chunks], DOCUMENT_ORIGINS)
            done += len(page)
        cross = 0
        if g.cross_document_edges and not self.cancel_event.is_set():
            cross = self.extract_cross_document_edges(
                similarity_threshold=g.cross_document_threshold,
                max_pairs_per_chunk=g.cross_document_max_pairs,
                batch_size=g.cross_document_batch_size,
                document_ids=document_ids,
            )
        return {"documents": done, "edges": total, "cross_document": cross, "cancelled": self.cancel_event.is_set()}

    # -- cross-document edges -----------------------------------------------------------
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
        that together cover every candidate pair (:func:`cross_document_batches`), run on
        ``graph_extraction_workers`` threads. Only edges between chunks of different
        documents are kept, then deduplicated and pruned. Returns the number of edges stored.
        Needs ``graph.graph_extraction`` and a GraphStore; ``cancel`` (default: this
        ingestor's event) stops the model calls not yet sent."""
        g = self.options.graph
        chat = g.graph_extraction
        if chat is None:
            raise ConfigurationError("cross-document edges need graph_extraction (a ChatProvider)")
        if not isinstance(self.store, GraphStore) or not isinstance(self.store, CrossDocumentPairer):
            return 0
        cancel = self.cancel_event if cancel is None else cancel
        candidates = self.store.similar_chunk_pairs(
            document_ids=document_ids, threshold=similarity_threshold, max_pairs=max_pairs_per_chunk
        )
        known = {c.id: c for p in candidates for c in (p.source, p.target)}
        pairs = [(p.source, p.target) for p in candidates]
        batches = cross_document_batches(pairs, batch_size=batch_size)
        found = extract_batch_edges(
            batches, chat, workers=g.graph_extraction_workers, cancel=cancel, logger=self.log, origin="cross_document"
        )
        edges = [e for e in found if known[e.source_id].document_id != known[e.target_id].document_id]
        edges = self._pruned(edges)
        if not edges:
            return 0
        stored = self.store.store_edges(edges)
        return stored - self._prune_stored(sorted({e.source_id for e in edges}), CROSS_DOCUMENT_ORIGINS)
