"""The ports: ``Store`` and its optional capabilities, the providers (defined in
:mod:`kgrag_neo4j.provider_protocols`, re-exported here), the retriever.

Capabilities are separate ``runtime_checkable`` protocols discovered with ``isinstance``; a
retriever given a store without one degrades silently (vector-only).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .provider_protocols import ChatProvider, EmbeddingProvider, InputType, Reranker
from .types import Chunk, ChunkEdge, ChunkFilter, ChunkPair, Document, Neighbourhood, RetrievalResult
from .types.communities import Community, CommunityReport, CommunitySnapshot
from .types.context import LocalContext
from .types.entities import Entity, EntityBoostContext, EntityGraph, EntityMention, EntityRelation
from .types.triples import ConfidenceUpdate, ExpandedNode, PredicateRegistry, Triple

if TYPE_CHECKING:
    from .options import GraphOptions

__all__ = [
    "BulkDocumentWriter",
    "ChatProvider",
    "ChunkPager",
    "ChunkScorer",
    "CommunityStore",
    "CommunityUpdateStore",
    "CrossDocumentPairer",
    "DocumentChunkLister",
    "DocumentCompleter",
    "DocumentPresence",
    "DocumentStates",
    "EdgeDeleter",
    "EmbedderRegistry",
    "EmbeddingProvider",
    "EntityBoostReader",
    "EntityCentralitySource",
    "EntityStore",
    "GraphStore",
    "GraphTraverser",
    "GraphViewer",
    "InputType",
    "KeywordSearcher",
    "LocalContextReader",
    "MaintainedEntityGraph",
    "Namespaced",
    "NearestChunkFinder",
    "PPRNeighbourhoodReader",
    "QueryEntitySeeder",
    "Reranker",
    "Retriever",
    "RoundTripCounter",
    "Store",
    "TripleExpander",
    "TripleStore",
]


@runtime_checkable
class Store(Protocol):
    """Documents and chunks with vector search. Every call is scoped to the store's namespace."""

    def store_document(self, document: Document, chunks: Sequence[Chunk]) -> str:
        """Write the document, all its chunks and their ``HAS_CHUNK`` / ``CHILD_OF`` links in ONE
        transaction. Idempotent: storing the same document again changes nothing; a document
        with the same id and other content replaces the old one atomically. Returns
        ``new``, ``unchanged`` or ``replaced``."""
        ...

    def get_document(self, document_id: str) -> Document:
        """The document; ``NotFoundError`` if absent."""
        ...

    def list_documents(self, *, limit: int | None = None) -> list[Document]:
        """Documents, newest first; possibly empty."""
        ...

    def delete_document(self, document_id: str) -> bool:
        """Remove the document, its chunks, their edges and mentions, then entities no chunk
        mentions any more. False if it was not there."""
        ...

    def search_chunks(self, embedding: Sequence[float], top_k: int, filters: Sequence[ChunkFilter] = ()) -> list[RetrievalResult]:
        """Cosine-nearest embedded chunks, score in [0, 1] (Neo4j's normalised cosine),
        sorted by score descending. A filter never costs recall: the result is the true top k
        of the filtered set (exact scan when the filter is selective)."""
        ...

    def get_chunks_by_ids(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks that exist among ``chunk_ids``, in the order asked."""
        ...


@runtime_checkable
class KeywordSearcher(Protocol):
    def search_chunks_keyword(self, query: str, top_k: int, filters: Sequence[ChunkFilter] = ()) -> list[RetrievalResult]:
        """Full-text (Lucene BM25) search. User text is escaped: Lucene syntax in ``query``
        cannot break or widen it. Sorted by score descending; scores are unbounded BM25."""
        ...


@runtime_checkable
class DocumentChunkLister(Protocol):
    def list_document_chunks(self, document_id: str, *, with_embedding: bool = False) -> list[Chunk]:
        """Every chunk of the document (parents and children), by chunk index; with their
        vectors when ``with_embedding``."""
        ...


@runtime_checkable
class GraphStore(Protocol):
    """Chunk-to-chunk edges."""

    def store_edges(self, edges: Sequence[ChunkEdge]) -> int:
        """Idempotent upsert; a duplicate (source, target, relation) keeps the highest weight."""
        ...

    def get_edges(self, chunk_ids: Sequence[str]) -> list[ChunkEdge]:
        """Outgoing edges of these chunks."""
        ...

    def get_incoming_edges(self, chunk_ids: Sequence[str]) -> list[ChunkEdge]:
        """Incoming edges of these chunks."""
        ...

    def prune_orphan_edges(self, *, dry_run: bool = False) -> int:
        """Remove chunks no document owns any more and the edges on them; return the count of
        edges removed (or that would be, with ``dry_run``)."""
        ...


@runtime_checkable
class GraphTraverser(Protocol):
    """The Neo4j-native capability: the whole graph retrieval in one round trip."""

    def graph_retrieve(
        self,
        embedding: Sequence[float],
        query: str,
        top_k: int,
        options: GraphOptions | None = None,
        filters: Sequence[ChunkFilter] = (),
        *,
        entity_keys: Sequence[Mapping[str, Any]] = (),
    ) -> list[RetrievalResult]:
        """The ``top_k`` chunks of a graph retrieval under ``options`` (seeds from
        ``embedding``, and from ``query`` by keyword when ``options.seed_keyword_weight`` > 0,
        or by the entity name keys of ``entity_keys``), each with its graph context."""
        ...


@runtime_checkable
class GraphViewer(Protocol):
    """The graph retrieval returned as a graph (nodes, relationships, results): what Neo4j
    Browser draws."""

    def graph_view(
        self,
        embedding: Sequence[float],
        query: str,
        top_k: int,
        options: GraphOptions | None = None,
        filters: Sequence[ChunkFilter] = (),
        *,
        entity_keys: Sequence[Mapping[str, Any]] = (),
    ) -> dict[str, Any]: ...


@runtime_checkable
class ChunkScorer(Protocol):
    """How close given chunks are to a query vector (graph retrieval's propagate blend scores
    graph-found chunks by their own closeness too)."""

    def score_chunks(self, embedding: Sequence[float], chunk_ids: Sequence[str]) -> dict[str, float]:
        """Chunk id -> normalised cosine ``(1 + cos) / 2``; chunks without a vector are absent."""
        ...


@runtime_checkable
class QueryEntitySeeder(Protocol):
    """Chunks mentioning an entity the query names (entity seeding of graph retrieval)."""

    def query_entity_chunks(
        self, keys: Sequence[Mapping[str, Any]], *, max_chunks: int = 25, filters: Sequence[ChunkFilter] = ()
    ) -> dict[str, tuple[float, list[str]]]:
        """Chunk id -> (sum of 1 / df over the matched entities it mentions, their names)."""
        ...


@runtime_checkable
class Namespaced(Protocol):
    """A store scoped to one namespace (ids of entities and documents embed it)."""

    namespace: str


@runtime_checkable
class RoundTripCounter(Protocol):
    """A store that counts the statements it sent (both drivers): traces report a
    retrieval's round trips from it."""

    @property
    def round_trips(self) -> int: ...


@runtime_checkable
class EmbedderRegistry(Protocol):
    """A store that records the embedding model of its namespace and refuses another one."""

    def check_embedder(self, model: str, dimensions: int) -> None:
        """Raise unless vectors of ``model`` can be compared with what the namespace holds
        (``SchemaNotReady`` when there is no schema yet)."""
        ...

    def ensure_embedder(self, model: str, dimensions: int) -> None:
        """Create the schema for ``dimensions`` if missing and record ``model``."""
        ...


@runtime_checkable
class DocumentStates(Protocol):
    """What an ingest reads first, so an unchanged document costs no chunking or embedding."""

    def document_states(self, document_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """``{document id: {content_hash, chunk_count}}`` of the ids stored in the namespace."""
        ...


@runtime_checkable
class DocumentPresence(Protocol):
    """Whether the namespace holds any document: an ingest into an empty namespace has no
    content hash to compare, so it reads none."""

    def has_documents(self) -> bool: ...


@runtime_checkable
class BulkDocumentWriter(Protocol):
    def store_documents(self, items: Sequence[tuple[Document, Sequence[Chunk], Sequence[ChunkEdge]]]) -> list[str | Exception]:
        """Many documents (each with its chunks and edges) in few transactions; per document
        its status or the error that refused it, in the order given."""
        ...


@runtime_checkable
class DocumentCompleter(Protocol):
    def complete_document(self, document_id: str, *, pending_hash: str, content_hash: str) -> bool:
        """Swap a document's pending content hash for its final one (after the writes that
        follow its transaction); False if it is gone or was replaced meanwhile."""
        ...


@runtime_checkable
class ChunkPager(Protocol):
    """Chunks of many documents in one read (edge building over a namespace)."""

    def list_chunks_of_documents(
        self, document_ids: Sequence[str], *, with_embedding: bool = False
    ) -> dict[str, list[Chunk]]: ...


@runtime_checkable
class NearestChunkFinder(Protocol):
    """Similarity-edge building with the store's vector index."""

    def nearest_chunks(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float] | None] | None = None,
        *,
        top_k: int = 5,
        threshold: float = 0.75,
    ) -> list[list[tuple[str, float]]]: ...

    def has_embedded_chunks(self) -> bool: ...


