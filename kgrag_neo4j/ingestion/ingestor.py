"""The write path of seed 004: extract -> chunk -> embed in batches -> edges -> store, a
document with its chunks and edges in one transaction. Options keep the seed's names and
defaults.

Re-ingesting the same content (same source, same text, same chunking and embedder) is a
no-op decided before any embedding is computed; a changed document replaces the old one
atomically (``Store.store_document``). ``ingest_paths`` (``kgrag ingest FOLDER``) runs the same
pipeline over many files: content hashes checked a group at a time, many documents per
transaction (``store_documents``), the next batch embedded while the current one is written.
A single text or file is a batch of one.
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
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Literal, Mapping, Sequence

import numpy as np

from .. import ids
from ..errors import ConfigurationError, InputError, KgragError, NotFoundError, ProviderError, ProviderResponseError
from ..protocols import EmbeddingProvider, GraphStore, Store, embed_batched
from ..types import Chunk, ChunkEdge, Document, IngestResult
from .chunkers import Chunker, ChunkPiece, MarkdownChunker, RecursiveChunker
from .edges import IngestGraphOptions, build_document_edges, dedupe_edges, extract_llm_edges, prune_edges
from .extractors import ExtractorRegistry, decode_text, markdown_to_text
from .similarity import SimilarityLinker

__all__ = ["FileResult", "IngestOptions", "Ingestor", "STRATEGIES"]

log = logging.getLogger("kgrag_neo4j.ingest")

STRATEGIES = ("flat", "parent-child")
Progress = Callable[[str, Mapping[str, Any]], None]

#: files read and hash-checked together by ``ingest_paths`` (one read of the store each), up
#: to ``GROUP_BYTES`` characters of text
GROUP_FILES = 2_048
GROUP_BYTES = 32_000_000
#: chunks per write batch of ``ingest_paths``: one transaction each (``Store.store_documents``
#: splits further if it must); a document with more chunks is a batch of its own
BATCH_CHUNKS = 1_000
#: documents whose chunks ``build_edges`` reads (and whose edges it writes) at a time
EDGE_PAGE_DOCUMENTS = 200


@dataclass(slots=True)
class FileResult:
    """What ``Ingestor.ingest_paths`` did with one file: its ``result``, or the ``error`` that
    refused it (then nothing of it was written)."""

    path: str
    result: IngestResult | None = None
    error: KgragError | None = None

    @property
    def status(self) -> str:
        """new, unchanged or replaced; failed when there is an error."""
        return self.result.status if self.result is not None else "failed"


@dataclass(eq=False)
class _Doc:
    """One document on its way through the pipeline."""

    source: str = ""
    title: str = ""
    text: str = ""
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
    def failed(cls, error: KgragError) -> "_Doc":
        return cls(error=error)


def _chunks_of(docs: Sequence[_Doc]) -> int:
    return sum(len(d.chunks) for d in docs)


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
    """All vectors checked at once (numpy); the first bad one named as ``_check_vector`` does."""
    try:
        matrix = np.asarray(vectors, dtype=np.float64)
        good = matrix.ndim == 2 and matrix.shape[1] == dimensions and bool(np.isfinite(matrix).all())
    except (TypeError, ValueError):
        good = False
    if not good:
        return [_check_vector(v, dimensions, i) for i, v in enumerate(vectors)]
    return matrix.tolist()


class Ingestor:
    """Ingest text, files and streams into a ``Store``.

    ``Ingestor(store, embedder, options=IngestOptions(...))`` or keyword overrides of the
    options (``Ingestor(store, embedder, strategy="parent-child")``).
    """

    def __init__(
        self,
        store: Store,
        embedder: EmbeddingProvider,
        *,
        options: IngestOptions | None = None,
        logger: logging.Logger | None = None,
        **overrides: Any,
    ):
        base = options or IngestOptions()
        self.options = dataclasses.replace(base, **overrides) if overrides else base
        self.store = store
        self.embedder = embedder
        self.extractors = self.options.extractors or ExtractorRegistry.default()
        self.log = logger or log
        self._schema_checked = False
        self._fingerprints: dict[str, str] = {}
        self._default_chunkers: dict[str, Chunker] = {}

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
        return self._one(doc)

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
        content type comes from the extension unless given."""
        doc = self._load_file(path, content=content, content_type=content_type, source=source, title=title,
                              metadata=metadata)
        return self._one(doc)

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
        on_result: Callable[["FileResult"], None] | None = None,
    ) -> list["FileResult"]:
        """Ingest many files, many documents per transaction: what ``kgrag ingest FOLDER`` runs.

        Files are read and their content hashes checked against the store a group at a time
        (one read per ``GROUP_FILES`` files or ``GROUP_BYTES`` of text: unchanged files cost no
        chunking and no embedding); the changed ones are chunked, embedded and written in batches of about
        ``BATCH_CHUNKS`` chunks, one transaction each, while the next batch is embedded.
        Each document is still all or nothing, and a failing file (unreadable, empty, refused
        by the store) is reported in its ``FileResult`` without stopping the others; a lost
        connection to the database stops the run (it raises). ``on_result`` is called once
        per file, in the calling thread, as results come in (for progress).
        Returns one ``FileResult`` per path, in the order given."""
        items = [os.fspath(p) for p in paths]
        out = [FileResult(path=p) for p in items]
        self._ensure_schema()
        linker = self._linker(stored_outside=None)

        def finish(docs: Sequence[_Doc]) -> None:
            for d in docs:
                out[d.position] = FileResult(path=out[d.position].path, result=d.result, error=d.error)
                if on_result is not None:
                    on_result(out[d.position])

        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kgrag-ingest-writer") as writer:
            in_flight: tuple[Future, list[_Doc]] | None = None
            try:
                for group in self._groups(items, content_type):
                    docs = [d for d in group if d.error is None]
                    done = [d for d in group if d.error is not None] + self._skip_unchanged(docs)
                    finish(done)
                    for batch in self._batches([d for d in docs if d.result is None]):
                        ready = self._prepare(batch)  # while the previous batch is being written
                        prepared = {id(d) for d in ready}
                        finish([d for d in batch if id(d) not in prepared])
                        if in_flight is not None and linker is not None and \
                                _chunks_of(in_flight[1]) + _chunks_of(ready) > linker.window:
                            # chunks leaving the linker's window must be committed: the index
                            # answers for them from now on
                            finish(self._collect(in_flight))
                            in_flight = None
                        self._link(ready, linker)
                        if in_flight is not None:
                            finish(self._collect(in_flight))
                        in_flight = (writer.submit(self._write, ready), ready) if ready else None
                if in_flight is not None:
                    finish(self._collect(in_flight))
                    in_flight = None
            finally:
                if in_flight is not None:
                    in_flight[0].cancel()
        return out

    # -- the pipeline -------------------------------------------------------------------
    def _groups(self, paths: Sequence[str], content_type: str | None) -> Iterator[list["_Doc"]]:
        """The files read (or refused) in groups of ``GROUP_FILES`` or ``GROUP_BYTES`` of text."""
        group: list[_Doc] = []
        size = 0
        for position, path in enumerate(paths):
            try:
                doc = self._load_file(path, content_type=content_type)
            except KgragError as exc:
                doc = _Doc.failed(exc)
            doc.position = position
            group.append(doc)
            size += len(doc.text)
            if len(group) >= GROUP_FILES or size >= GROUP_BYTES:
                yield group
                group, size = [], 0
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
    ) -> "_Doc":
        if not source or not isinstance(source, str):
            raise InputError("source must be a non-empty string")
        namespace = getattr(self.store, "namespace", "default")
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
    ) -> "_Doc":
        name = os.fspath(path)
        ctype = content_type or self.extractors.content_type_for_path(name)
        if content is None:
            p = Path(path)
            try:
                size = p.stat().st_size
            except OSError as exc:
                raise InputError(f"cannot read {name}: {exc.strerror or exc}") from None
            if size > self.extractors.max_bytes:
                raise InputError(
                    f"{name} is {size} bytes, over the limit of {self.extractors.max_bytes} bytes"
                )
            try:
                content = p.read_bytes()
            except OSError as exc:
                raise InputError(f"cannot read {name}: {exc.strerror or exc}") from None
        raw = self.extractors.extract(content, content_type=ctype)
        if ctype == "text/markdown":
            # the Markdown chunker needs the headings: keep the source, strip per chunk
            raw = decode_text(content, what="Markdown")
        return self._identify(
            raw,
            source=source or name,
            title=title if title is not None else Path(name).name,
            metadata=metadata,
            content_type=ctype,
            document_id=None,
        )

    def _one(self, doc: "_Doc") -> IngestResult:
        """A single document through the same pipeline as a folder, in the calling thread."""
        self._ensure_schema()
        if not self._skip_unchanged([doc]):
            self._chunk_doc(doc)
            ready = self._prepare([doc])
            if ready:
                self._link(ready, self._linker(stored_outside=True))
                self._write(ready)
        if doc.error is not None:
            raise doc.error
        assert doc.result is not None
        return doc.result

    def _skip_unchanged(self, docs: Sequence["_Doc"]) -> list["_Doc"]:
        """Decide the documents whose stored content hash is theirs (one read for all); they
        get their result and are returned."""
        if not docs:
            return []
        states = getattr(self.store, "document_states", None)
        if states is not None:
            found = states([d.document_id for d in docs])
        else:
            stored = getattr(self.store, "document_state", None)
            found = {}
            for d in docs:
                h = stored(d.document_id) if stored is not None else None
                if h is not None:
                    found[d.document_id] = {"content_hash": h, "chunk_count": self._chunk_count(d.document_id)}
        unchanged = []
        for d in docs:
            state = found.get(d.document_id)
            if state is not None and state.get("content_hash") == d.digest:
                d.result = IngestResult(document_id=d.document_id, chunk_count=int(state.get("chunk_count") or 0),
                                        status="unchanged")
                unchanged.append(d)
        return unchanged

    def _batches(self, docs: Sequence["_Doc"]) -> Iterator[list["_Doc"]]:
        """Chunk the documents and cut them into write batches of about ``BATCH_CHUNKS`` chunks
        (a larger document alone). A document that cannot be chunked gets its error."""
        batch: list[_Doc] = []
        size = 0
        for d in docs:
            try:
                self._chunk_doc(d)
            except KgragError as exc:
                d.error = exc
                batch.append(d)  # reported with its batch
                continue
            n = len(d.chunks)
            if batch and size + n > BATCH_CHUNKS:
                yield batch
                batch, size = [], 0
            batch.append(d)
            size += n
        if batch:
            yield batch

    def _chunk_doc(self, d: "_Doc") -> None:
        plain = markdown_to_text(d.text) if d.content_type == "text/markdown" else d.text
        d.document = Document(
            id=d.document_id,
            source=d.source,
            title=d.title,
            content=plain,
            namespace=getattr(self.store, "namespace", "default"),
            content_hash=d.digest,
            created_at=int(time.time()),
            metadata=d.metadata,
        )
        d.chunks = self._chunk(d.document, d.text, d.content_type)
        if not any(c.content.strip() for c in d.chunks):
            raise InputError(f"{d.source} has no text to chunk")

    def _prepare(self, batch: Sequence["_Doc"]) -> list["_Doc"]:
        """Embed the batch's chunks (in ``batch_size`` calls across documents) and build each
        document's own edges (sequence, LLM). Returns the documents ready to link and write."""
        docs = [d for d in batch if d.error is None]
        if not docs:
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
        ready = [d for d in docs if d.error is None]
        g = self.options.graph
        if g.enabled and isinstance(self.store, GraphStore):  # seed: without GraphStore, no edges
            per_document = dataclasses.replace(g, similarity_edges=False)
            if per_document.enabled:
                for d in ready:
                    d.edges = build_document_edges(d.chunks, per_document, logger=self.log)
        return ready

    def _link(self, docs: Sequence["_Doc"], linker: "SimilarityLinker | None") -> None:
        """similar_to edges of the batch (exact within the run, the index for the rest), then
        each document's edges deduplicated and pruned together."""
        if linker is None or not docs:
            return
        g = self.options.graph
        embedded = [(d, c) for d in docs for c in d.chunks if c.embedding is not None]
        if not embedded:
            return
        owner = {c.id: d for d, c in embedded}
        found = linker.link([c.id for _, c in embedded], [c.embedding for _, c in embedded])  # type: ignore[misc]
        for e in found:
            owner[e.source_id].edges.append(e)
        for d in docs:
            d.edges = prune_edges(dedupe_edges(d.edges), min_weight=g.min_edge_weight,
                                  max_edges_per_chunk=g.max_edges_per_chunk)

    def _linker(self, *, stored_outside: bool | None) -> "SimilarityLinker | None":
        g = self.options.graph
        if not (g.similarity_edges and isinstance(self.store, GraphStore)):
            return None
        nearest = getattr(self.store, "nearest_chunks", None)
        if nearest is not None and stored_outside is None:
            has = getattr(self.store, "has_embedded_chunks", None)
            stored_outside = bool(has()) if has is not None else True
        return SimilarityLinker(
            top_k=g.similarity_top_k,
            threshold=g.similarity_threshold,
            nearest=(lambda ids, vectors: nearest(ids, vectors, top_k=g.similarity_top_k, threshold=g.similarity_threshold))
            if nearest is not None else None,
            stored_outside=bool(stored_outside),
        )

    def _write(self, docs: Sequence["_Doc"]) -> list["_Doc"]:
        """Write the documents (many per transaction when the store can); each gets its result
        or its error. A lost connection raises."""
        bulk = getattr(self.store, "store_documents", None)
        if bulk is not None:
            outcomes = bulk([(d.document, d.chunks, d.edges) for d in docs])
        else:
            outcomes = []
            for d in docs:
                try:
                    status = self.store.store_document(d.document, d.chunks)  # type: ignore[arg-type]
                    if status != "unchanged" and d.edges and isinstance(self.store, GraphStore):
                        self.store.store_edges(d.edges)
                    outcomes.append(status)
                except (InputError, NotFoundError) as exc:
                    outcomes.append(exc)
        for d, outcome in zip(docs, outcomes):
            if isinstance(outcome, Exception):
                d.error = outcome  # type: ignore[assignment]
                continue
            d.result = IngestResult(document_id=d.document_id, chunk_count=len(d.chunks), status=outcome,
                                    document=d.document, skipped=d.skipped)
            if outcome != "unchanged":
                d.result.edge_count = len(d.edges)
        return list(docs)

    @staticmethod
    def _collect(in_flight: tuple[Future, list["_Doc"]]) -> list["_Doc"]:
        """Wait for a batch being written; its documents, each with its result or error."""
        future, batch = in_flight
        future.result()
        return batch

    def _ensure_schema(self) -> None:
        if self._schema_checked:
            return
        ensure = getattr(self.store, "ensure_embedder", None)
        if ensure is not None:
            ensure(self.embedder.name, self.embedder.dimensions)
        self._schema_checked = True

    def _chunk_count(self, doc_id: str) -> int:
        count = getattr(self.store, "document_chunk_count", None)
        return count(doc_id) if count else 0

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

    def build_edges(self, document_ids: Sequence[str] | None = None) -> dict[str, int]:
        """(Re)build the edges the graph options ask for over stored documents (all of the
        namespace by default); idempotent, since edges are upserted. Returns counts.

        Documents are read ``EDGE_PAGE_DOCUMENTS`` at a time and each page's edges are written
        in one call. Similarity edges of a whole namespace that fits the linker's window are
        exact (numpy over every stored vector); otherwise the vector index finds them, one
        read per page."""
        lister = getattr(self.store, "list_document_chunks", None)
        if not isinstance(self.store, GraphStore) or lister is None:
            return {"documents": 0, "edges": 0, "cross_document": 0}
        everything = document_ids is None
        if document_ids is None:
            document_ids = [d.id for d in self.store.list_documents()]
        document_ids = list(dict.fromkeys(document_ids))
        g = self.options.graph
        per_document = dataclasses.replace(g, similarity_edges=False)
        many = getattr(self.store, "list_chunks_of_documents", None)

        def pages() -> Iterator[dict[str, list[Chunk]]]:
            for start in range(0, len(document_ids), EDGE_PAGE_DOCUMENTS):
                page = document_ids[start : start + EDGE_PAGE_DOCUMENTS]
                if many is not None:
                    yield many(page, with_embedding=g.similarity_edges)
                else:
                    yield {d: lister(d, with_embedding=g.similarity_edges) for d in page}

        linker = self._linker(stored_outside=True)
        source: Iterable[dict[str, list[Chunk]]] = pages()
        if linker is not None and everything:
            # a namespace that fits the window: every vector in memory, exact neighbours
            held = list(pages())
            embedded = [c for page in held for chunks in page.values() for c in chunks if c.embedding is not None]
            if len(embedded) <= linker.window:
                linker.stored_outside = False
                linker.preload([c.id for c in embedded], [c.embedding for c in embedded])  # type: ignore[misc]
            source = held
        total = 0
        for page in source:
            edges: list[ChunkEdge] = []
            for chunks in page.values():
                if per_document.enabled:
                    edges += build_document_edges(chunks, per_document, logger=self.log)
            if linker is not None:
                embedded = [c for chunks in page.values() for c in chunks if c.embedding is not None]
                edges += linker.link([c.id for c in embedded], [c.embedding for c in embedded], add=False)  # type: ignore[misc]
            edges = prune_edges(dedupe_edges(edges), min_weight=g.min_edge_weight, max_edges_per_chunk=g.max_edges_per_chunk)
            total += self.store.store_edges(edges) if edges else 0
        cross = 0
        if g.cross_document_edges:
            cross = self.extract_cross_document_edges(document_ids=document_ids)
        return {"documents": len(document_ids), "edges": total, "cross_document": cross}

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
        """Candidates by vector similarity across documents, relations from the LLM; returns
        the number of edges stored. Needs ``graph.graph_extraction`` and a GraphStore."""
        chat = self.options.graph.graph_extraction
        if chat is None:
            raise ConfigurationError("cross-document edges need graph_extraction (a ChatProvider)")
        if not isinstance(self.store, GraphStore) or not hasattr(self.store, "similar_chunk_pairs"):
            return 0
        pairs = self.store.similar_chunk_pairs(  # type: ignore[attr-defined]
            document_ids=document_ids, threshold=similarity_threshold, max_pairs=max_pairs_per_chunk
        )
        # one LLM call per source chunk and its candidates from other documents
        groups: dict[str, list[Chunk]] = {}
        document_of: dict[str, str] = {}
        for p in pairs:
            document_of[p["source_id"]] = p["source_document"]
            document_of[p["target_id"]] = p["target_document"]
            group = groups.setdefault(
                p["source_id"], [Chunk(id=p["source_id"], document_id=p["source_document"], content=p["source_content"])]
            )
            if len(group) < max(2, batch_size):
                group.append(Chunk(id=p["target_id"], document_id=p["target_document"], content=p["target_content"]))
        edges: list[ChunkEdge] = []
        for group in groups.values():
            if cancel is not None and cancel.is_set():
                break
            found = extract_llm_edges(group, chat, batch_size=len(group), workers=1, cancel=cancel, logger=self.log)
            edges += [
                dataclasses.replace(e, origin="cross_document")
                for e in found
                if document_of.get(e.source_id) != document_of.get(e.target_id)
            ]
        g = self.options.graph
        edges = prune_edges(dedupe_edges(edges), min_weight=g.min_edge_weight, max_edges_per_chunk=g.max_edges_per_chunk)
        return self.store.store_edges(edges) if edges else 0

