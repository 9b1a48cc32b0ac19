"""Value types shared by the ingestion pipeline, the retrievers and the store: the one home of
kgrag's values. This module holds documents, chunks, chunk edges, filters and results; one
module per further family: :mod:`.entities` (entities, mentions, relations, extraction
results, the name/id normalisers), :mod:`.communities`, :mod:`.triples` (triples, the
predicate allow-list, parsed model output) and :mod:`.context` (GraphRAG local-search context).

They hold data only; no I/O. Scores are floats where larger is better.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..validation import check_number

__all__ = [
    "GRAPH_BLENDS",
    "Chunk",
    "ChunkEdge",
    "ChunkFilter",
    "ChunkPair",
    "ComponentScores",
    "Document",
    "EdgeContext",
    "IngestResult",
    "NATIVE_MAX_HOPS",
    "Neighbourhood",
    "PENDING_HASH_SUFFIX",
    "RelationType",
    "RetrievalResult",
    "by_document",
    "by_meta",
    "by_source",
    "created_after",
    "created_before",
    "filters_to_param",
    "meta_pairs",
]


class RelationType(str, enum.Enum):
    """The eight chunk-to-chunk relation kinds of the chunk graph."""

    REFERENCES = "references"
    ELABORATES = "elaborates"
    DEPENDS_ON = "depends_on"
    CONTRADICTS = "contradicts"
    PART_OF = "part_of"
    SIMILAR_TO = "similar_to"
    SEQUENCE = "sequence"
    CAUSED_BY = "caused_by"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, value: str | RelationType) -> RelationType:
        """Return the member for ``value``; ``InputError`` names the valid ones otherwise."""
        if isinstance(value, RelationType):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            valid = ", ".join(m.value for m in cls)
            raise InputError(f"unknown relation {value!r}; expected one of: {valid}") from None


#: How graph retrieval scores what it finds: ``propagate`` (relevance flows from the seeds along
#: edges, and a chunk's own closeness to the query counts) or ``seed`` (the original formula:
#: seeds over graph-found chunks).
GRAPH_BLENDS = ("propagate", "seed")

#: the most hops ``cypher/graph/retrieve.cypher`` unrolls (the store's one-statement traversal);
#: a retriever asked for more falls back to the per-hop loop
NATIVE_MAX_HOPS = 4


#: Suffix of a document's content hash while writes that follow its transaction are still to
#: come (the Ingestor's database-side similarity edges). A re-ingest compares hashes, so a
#: document left pending by a crash is redone; the store treats "h" and "h~pending" as the same
#: content (nothing to rewrite).
PENDING_HASH_SUFFIX = "~pending"


@dataclass(slots=True)
class Document:
    """A source document. ``id`` is stable: derived from namespace + source unless given."""

    id: str
    source: str
    title: str = ""
    content: str = ""
    namespace: str = ""  # empty: the store's namespace
    content_hash: str = ""
    #: seconds; an ingest stamps every document of one run with the time the run started
    created_at: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Chunk:
    """A piece of a document. Parents (parent-child strategy) carry no embedding."""

    id: str
    document_id: str
    content: str
    chunk_index: int = 0
    parent_id: str | None = None
    embedding: list[float] | None = None
    token_count: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    namespace: str = ""  # empty: the store's namespace
    source: str = ""
    created_at: int = 0
    #: the title of its document as read back with the chunk (a write takes the document's)
    document_title: str = ""


@dataclass(frozen=True, slots=True)
class ChunkPair:
    """Two chunks of different documents close enough to ask a model how they relate (the
    cross-document candidates); ``cosine`` is their raw cosine."""

    source: Chunk
    target: Chunk
    cosine: float


@dataclass(slots=True)
class ChunkEdge:
    """A typed, weighted, directed edge between two chunks (weight in (0, 1])."""

    source_id: str
    target_id: str
    relation: RelationType
    weight: float
    description: str = ""
    origin: str = "llm"
    id: str = ""

    def key(self) -> tuple[str, str, str]:
        return (self.source_id, self.target_id, str(self.relation))


@dataclass(frozen=True, slots=True)
class EdgeContext:
    """How a graph-found chunk was reached: the edge followed into it."""

    from_chunk_id: str
    relation: str
    description: str = ""
    hops: int = 1
    weight: float = 0.0


@dataclass(slots=True)
class ComponentScores:
    """The parts a final score was made of, so a user can see why a result ranked there."""

    vector: float | None = None
    keyword: float | None = None
    fused: float | None = None
    graph: float | None = None
    boost: float | None = None
    rerank: float | None = None

    def as_dict(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in self.__slots__ if getattr(self, k) is not None}


@dataclass(slots=True)
class RetrievalResult:
    """One retrieved chunk. ``score`` orders results (descending)."""

    id: str
    content: str
    score: float
    document_id: str = ""
    source: str = ""
    title: str = ""
    chunk_index: int = 0
    parent_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    scores: ComponentScores = field(default_factory=ComponentScores)
    graph_context: list[EdgeContext] = field(default_factory=list)
    explanation: list[str] = field(default_factory=list)
    #: entity retrieval: the entities the chunk mentions (ids, sorted)
    mentioned_entity_ids: list[str] = field(default_factory=list)
    #: entity retrieval: why the chunk was boosted, as (entity name, relation taken from it)
    #: steps from a query entity to the mentioned entity (which ends the path with "")
    graph_path: list[tuple[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if self.mentioned_entity_ids:
            extra["mentioned_entity_ids"] = list(self.mentioned_entity_ids)
        if self.graph_path:
            extra["graph_path"] = [list(step) for step in self.graph_path]
        return {
            "id": self.id,
            "document_id": self.document_id,
            "source": self.source,
            "title": self.title,
            "chunk_index": self.chunk_index,
            "content": self.content,
            "score": self.score,
            "scores": self.scores.as_dict(),
            "graph_context": [
                {
                    "from_chunk_id": g.from_chunk_id,
                    "relation": g.relation,
                    "description": g.description,
                    "hops": g.hops,
                    "weight": g.weight,
                }
                for g in self.graph_context
            ],
            "explanation": list(self.explanation),
            **extra,
        }


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """The part of the chunk-entity graph around a query (what a personalized PageRank walks).

    ``seeds``: (chunk id, normalised cosine), best first. ``query_entities``: (entity id, name,
    score, how) with ``how`` "named" (the query contains its name; score 1.0) or "resembles"
    (entity vector search; score the normalised cosine). ``entities``: entity id -> (name,
    df), df = chunks mentioning it. ``chunk_degrees``: chunk id -> sum(1 / df) over every
    entity it mentions (its full weighted degree, inside the neighbourhood or not); every
    chunk of the neighbourhood is a key (0.0 when it mentions nothing). ``mentions``: (chunk
    id, entity id) pairs inside the neighbourhood. ``chunk_edges``: (source, target, weight)
    RELATES_TO edges inside it. ``relations``: (source, target, weight) RELATED_TO edges
    between its entities.
    """

    seeds: tuple[tuple[str, float], ...] = ()
    query_entities: tuple[tuple[str, str, float, str], ...] = ()
    entities: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    chunk_degrees: Mapping[str, float] = field(default_factory=dict)
    mentions: tuple[tuple[str, str], ...] = ()
    chunk_edges: tuple[tuple[str, str, float], ...] = ()
    relations: tuple[tuple[str, str, float], ...] = ()


@dataclass(slots=True)
class IngestResult:
    """What one ingest call did. ``status`` is ``new``, ``unchanged`` or ``replaced``."""

    document_id: str
    chunk_count: int
    status: str = "new"
    document: Document | None = None
    replaced_document_id: str | None = None
    skipped: list[str] = field(default_factory=list)
    edge_count: int = 0
    #: the cancel event was set while edges were being extracted: the document is whole,
    #: the model calls not yet sent were skipped
    cancelled: bool = False


# --- filters -------------------------------------------------------------------------------

_FILTER_FIELDS = ("document", "source", "meta", "created_after", "created_before")


@dataclass(frozen=True, slots=True)
class ChunkFilter:
    """One condition on chunks; a list of them is AND-combined. Build with the helpers below."""

    field: str
    value: Any
    key: str | None = None

    def __post_init__(self) -> None:
        if self.field not in _FILTER_FIELDS:
            raise InputError(f"unknown filter field {self.field!r}; expected one of {_FILTER_FIELDS}")


def by_document(*document_ids: str) -> ChunkFilter:
    """Only chunks of these documents."""
    if not document_ids:
        raise InputError("by_document needs at least one document id")
    return ChunkFilter("document", tuple(str(d) for d in document_ids))


def by_source(prefix: str) -> ChunkFilter:
    """Only chunks whose document source starts with ``prefix``."""
    return ChunkFilter("source", str(prefix))


def by_meta(key: str, value: Any) -> ChunkFilter:
    """Only chunks whose metadata (own or document's) has ``key`` equal to ``value``."""
    if not isinstance(key, str) or not key:
        raise InputError("by_meta needs a non-empty string key")
    return ChunkFilter("meta", value, key=key)


def created_after(unix_seconds: int | float) -> ChunkFilter:
    """Only chunks created strictly after this unix time (seconds)."""
    return ChunkFilter("created_after", _as_time(unix_seconds))


def created_before(unix_seconds: int | float) -> ChunkFilter:
    """Only chunks created strictly before this unix time (seconds)."""
    return ChunkFilter("created_before", _as_time(unix_seconds))


def _as_time(value: Any) -> int:
    return int(check_number(value, "a time filter (unix seconds)", error=InputError))


_META_SEP = "\u241f"  # a visible unit separator: never typed by accident in a key


def meta_value_text(value: Any) -> str:
    """The text form a metadata value is stored and compared as."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def meta_pairs(metadata: Mapping[str, Any]) -> list[str]:
    """Encode metadata as ``key<sep>value`` strings, the form a Cypher list test can match."""
    out: list[str] = []
    for key, value in metadata.items():
        if value is None:
            continue
        out.append(f"{key}{_META_SEP}{meta_value_text(value)}")
    return sorted(out)


def filters_to_param(filters: Sequence[ChunkFilter] | None) -> dict[str, Any]:
    """Turn filters into the one ``$filter`` map every filtered Cypher file takes.

    AND semantics: several ``by_document`` filters intersect, several time bounds take the
    tightest. The map always has every key, so Cypher can test ``IS NULL`` without guards.
    """
    doc_ids: set[str] | None = None
    source: str | None = None
    pairs: list[str] = []
    after: int | None = None
    before: int | None = None
    for f in filters or ():
        if not isinstance(f, ChunkFilter):
            raise InputError(f"filters must be ChunkFilter values, got {type(f).__name__}")
        if f.field == "document":
            ids = set(f.value)
            doc_ids = ids if doc_ids is None else doc_ids & ids
        elif f.field == "source":
            if source is None or f.value.startswith(source):
                source = f.value
            elif not source.startswith(f.value):
                doc_ids = set()  # two disjoint prefixes: nothing can match
        elif f.field == "meta":
            pairs.extend(meta_pairs({f.key or "": f.value}))  # by_meta always sets a key
        elif f.field == "created_after":
            after = f.value if after is None else max(after, f.value)
        elif f.field == "created_before":
            before = f.value if before is None else min(before, f.value)
    return {
        "document_ids": sorted(doc_ids) if doc_ids is not None else None,
        "source_prefix": source,
        "meta_pairs": pairs,
        "created_after": after,
        "created_before": before,
    }


def filters_active(param: Mapping[str, Any]) -> bool:
    return bool(
        param.get("document_ids") is not None
        or param.get("source_prefix")
        or param.get("meta_pairs")
        or param.get("created_after") is not None
        or param.get("created_before") is not None
    )


def load_metadata(raw: Any) -> dict[str, Any]:
    """Metadata as stored (JSON text) back to a dict; anything unreadable becomes {}."""
    if not raw or raw == "{}":  # most chunks: no parse per retrieved row
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
