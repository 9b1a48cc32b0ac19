"""One document on its way through the ingest: what is known of it at each step.

Made where its text is read (``Ingestor``), chunked, embedded and linked
(``writing.DocumentWriter``, ``chunk_edges.ChunkEdgeBuilder``), batched with others
(``pipeline.FolderPipeline``), and left with its result or the error that refused it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import Cancelled, KgragError
from ..types import Chunk, ChunkEdge, Document, IngestResult

__all__ = ["IngestDocument", "chunks_of", "mark_cancelled", "stop_if_cancelled"]


@dataclass(eq=False)
class IngestDocument:
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
    #: its place among the paths of a folder ingest (results are returned in that order)
    position: int = 0
    document: Document | None = None
    chunks: list[Chunk] = field(default_factory=list)
    edges: list[ChunkEdge] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    result: IngestResult | None = None
    error: KgragError | None = None

    @classmethod
    def failed(cls, error: KgragError) -> IngestDocument:
        return cls(error=error)


def chunks_of(docs: Sequence[IngestDocument]) -> int:
    return sum(len(d.chunks) for d in docs)


def mark_cancelled(docs: list[IngestDocument]) -> list[IngestDocument]:
    """Give each document still without an error ``Cancelled``; returns them."""
    for d in docs:
        if d.error is None:
            d.error = Cancelled(f"ingest of {d.source} cancelled; nothing of it was written")
    return docs


def stop_if_cancelled(cancel: threading.Event, what: str) -> None:
    if cancel.is_set():
        raise Cancelled(f"ingest of {what} cancelled; nothing of it was written")
