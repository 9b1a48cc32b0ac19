"""What an ingest may ask of its store beyond ``Store``, found once.

A store offers its optional capabilities as protocols (``protocols.py``). The ingest asks the
store about each of them once, when the ``Ingestor`` is made, and keeps the answers in a
:class:`StoreCapabilities`: each field is the store itself, typed as that capability, or None
when the store lacks it. Code that needs a capability checks its field for None (which also
gives mypy the type), never the store again.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    GraphStore,
    MaintainedEntityGraph,
    Namespaced,
    NearestChunkFinder,
    Store,
)

__all__ = ["StoreCapabilities"]


@dataclass(frozen=True, slots=True)
class StoreCapabilities:
    """The store and what else it can do; None where it cannot."""

    store: Store
    #: the store's namespace (ids embed it); "default" for a store that has none
    namespace: str = "default"
    #: chunk edges: written with a document, read for pruning
    graph: GraphStore | None = None
    #: many documents per transaction (else one ``store_document`` each)
    bulk_writer: BulkDocumentWriter | None = None
    #: stored content hashes: an unchanged document costs no chunking or embedding
    states: DocumentStates | None = None
    #: whether the namespace holds any document (an empty one has no hashes to read)
    presence: DocumentPresence | None = None
    #: a pending content hash swapped for the final one after cross-document edges
    completer: DocumentCompleter | None = None
    #: the namespace's embedding model recorded, another one refused
    embedders: EmbedderRegistry | None = None
    #: the chunks of one stored document (edge building)
    chunk_lister: DocumentChunkLister | None = None
    #: the chunks of many stored documents in one read
    chunk_pager: ChunkPager | None = None
    #: similarity edges through the store's vector index
    nearest: NearestChunkFinder | None = None
    #: candidate chunk pairs across documents (cross-document edges)
    pairer: CrossDocumentPairer | None = None
    #: stored edges deleted (pruning against what an earlier run stored)
    edge_deleter: EdgeDeleter | None = None
    #: the living entity graph, maintained after each ingest
    entity_graph: MaintainedEntityGraph | None = None

    @classmethod
    def of(cls, store: Store) -> StoreCapabilities:
        """Each capability of ``store``, by one type check each."""
        return cls(
            store=store,
            namespace=store.namespace if isinstance(store, Namespaced) else "default",
            graph=store if isinstance(store, GraphStore) else None,
            bulk_writer=store if isinstance(store, BulkDocumentWriter) else None,
            states=store if isinstance(store, DocumentStates) else None,
            presence=store if isinstance(store, DocumentPresence) else None,
            completer=store if isinstance(store, DocumentCompleter) else None,
            embedders=store if isinstance(store, EmbedderRegistry) else None,
            chunk_lister=store if isinstance(store, DocumentChunkLister) else None,
            chunk_pager=store if isinstance(store, ChunkPager) else None,
            nearest=store if isinstance(store, NearestChunkFinder) else None,
            pairer=store if isinstance(store, CrossDocumentPairer) else None,
            edge_deleter=store if isinstance(store, EdgeDeleter) else None,
            entity_graph=store if isinstance(store, MaintainedEntityGraph) else None,
        )
