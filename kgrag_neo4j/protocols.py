"""The ports: ``Store`` and its optional capabilities, the providers, the retriever.

Capabilities are separate ``runtime_checkable`` protocols discovered with ``isinstance``, as
the Go seed discovers them by type assertion; a retriever given a store without one degrades
silently (vector-only), exactly as the seeds specify.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Literal, Mapping, Protocol, Sequence, runtime_checkable

from .types import Chunk, ChunkEdge, ChunkFilter, Document, RetrievalResult

if TYPE_CHECKING:
    from .options import GraphOptions

__all__ = [
    "ChatProvider",
    "ChunkScorer",
    "CommunityStore",
    "DocumentChunkLister",
    "EmbeddingProvider",
    "EntityStore",
    "GraphStore",
    "GraphTraverser",
    "InputType",
    "KeywordSearcher",
    "QueryEntitySeeder",
    "Reranker",
    "Retriever",
    "Store",
]

InputType = Literal["document", "query"]


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

    def search_chunks(
        self, embedding: Sequence[float], top_k: int, filters: Sequence[ChunkFilter] = ()
    ) -> list[RetrievalResult]:
        """Cosine-nearest embedded chunks, score in [0, 1] (Neo4j's normalised cosine),
        sorted by score descending. A filter never costs recall: the result is the true top k
        of the filtered set (exact scan when the filter is selective)."""
        ...

    def get_chunks_by_ids(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks that exist among ``chunk_ids``, in the order asked."""
        ...


@runtime_checkable
class KeywordSearcher(Protocol):
    def search_chunks_keyword(
        self, query: str, top_k: int, filters: Sequence[ChunkFilter] = ()
    ) -> list[RetrievalResult]:
        """Full-text (Lucene BM25) search. User text is escaped: Lucene syntax in ``query``
        cannot break or widen it. Sorted by score descending; scores are unbounded BM25."""
        ...


@runtime_checkable
class DocumentChunkLister(Protocol):
    def list_document_chunks(self, document_id: str) -> list[Chunk]:
        """Every chunk of the document (parents and children), by chunk index."""
        ...


@runtime_checkable
class GraphStore(Protocol):
    """Chunk-to-chunk edges (seed 000)."""

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
class EntityStore(Protocol):
    def upsert_entities(self, entities: Sequence[Any]) -> int: ...

    def search_entities(self, embedding: Sequence[float], top_k: int) -> list[Any]: ...


@runtime_checkable
class CommunityStore(Protocol):
    def list_communities(self, *, level: int | None = None) -> list[Any]: ...


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns texts into vectors of ``dimensions`` floats. ``input_type`` matters to asymmetric
    models (Cohere: ``search_document`` vs ``search_query``); symmetric ones ignore it."""

    name: str
    dimensions: int

    def embed(self, texts: Sequence[str], *, input_type: InputType = "document") -> list[list[float]]: ...


@runtime_checkable
class ChatProvider(Protocol):
    def chat(
        self, messages: Sequence[Mapping[str, str]], *, json_schema: Mapping[str, Any] | None = None
    ) -> str:
        """The assistant's reply text (JSON text when ``json_schema`` is given)."""
        ...


@runtime_checkable
class Reranker(Protocol):
    def rerank(self, query: str, results: Sequence[RetrievalResult], top_k: int) -> list[RetrievalResult]: ...


@runtime_checkable
class Retriever(Protocol):
    def retrieve(self, query: str, top_k: int = 5) -> list[RetrievalResult]: ...


def embed_batched(
    provider: EmbeddingProvider, texts: Iterable[str], *, batch_size: int = 64, input_type: InputType = "document"
) -> list[list[float]]:
    """Embed in batches of ``batch_size`` (default 64, the seed's) to respect provider limits."""
    items = list(texts)
    out: list[list[float]] = []
    for start in range(0, len(items), max(1, batch_size)):
        out.extend(provider.embed(items[start : start + batch_size], input_type=input_type))
    return out