@runtime_checkable
class CrossDocumentPairer(Protocol):
    """Candidate chunk pairs across documents (for cross-document edges)."""

    def similar_chunk_pairs(
        self, *, document_ids: Sequence[str] | None = None, threshold: float = 0.5, max_pairs: int = 3
    ) -> list[ChunkPair]: ...


@runtime_checkable
class EdgeDeleter(Protocol):
    def delete_edges(self, edges: Sequence[ChunkEdge]) -> int:
        """Delete the stored edges with these (source, target, relation) keys."""
        ...


@runtime_checkable
class EntityBoostReader(Protocol):
    """Entity-boosted retrieval in one round trip: candidates, query entities, related entities, expansion."""

    def entity_boost_context(self, embedding: Sequence[float], *, chunk_k: int, **options: Any) -> EntityBoostContext: ...


@runtime_checkable
class EntityCentralitySource(Protocol):
    """What entity centrality is computed from: degrees counted in the database, the weighted
    entity graph read in one query."""

    def entity_degrees(self) -> dict[str, int]: ...

    def read_entity_graph(self) -> EntityGraph: ...


@runtime_checkable
class LocalContextReader(Protocol):
    """The local-search context in one round trip."""

    def local_context(self, embedding: Sequence[float], **options: Any) -> LocalContext: ...


