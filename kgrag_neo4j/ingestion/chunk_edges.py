"""Chunk edges built for an ingest and over stored documents: a document's own edges
(sequence, LLM), similarity edges across the run and the namespace, cross-document LLM
edges, each set deduplicated and pruned by the graph options.

The edge algorithms live in ``edges.py`` (text edges, LLM extraction, pruning) and
``similarity.py`` (the linker); this module applies them to documents and the store.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator, Sequence

from ..errors import ConfigurationError
from ..options import IngestGraphOptions
from ..types import Chunk, ChunkEdge
from .capabilities import StoreCapabilities
from .document import IngestDocument
from .edges import (
    build_text_edges,
    cross_document_batches,
    dedupe_edges,
    edges_to_prune,
    extract_batch_edges,
    prune_edges,
)
from .similarity import WINDOW_CHUNKS, SimilarityLinker

__all__ = ["CROSS_DOCUMENT_ORIGINS", "DOCUMENT_ORIGINS", "EDGE_PAGE_DOCUMENTS", "ChunkEdgeBuilder"]

#: documents whose chunks ``build`` reads (and whose edges it writes) at a time
EDGE_PAGE_DOCUMENTS = 200
#: edge origins one ingest run of a document writes (pruned together)
DOCUMENT_ORIGINS = frozenset({"sequence", "llm", "similarity"})
#: edge origins one cross-document run writes (pruned together)
CROSS_DOCUMENT_ORIGINS = frozenset({"cross_document"})


class ChunkEdgeBuilder:
    """The edges the graph options ask for, over the store's capabilities; ``cancel`` stops
    model calls not yet sent and edge building before the next page of documents."""

    def __init__(
        self, capabilities: StoreCapabilities, graph: IngestGraphOptions, *, cancel: threading.Event, log: logging.Logger
    ) -> None:
        self.caps = capabilities
        self.graph = graph
        self.cancel = cancel
        self.log = log
        c = capabilities
        #: cross-document edges follow each document's transaction
        self.cross_document = bool(
            graph.cross_document_edges and graph.graph_extraction is not None and c.graph is not None and c.pairer is not None
        )
        #: documents are written with a pending hash, completed after their cross-document edges
        self.pending_hash = self.cross_document and c.completer is not None
        #: a document's own edges are built as it is written (without a GraphStore, no edges)
        self.text_edges_wanted = bool(graph.text_edges and c.graph is not None)

    # -- pruning --------------------------------------------------------------------------
    def pruned(self, edges: Sequence[ChunkEdge]) -> list[ChunkEdge]:
        g = self.graph
        return prune_edges(dedupe_edges(edges), min_weight=g.min_edge_weight, max_edges_per_chunk=g.max_edges_per_chunk)

    def prune_stored(self, chunk_ids: Sequence[str], origins: frozenset[str]) -> int:
        """Apply the pruning rule to the stored outgoing edges of ``chunk_ids`` that one run
        writes (``origins``): edges stored by an earlier run (an ingest's LLM edges, say)
        count against ``max_edges_per_chunk`` too, whatever their source. Returns how many
        were deleted."""
        g = self.graph
        graph, deleter = self.caps.graph, self.caps.edge_deleter
        if not g.prunes or not chunk_ids or graph is None or deleter is None:
            return 0
        stored = [e for e in graph.get_edges(list(chunk_ids)) if e.origin in origins]
        doomed = edges_to_prune(stored, min_weight=g.min_edge_weight, max_edges_per_chunk=g.max_edges_per_chunk)
        return int(deleter.delete_edges(doomed)) if doomed else 0

    # -- a document's own edges and similarity ---------------------------------------------
    def text_edges(self, chunks: Sequence[Chunk]) -> list[ChunkEdge]:
        """Sequence and LLM edges within one document's chunks, pruned."""
        return self.pruned(build_text_edges(chunks, self.graph, cancel=self.cancel, logger=self.log))

    def linker(self, *, stored_outside: bool | None) -> SimilarityLinker | None:
        """The similarity linker of a run, None when no similarity edges are wanted.
        ``stored_outside`` None: ask the store whether it holds embedded chunks (and when it
        holds few, link against them in memory)."""
        g = self.graph
        if not (g.similarity_edges and self.caps.graph is not None):
            return None
        finder = self.caps.nearest
        stored: tuple[list[str], list[list[float]], list[str]] | None = None
        if finder is not None and stored_outside is None:
            stored_outside = finder.has_embedded_chunks()
            if stored_outside:
                stored = self._stored_vectors(WINDOW_CHUNKS // 2)
        linker = SimilarityLinker(
            top_k=g.similarity_top_k,
            threshold=g.similarity_threshold,
            nearest=(
                lambda ids, vectors: finder.nearest_chunks(
                    ids, vectors, top_k=g.similarity_top_k, threshold=g.similarity_threshold
                )
            )
            if finder is not None
            else None,
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
        pager = self.caps.chunk_pager
        if pager is None:
            return None
        documents = [d.id for d in self.caps.store.list_documents(limit=most + 1)]
        if len(documents) > most:
            return None
        ids: list[str] = []
        vectors: list[list[float]] = []
        owners: list[str] = []
        for start in range(0, len(documents), EDGE_PAGE_DOCUMENTS):
            page = pager.list_chunks_of_documents(documents[start : start + EDGE_PAGE_DOCUMENTS], with_embedding=True)
            for document_id, chunks in page.items():
                for c in chunks:
                    if c.embedding is not None:
                        ids.append(c.id)
                        vectors.append(c.embedding)
                        owners.append(document_id)
            if len(ids) > most:
                return None
        return (ids, vectors, owners) if ids else None

    def link(self, docs: Sequence[IngestDocument], linker: SimilarityLinker | None) -> None:
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
            d.edges = self.pruned(d.edges)

    # -- over stored documents -------------------------------------------------------------
    def build(self, document_ids: Sequence[str] | None = None) -> dict[str, int]:
        """``Ingestor.build_edges``: (re)build the edges of stored documents, a page of
        ``EDGE_PAGE_DOCUMENTS`` at a time; similarity edges of a whole namespace that fits
        the linker's window are exact (numpy over every stored vector), otherwise the vector
        index finds them, one read per page."""
        graph, lister = self.caps.graph, self.caps.chunk_lister
        if graph is None or lister is None:
            return {"documents": 0, "edges": 0, "cross_document": 0, "cancelled": False}
        everything = document_ids is None
        if document_ids is None:
            document_ids = [d.id for d in self.caps.store.list_documents()]
        wanted = list(dict.fromkeys(document_ids))
        g = self.graph
        many = self.caps.chunk_pager.list_chunks_of_documents if self.caps.chunk_pager is not None else None

        def pages() -> Iterator[dict[str, list[Chunk]]]:
            for start in range(0, len(wanted), EDGE_PAGE_DOCUMENTS):
                page = wanted[start : start + EDGE_PAGE_DOCUMENTS]
                if many is not None:
                    yield many(page, with_embedding=g.similarity_edges)
                else:
                    yield {d: lister.list_document_chunks(d, with_embedding=g.similarity_edges) for d in page}

        linker = self.linker(stored_outside=True)
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
            if self.cancel.is_set():
                break
            edges: list[ChunkEdge] = []
            for chunks in page.values():
                if g.text_edges:
                    edges += self.text_edges(chunks)
            if linker is not None:
                embedded = [c for chunks in page.values() for c in chunks if c.embedding is not None]
                edges += linker.link(
                    [c.id for c in embedded], [c.embedding for c in embedded if c.embedding is not None], add=False
                )
            edges = self.pruned(edges)
            total += graph.store_edges(edges) if edges else 0
            if linker is not None:
                # edges an earlier run stored on these chunks count against the cap too
                total -= self.prune_stored([c.id for chunks in page.values() for c in chunks], DOCUMENT_ORIGINS)
            done += len(page)
        cross = 0
        if g.cross_document_edges and not self.cancel.is_set():
            cross = self.cross_document_edges(
                similarity_threshold=g.cross_document_threshold,
                max_pairs_per_chunk=g.cross_document_max_pairs,
                batch_size=g.cross_document_batch_size,
                document_ids=wanted,
            )
        return {"documents": done, "edges": total, "cross_document": cross, "cancelled": self.cancel.is_set()}

    # -- cross-document edges --------------------------------------------------------------
    def at_ingest(self, document_id: str) -> int:
        """Cross-document edges from a document just written to the others (when wanted)."""
        if not self.cross_document or self.cancel.is_set():
            return 0
        g = self.graph
        return self.cross_document_edges(
            similarity_threshold=g.cross_document_threshold,
            max_pairs_per_chunk=g.cross_document_max_pairs,
            batch_size=g.cross_document_batch_size,
            document_ids=[document_id],
        )

    def cross_document_edges(
        self,
        *,
        similarity_threshold: float,
        max_pairs_per_chunk: int,
        batch_size: int,
        document_ids: Sequence[str] | None,
        cancel: threading.Event | None = None,
    ) -> int:
        """``Ingestor.extract_cross_document_edges``: candidate pairs from the store, relations
        from the LLM, only edges between chunks of different documents kept, deduplicated
        and pruned. Returns the number of edges stored."""
        g = self.graph
        chat = g.graph_extraction
        if chat is None:
            raise ConfigurationError("cross-document edges need graph_extraction (a ChatProvider)")
        graph, pairer = self.caps.graph, self.caps.pairer
        if graph is None or pairer is None:
            return 0
        cancel = self.cancel if cancel is None else cancel
        candidates = pairer.similar_chunk_pairs(
            document_ids=document_ids, threshold=similarity_threshold, max_pairs=max_pairs_per_chunk
        )
        known = {c.id: c for p in candidates for c in (p.source, p.target)}
        pairs = [(p.source, p.target) for p in candidates]
        batches = cross_document_batches(pairs, batch_size=batch_size)
        found = extract_batch_edges(
            batches, chat, workers=g.graph_extraction_workers, cancel=cancel, logger=self.log, origin="cross_document"
        )
        edges = [e for e in found if known[e.source_id].document_id != known[e.target_id].document_id]
        edges = self.pruned(edges)
        if not edges:
            return 0
        stored = graph.store_edges(edges)
        return stored - self.prune_stored(sorted({e.source_id for e in edges}), CROSS_DOCUMENT_ORIGINS)
