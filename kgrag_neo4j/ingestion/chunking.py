"""A document cut into chunks under the ingest options' strategy.

``flat``: one chunker over the text (Markdown keeps its headings for the Markdown chunker);
``parent-child``: parents cut from the document's content, each cut again into children that
are embedded and searched, the parents stored bare for context.
"""

from __future__ import annotations

import time

from .. import ids
from ..errors import InputError
from ..options import IngestOptions
from ..types import PENDING_HASH_SUFFIX, Chunk, Document
from .chunkers import Chunker, ChunkPiece, MarkdownChunker, RecursiveChunker
from .document import IngestDocument
from .extractors.markdown import markdown_to_text

__all__ = ["DocumentChunker", "run_time"]


def run_time() -> int:
    """The time every document of one ingest run is stamped with (``created_at``, whole
    seconds). Why one for the run: an entity's description is its earliest mention's, in
    the order of ``created_at`` and then document id; a clock read per document would let a
    second boundary falling between two documents decide it, so the same files ingested
    twice could be described differently."""
    return int(time.time())


class DocumentChunker:
    """Makes a document's ``Document`` record and its chunks (the default chunkers are made
    once and reused)."""

    def __init__(self, options: IngestOptions) -> None:
        self.options = options
        self._default_chunkers: dict[str, Chunker] = {}

    def chunk_document(self, d: IngestDocument, *, namespace: str, pending: bool, created_at: int) -> None:
        """Set ``d.document`` and ``d.chunks``; ``pending``: the document is stored with a
        pending content hash (see below); ``created_at``: the start of the run that ingests
        it (``run_time``). A document with no text to chunk is refused."""
        plain = d.text
        if d.content_type == "text/markdown":
            plain = d.plain if d.plain is not None else markdown_to_text(d.text)
        d.document = Document(
            id=d.document_id,
            source=d.source,
            title=d.title,
            content=plain,
            namespace=namespace,
            # Why pending: cross-document edges need the committed vector index, so they follow
            # the document's transaction; until they are done the document carries a hash that
            # never equals the real one, and a re-run after a crash redoes them
            content_hash=d.digest + PENDING_HASH_SUFFIX if pending else d.digest,
            created_at=created_at,
            metadata=d.metadata,
        )
        d.chunks = self._chunk(d.document, d.text, d.content_type)
        if not any(c.content.strip() for c in d.chunks):
            raise InputError(f"{d.source} has no text to chunk")

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
            return [_make_chunk(document, "flat", i, p) for i, p in enumerate(pieces) if p.content.strip()]
        parent_chunker = o.parent_chunker or RecursiveChunker(max_tokens=o.parent_tokens)
        child_chunker = o.child_chunker or RecursiveChunker(
            max_tokens=o.child_tokens, overlap_tokens=min(50, o.child_tokens // 4)
        )
        out: list[Chunk] = []
        child_index = 0
        for p_index, parent_piece in enumerate(parent_chunker.chunk(document.content)):
            if not parent_piece.content.strip():
                continue
            parent = _make_chunk(document, "parent", p_index, parent_piece)
            out.append(parent)
            for child_piece in child_chunker.chunk(parent_piece.content):
                if not child_piece.content.strip():
                    continue
                child = _make_chunk(document, "child", child_index, child_piece, parent_id=parent.id)
                child.metadata = {**parent_piece.metadata, **child.metadata}
                out.append(child)
                child_index += 1
        return out


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
