"""The write path of seed 004: extract -> chunk -> embed in batches -> store in one
transaction -> (optionally) edges. Options keep the seed's names and defaults.

Re-ingesting the same content (same source, same text, same chunking and embedder) is a
no-op decided before any embedding is computed; a changed document replaces the old one
atomically (``Store.store_document``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import logging
import math
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Callable, Literal, Mapping, Sequence

from .. import ids
from ..errors import (
    Cancelled,
    ConfigurationError,
    InputError,
    KgragError,
    ProviderError,
    ProviderResponseError,
    SchemaNotReady,
)
from ..protocols import EmbeddingProvider, GraphStore, Store, embed_batched
from ..tracing import TracerOption, check_tracer, span
from ..types import PENDING_HASH_SUFFIX, Chunk, ChunkEdge, Document, IngestResult
from .chunkers import Chunker, ChunkPiece, MarkdownChunker, RecursiveChunker
from .edges import (
    IngestGraphOptions,
    build_document_edges,
    cross_document_batches,
    dedupe_edges,
    edges_to_prune,
    extract_batch_edges,
    prune_edges,
)
from .extractors import ExtractorRegistry, decode_text, markdown_to_text
from .files import read_regular_file

__all__ = ["FileResult", "IngestOptions", "Ingestor", "STRATEGIES"]

log = logging.getLogger("kgrag_neo4j.ingest")

STRATEGIES = ("flat", "parent-child")
Progress = Callable[[str, Mapping[str, Any]], None]


@dataclass(frozen=True, kw_only=True)
class IngestOptions:
    """Seed 004 options (defaults in brackets).

    - ``strategy`` ["flat"] or "parent-child";
    - ``chunker`` [RecursiveChunker(512, 50); MarkdownChunker for Markdown] for flat;
    - ``parent_chunker`` / ``child_chunker`` [RecursiveChunker(parent_tokens / child_tokens)];
    - ``parent_tokens`` [1024], ``child_tokens`` [256];
    - ``batch_size`` [64] chunks per ``embed`` call;
    - ``extractors`` [ExtractorRegistry.default()];
    - ``graph`` [no edges]: the seed's graph ingestion options (sequence, LLM, similarity,
      pruning). ``similarity_edges`` runs in the database with the vector index, so a new
      chunk is linked to its nearest chunks across the whole namespace, not only its document;
    - ``embedding_failure`` ["raise"]: what a failing embedder does to the document: "raise"
      stores nothing; "store_unembedded" stores the chunks without vectors (found by keyword
      search only) and reports it in ``IngestResult.skipped``.
    """

    strategy: Literal["flat", "parent-child"] = "flat"
    chunker: Chunker | None = None
    parent_chunker: Chunker | None = None
    child_chunker: Chunker | None = None
    parent_tokens: int = 1024
    child_tokens: int = 256
    batch_size: int = 64
    extractors: ExtractorRegistry | None = None
    graph: IngestGraphOptions = field(default_factory=IngestGraphOptions)
    embedding_failure: Literal["raise", "store_unembedded"] = "raise"

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ConfigurationError(f"strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        for name in ("parent_tokens", "child_tokens", "batch_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"{name} must be a positive integer, got {value!r}")
        if self.child_tokens >= self.parent_tokens:
            raise ConfigurationError("child_tokens must be smaller than parent_tokens")
        if self.embedding_failure not in ("raise", "store_unembedded"):
            raise ConfigurationError("embedding_failure must be 'raise' or 'store_unembedded'")

    def fingerprint(self, content_type: str, embedder_name: str) -> str:
        """What decides the chunks and vectors: a change here makes a re-ingest re-chunk."""
        parts = [
            self.strategy,
            repr(self.chunker or ("markdown" if content_type == "text/markdown" else "recursive")),
            repr(self.parent_chunker),
            repr(self.child_chunker),
            str(self.parent_tokens),
            str(self.child_tokens),
            embedder_name,
        ]
        return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=8).hexdigest()


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


#: edge origins one ingest run of a document writes (pruned together)
DOCUMENT_ORIGINS = frozenset({"sequence", "llm", "similarity"})
#: edge origins one cross-document run writes (pruned together)
CROSS_DOCUMENT_ORIGINS = frozenset({"cross_document"})


@dataclass(frozen=True, slots=True)
class FileResult:
    """What happened to one path of ``aingest_paths``: its ``IngestResult``, or the error
    that stopped it (the other paths go on)."""

    path: str
    result: IngestResult | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class Ingestor:
    """Ingest text, files and streams into a ``Store``.

    ``Ingestor(store, embedder, options=IngestOptions(...))`` or keyword overrides of the
    options (``Ingestor(store, embedder, strategy="parent-child")``).

    ``tracer``: every document ingested is an ``ingest.document`` span
    (:mod:`kgrag_neo4j.tracing`: OpenTelemetry, or a callable). ``cancel``: a
    ``threading.Event`` (one is made when not given; ``cancel()`` sets it). Once it is set,
    a document not yet written is not written (``Cancelled``), model calls not yet sent are
    not sent (the document is kept with the edges found so far, ``IngestResult.cancelled``),
    and ``build_edges`` stops before the next document. ``reset_cancel()`` clears it.
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
        base = options or IngestOptions()
        self.options = dataclasses.replace(base, **overrides) if overrides else base
        self.store = store
        self.embedder = embedder
        self.extractors = self.options.extractors or ExtractorRegistry.default()
        self.log = logger or log
        self.tracer = check_tracer(tracer)
        if cancel is not None and not callable(getattr(cancel, "is_set", None)):
            raise ConfigurationError("cancel must be a threading.Event (or anything with is_set() and set())")
        self.cancel_event = cancel if cancel is not None else threading.Event()
        self._schema_checked = False

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
        return self._ingest(text, source=source, title=title, metadata=metadata, content_type=content_type, document_id=document_id)

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
        name = os.fsdecode(path)
        ctype = content_type or self.extractors.content_type_for_path(name)
        if content is None:
            content = read_regular_file(path, max_bytes=self.extractors.max_bytes)
            if source is None:
                source = str(Path(name).resolve())
        if source is None:
            source = name
        if not _is_utf8(source):
            raise InputError(
                f"the file name {_shown(name)} is not valid UTF-8, so it cannot name the document; "
                "rename the file or give the document a source (--source)"
            )
        raw = self.extractors.extract(content, content_type=ctype)
        if ctype == "text/markdown":
            # the Markdown chunker needs the headings: keep the source, strip per chunk
            raw = decode_text(content, what="Markdown")
        return self._ingest(
            raw,
            source=source,
            title=title if title is not None else _shown(Path(name).name),
            metadata=metadata,
            content_type=ctype,
            document_id=None,
        )

    async def aingest_paths(
        self, paths: Sequence[str | os.PathLike[str]], *, content_type: str | None = None
    ) -> list[FileResult]:
        """Ingest files, folders (recursive) and globs without blocking the event loop: each
        file is extracted, chunked, embedded and written in a worker thread, one after the
        other (writes are transactions on the sync driver; the loop stays free meanwhile).
        A file that fails is reported in its ``FileResult`` and the others go on; what the
        selection skips (FIFOs, devices, symlinks leaving a folder: ``files.select_files``) is
        reported too. An error no later file can escape (the database unreachable after its
        retries, credentials refused: ``batch.ends_run``) stops the run, and the files not
        attempted are reported as such. Cancelling the task cancels the ingestor
        (``cancel()``: the file in progress is not written) and stops; ``reset_cancel()``
        makes it usable again."""
        import asyncio

        from .batch import ends_run
        from .files import select_files

        if isinstance(paths, (str, os.PathLike)):
            raise InputError("aingest_paths takes a list of paths, not one path")
        selection = select_files([os.fspath(p) for p in paths], extensions=self.extractors.extensions)
        out = [FileResult(os.fsdecode(s.path), error=f"skipped: {s.reason}") for s in selection.skipped]
        files = selection.files
        for i, path in enumerate(files):
            try:
                result = await asyncio.to_thread(self.ingest_file, path, content_type=content_type)
            except asyncio.CancelledError:
                self.cancel_event.set()  # the file in its thread stops as cancel() would stop it
                raise
            except Cancelled:
                raise
            except KgragError as exc:
                out.append(FileResult(str(path), error=f"{type(exc).__name__}: {exc}"))
                if ends_run(exc):
                    reason = f"not attempted: the run stopped at {type(exc).__name__}"
                    out.extend(FileResult(str(rest), error=reason) for rest in files[i + 1 :])
                    break
                continue
            out.append(FileResult(str(path), result=result))
        return out

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

    # -- the pipeline -------------------------------------------------------------------
    def _ingest(
        self,
        text: str,
        *,
        source: str,
        title: str,
        metadata: Mapping[str, Any] | None,
        content_type: str,
        document_id: str | None,
    ) -> IngestResult:
        attributes = {"source": source, "content_type": content_type, "strategy": self.options.strategy}
        with span(self.tracer, "ingest.document", attributes) as sp:
            result = self._ingest_document(
                text, source=source, title=title, metadata=metadata, content_type=content_type, document_id=document_id
            )
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

    def _ingest_document(
        self,
        text: str,
        *,
        source: str,
        title: str,
        metadata: Mapping[str, Any] | None,
        content_type: str,
        document_id: str | None,
    ) -> IngestResult:
        if not source or not isinstance(source, str):
            raise InputError("source must be a non-empty string")
        self._stop_if_cancelled(source)
        for what, value in (("source", source), ("title", title), ("text", text)):
            if not _is_utf8(value):  # a lone surrogate: nothing can store or hash it
                raise InputError(f"the {what} of {_shown(source)} is not valid Unicode text")
        namespace = getattr(self.store, "namespace", "default")
        doc_id = document_id or ids.document_id(namespace, source)
        fingerprint = self.options.fingerprint(content_type, self.embedder.name)
        digest = ids.content_hash(fingerprint + "\x1f" + text)
        self._check_schema()
        if self._stored_hash(doc_id) == digest:
            chunk_count = self._chunk_count(doc_id)
            return IngestResult(document_id=doc_id, chunk_count=chunk_count, status="unchanged")
        plain = markdown_to_text(text) if content_type == "text/markdown" else text
        document = Document(
            id=doc_id,
            source=source,
            title=title,
            content=plain,
            namespace=namespace,
            content_hash=digest,
            created_at=int(time.time()),
            metadata=dict(metadata or {}),
        )
        chunks = self._chunk(document, text, content_type)
        if not any(c.content.strip() for c in chunks):
            raise InputError(f"{source} has no text to chunk")
        skipped = self._embed(chunks)
        # Why here: the first write records the embedder for the namespace (and, on an empty
        # database, its dimensions); an embedder that failed must not bind the namespace to itself
        self._ensure_schema()
        if not getattr(self.store, "atomic_document_edges", False):
            self._stop_if_cancelled(source)
            status = self.store.store_document(document, chunks)
            result = IngestResult(
                document_id=doc_id, chunk_count=len(chunks), status=status, document=document, skipped=skipped
            )
            if status != "unchanged":
                result.edge_count = self._edges(chunks)
                result.edge_count += self._cross_document_at_ingest(doc_id)
            result.cancelled = self.cancel_event.is_set()
            return result
        # Why: the document's own edges go into its transaction, and the database-side
        # similarity edges (which need the committed vector index) and cross-document edges
        # follow under a pending hash. A crash anywhere leaves either a whole document or one
        # that a re-run of the same ingest redoes (the pending hash never equals the real one).
        self._stop_if_cancelled(source)
        edges = self._document_edges(chunks)  # a cancel from here on keeps the document
        similarity = self._similarity_after_commit()
        post_commit = similarity or self._cross_document_wanted()
        stored_doc = dataclasses.replace(document, content_hash=digest + PENDING_HASH_SUFFIX) if post_commit else document
        status = self.store.store_document(stored_doc, chunks, edges=edges)  # type: ignore[call-arg]
        result = IngestResult(
            document_id=doc_id, chunk_count=len(chunks), status=status, document=document, skipped=skipped
        )
        if status != "unchanged":
            result.edge_count = len(edges)
        if post_commit:
            # also after "unchanged": the stored hash was then this very pending one, left by a
            # run that died before this step (which is idempotent)
            g = self.options.graph
            if similarity:
                result.edge_count += self.store.build_similarity_edges(  # type: ignore[attr-defined]
                    [c.id for c in chunks if c.embedding is not None],
                    top_k=g.similarity_top_k,
                    threshold=g.similarity_threshold,
                )
                result.edge_count -= self._prune_stored([c.id for c in chunks], DOCUMENT_ORIGINS)
            result.edge_count += self._cross_document_at_ingest(doc_id)
            self.store.complete_document(  # type: ignore[attr-defined]
                doc_id, pending_hash=stored_doc.content_hash, content_hash=digest
            )
        result.cancelled = self.cancel_event.is_set()
        return result

    def _document_edges(self, chunks: list[Chunk]) -> list[ChunkEdge]:
        """The per-document edges (sequence, LLM), computed before the document is written."""
        g = self.options.graph
        if not g.enabled or not isinstance(self.store, GraphStore):
            return []  # seed: a store without GraphStore skips graph extraction silently
        per_document = dataclasses.replace(g, similarity_edges=False, cross_document_edges=False)
        if not per_document.enabled:
            return []
        return build_document_edges(chunks, per_document, cancel=self.cancel_event, logger=self.log)

    def _cross_document_wanted(self) -> bool:
        g = self.options.graph
        return (
            g.cross_document_edges
            and g.graph_extraction is not None
            and isinstance(self.store, GraphStore)
            and hasattr(self.store, "similar_chunk_pairs")
        )

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
        writes (``origins``): the database adds similarity edges itself, and a chunk must not
        keep more than ``max_edges_per_chunk`` of the run's edges whatever their source.
        Returns how many were deleted."""
        g = self.options.graph
        delete = getattr(self.store, "delete_edges", None)
        if not g.prunes or delete is None or not chunk_ids or not isinstance(self.store, GraphStore):
            return 0
        stored = [e for e in self.store.get_edges(list(chunk_ids)) if e.origin in origins]
        doomed = edges_to_prune(stored, min_weight=g.min_edge_weight, max_edges_per_chunk=g.max_edges_per_chunk)
        return int(delete(doomed)) if doomed else 0

    def _similarity_after_commit(self) -> bool:
        g = self.options.graph
        return (
            g.similarity_edges
            and isinstance(self.store, GraphStore)
            and hasattr(self.store, "build_similarity_edges")
            and hasattr(self.store, "complete_document")
        )

    def _check_schema(self) -> None:
        """Refuse an embedder the namespace cannot take before any work is done (reads only)."""
        if self._schema_checked:
            return
        check = getattr(self.store, "check_embedder", None)
        if check is None:
            return
        try:
            check(self.embedder.name, self.embedder.dimensions)
        except SchemaNotReady:
            pass  # an empty database: the first write creates the schema

    def _ensure_schema(self) -> None:
        if self._schema_checked:
            return
        ensure = getattr(self.store, "ensure_embedder", None)
        if ensure is not None:
            ensure(self.embedder.name, self.embedder.dimensions)
        self._schema_checked = True

    def _stored_hash(self, doc_id: str) -> str | None:
        state = getattr(self.store, "document_state", None)
        if state is None:
            return None
        return state(doc_id)

    def _chunk_count(self, doc_id: str) -> int:
        count = getattr(self.store, "document_chunk_count", None)
        return count(doc_id) if count else 0

    def _flat_chunker(self, content_type: str) -> Chunker:
        if self.options.chunker is not None:
            return self.options.chunker
        if content_type == "text/markdown":
            return MarkdownChunker(max_tokens=512)
        return RecursiveChunker()

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

    def _embed(self, chunks: list[Chunk]) -> list[str]:
        """Embed every chunk but parents (parent-child strategy stores parents bare)."""
        parent_ids = {c.parent_id for c in chunks if c.parent_id}
        targets = [c for c in chunks if c.id not in parent_ids]
        try:
            try:
                vectors = list(
                    embed_batched(
                        self.embedder, [c.content for c in targets], batch_size=self.options.batch_size, input_type="document"
                    )
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
            vectors = [_check_vector(v, self.embedder.dimensions, i) for i, v in enumerate(vectors)]
        except KgragError as exc:
            if self.options.embedding_failure == "raise" or not isinstance(exc, ProviderError):
                raise
            self.log.warning("embedding failed; storing %d chunks without vectors: %s", len(targets), exc)
            return [f"embedding failed: {exc}"]
        for c, v in zip(targets, vectors):
            c.embedding = list(v)
        return []

    def _edges(self, chunks: list[Chunk]) -> int:
        g = self.options.graph
        if not g.enabled or not isinstance(self.store, GraphStore):
            return 0  # seed: a store without GraphStore skips graph extraction silently
        edges = self._document_edges(chunks)
        stored = self.store.store_edges(edges) if edges else 0
        if g.similarity_edges and hasattr(self.store, "build_similarity_edges"):
            embedded = [c.id for c in chunks if c.embedding is not None]
            stored += self.store.build_similarity_edges(  # type: ignore[attr-defined]
                embedded, top_k=g.similarity_top_k, threshold=g.similarity_threshold
            )
            stored -= self._prune_stored([c.id for c in chunks], DOCUMENT_ORIGINS)
        return stored

    def build_edges(self, document_ids: Sequence[str] | None = None) -> dict[str, int]:
        """(Re)build the edges the graph options ask for over stored documents (all of the
        namespace by default); idempotent, since edges are upserted. Returns counts. Stops
        before the next document once cancelled (``cancelled`` in the counts)."""
        lister = getattr(self.store, "list_document_chunks", None)
        if not isinstance(self.store, GraphStore) or lister is None:
            return {"documents": 0, "edges": 0, "cross_document": 0, "cancelled": False}
        if document_ids is None:
            document_ids = [d.id for d in self.store.list_documents()]
        total = 0
        done = 0
        for doc_id in document_ids:
            if self.cancel_event.is_set():
                break
            total += self._edges(lister(doc_id, with_embedding=True))
            done += 1
        cross = 0
        if self.options.graph.cross_document_edges and not self.cancel_event.is_set():
            g = self.options.graph
            cross = self.extract_cross_document_edges(
                similarity_threshold=g.cross_document_threshold,
                max_pairs_per_chunk=g.cross_document_max_pairs,
                batch_size=g.cross_document_batch_size,
                document_ids=document_ids,
            )
        return {"documents": done, "edges": total, "cross_document": cross, "cancelled": self.cancel_event.is_set()}

    # -- cross-document edges (seed 000) ------------------------------------------------
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
        if not isinstance(self.store, GraphStore) or not hasattr(self.store, "similar_chunk_pairs"):
            return 0
        cancel = self.cancel_event if cancel is None else cancel
        rows = self.store.similar_chunk_pairs(  # type: ignore[attr-defined]
            document_ids=document_ids, threshold=similarity_threshold, max_pairs=max_pairs_per_chunk
        )
        known: dict[str, Chunk] = {}

        def chunk(chunk_id: str, document_id: str, content: str) -> Chunk:
            return known.setdefault(chunk_id, Chunk(id=chunk_id, document_id=document_id, content=content))

        pairs = [
            (chunk(r["source_id"], r["source_document"], r["source_content"]),
             chunk(r["target_id"], r["target_document"], r["target_content"]))
            for r in rows
        ]
        batches = cross_document_batches(pairs, batch_size=batch_size)
        found = extract_batch_edges(
            batches, chat, workers=g.graph_extraction_workers, cancel=cancel, logger=self.log, origin="cross_document"
        )
        edges = [e for e in found if known[e.source_id].document_id != known[e.target_id].document_id]
        edges = prune_edges(dedupe_edges(edges), min_weight=g.min_edge_weight, max_edges_per_chunk=g.max_edges_per_chunk)
        if not edges:
            return 0
        stored = self.store.store_edges(edges)
        return stored - self._prune_stored(sorted({e.source_id for e in edges}), CROSS_DOCUMENT_ORIGINS)