@runtime_checkable
class PPRNeighbourhoodReader(Protocol):
    """The chunk-entity neighbourhood of a query, for personalised PageRank."""

    def ppr_neighbourhood(self, embedding: Sequence[float], **options: Any) -> Neighbourhood: ...


@runtime_checkable
class TripleExpander(Protocol):
    """Phase 2 of the two-phase triple retrieval: expansion over chosen predicates in one statement."""

    def expand_triples(
        self,
        names: Sequence[str],
        predicates: Sequence[str] | None = None,
        max_depth: int = 2,
        limit: int = 10,
        **options: Any,
    ) -> list[ExpandedNode]: ...


@runtime_checkable
class TripleStore(Protocol):
    """Triples over ``RELATED_TO``: what the error-resolution recorder writes and reads."""

    def add_triples(self, triples: Sequence[Triple], *, registry: PredicateRegistry | None = None) -> int: ...

    def query_triples(self, **options: Any) -> list[Triple]: ...

    def propagate_confidence(self, tool: str, *, propagation_rate: float = 0.3) -> list[ConfidenceUpdate]: ...


@runtime_checkable
class EntityStore(Protocol):
    """What ``entities.pipeline.build_entities`` reads and writes. New entities are staged
    under a build id and published together, so a build that stops half-way shows nothing."""

    namespace: str

    def ensure_embedder(self, model: str, dimensions: int) -> None: ...

    def extraction_chunks(self, document_ids: Sequence[str] | None = None, *, skip_key: str | None = None) -> list[Chunk]: ...

    def mark_extracted(self, chunk_ids: Sequence[str], key: str) -> int: ...

    def known_entities(self) -> list[Entity]: ...

    def document_titles(self, document_ids: Sequence[str] | None = None) -> list[tuple[str, str, str | None]]: ...

    def upsert_entities(self, entities: Sequence[Entity], *, build: str | None = None) -> int: ...

    def publish_entities(self, build: str) -> int: ...

    def upsert_relations(self, relations: Sequence[EntityRelation]) -> int: ...

    def upsert_mentions(self, mentions: Sequence[EntityMention]) -> int: ...

    def namespace_mentions(self) -> dict[str, list[str]]: ...

    def replace_edges(self, origin: str, edges: Sequence[ChunkEdge]) -> int: ...


@runtime_checkable
class MaintainedEntityGraph(Protocol):
    """What ``entities.maintain.maintain_entity_graph`` reads and writes: the namespace's
    entity graph kept current document by document (name statistics, links, entities and
    ``references`` edges, each change in a bounded transaction under the graph's lock)."""

    namespace: str

    def ensure_embedder(self, model: str, dimensions: int) -> None: ...

    def entity_graph_generation(self) -> int | None: ...

    def entity_graph_state(self) -> dict[str, Any]: ...

    def has_linked_documents(self) -> bool: ...

    def entity_pending_documents(self, *, after: str = "", limit: int = 1000, every: bool = False) -> list[str]: ...

    def entity_document_chunks(self, document_ids: Sequence[str]) -> list[dict[str, Any]]: ...

    def apply_name_scans(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, int]: ...

    def vocabulary_names(self, keys: Sequence[str]) -> list[dict[str, Any]]: ...

    def vocabulary_page(self, *, after: str = "", limit: int = 20_000) -> list[dict[str, Any]]: ...

    def vocabulary_size(self) -> int: ...

    def changed_names(self, *, limit: int = 1000) -> list[dict[str, Any]]: ...

    def chunk_texts(self, chunk_ids: Sequence[str]) -> dict[str, str]: ...

    def vocabulary_by_words(self, words: Sequence[str]) -> list[dict[str, Any]]: ...

    def chunks_writing(
        self, names: Sequence[str], keys: Sequence[str], *, words: Sequence[str] = (), limit: int = 100_000
    ) -> list[tuple[str, str]]: ...

    def mark_documents_pending(self, document_ids: Sequence[str]) -> int: ...

    def mark_chunks_relink(self, chunk_ids: Sequence[str], names: Sequence[Mapping[str, Any]]) -> dict[str, int]: ...

    def relink_documents(self, *, after: str = "", limit: int = 1000) -> list[dict[str, Any]]: ...

    def relink_chunks(self, document_ids: Sequence[str], *, limit: int = 1_000_000) -> list[dict[str, Any]]: ...

    def context_chunks(self, documents: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]: ...

    def entity_graph_record(self) -> dict[str, Any] | None: ...

    def names_without_words(self, *, after: str = "", limit: int = 20_000) -> list[dict[str, Any]]: ...

    def set_name_words(self, rows: Sequence[Mapping[str, str]], *, done: bool) -> int: ...

    def label_scanned_chunks(self, *, limit: int = 10_000) -> int: ...

    def ensure_entity_graph_schema(self, *, timeout: float = 300.0) -> None: ...

    def write_entity_links(self, generation: int, links: Mapping[str, Any]) -> bool: ...

    def dirty_entities(self, *, after: str = "", limit: int = 500) -> list[dict[str, Any]]: ...

    def update_maintained_entities(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, int]: ...

    def settle_relations(self, *, limit: int = 5000) -> int: ...

    def dirty_chunks(self, *, limit: int = 1000) -> list[str]: ...

    def update_references(
        self,
        chunk_ids: Sequence[str],
        *,
        max_chunks: int,
        unit: int,
        decide: Callable[[list[dict[str, Any]]], tuple[list[dict[str, Any]], list[dict[str, str]]]],
    ) -> int: ...

    def record_entity_build(self, at: str, names: Sequence[Mapping[str, Any]] = ()) -> int: ...

    def clear_entity_graph(self, *, batch_size: int = 10_000) -> int: ...


@runtime_checkable
class CommunityStore(Protocol):
    """What ``communities.build.build_communities`` reads and writes."""

    def gds_available(self) -> bool: ...

    def read_entity_graph(self) -> EntityGraph: ...

    def write_communities(
        self, communities: Sequence[Community], reports: Mapping[str, CommunityReport] | Iterable[CommunityReport] = ()
    ) -> dict[str, int]: ...


@runtime_checkable
class CommunityUpdateStore(Protocol):
    """What ``communities.update.update_communities`` reads and writes: pages of entities in no
    community with their neighbours' communities, placements, and stale reports."""

    namespace: str

    def community_update_state(self) -> dict[str, int]: ...

    def prune_communities(self) -> int: ...

    def mark_changed_communities(self, *, batch_size: int = 10_000) -> int: ...

    def unplaced_entity_votes(
        self, *, after: str = "", limit: int = 1000, round_key: str, previous: str | None = None
    ) -> list[tuple[str, list[tuple[str, float]]]]: ...

    def place_entities(self, placements: Sequence[tuple[str, str]], *, round_key: str) -> int: ...

    def stale_community_ids(self, *, after: str = "", limit: int = 20) -> list[str]: ...

    def community_snapshots(self, community_ids: Sequence[str]) -> list[CommunitySnapshot]: ...

    def write_community_reports(self, made: Sequence[tuple[CommunitySnapshot, CommunityReport]]) -> int: ...

    def refresh_community_reports(
        self, community_ids: Sequence[str], make: Callable[[CommunitySnapshot], CommunityReport]
    ) -> int: ...


@runtime_checkable
class Retriever(Protocol):
    def retrieve(self, query: str, top_k: int = 5) -> list[RetrievalResult]: ...


def embed_batched(
    provider: EmbeddingProvider, texts: Iterable[str], *, batch_size: int = 64, input_type: InputType = "document"
) -> list[list[float]]:
    """Embed in batches of ``batch_size`` (default 64) to respect provider limits."""
    items = list(texts)
    out: list[list[float]] = []
    for start in range(0, len(items), max(1, batch_size)):
        out.extend(provider.embed(items[start : start + batch_size], input_type=input_type))
    return out
