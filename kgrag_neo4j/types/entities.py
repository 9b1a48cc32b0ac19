"""Entities, their relationships and chunk mentions: the value types and the pure name and id
normalisers the store, the extractors and retrieval share.

An entity's id depends only on the namespace, its *normalised* name and its *normalised* type,
so "Ned Stark" found in chunk 3 of one document and "ned  stark" found in another become the
same ``(:Entity)`` node (the store MERGEs on the id).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..errors import InputError
from ..validation import check_int, check_number
from . import Chunk, RetrievalResult

#: the longest entity name stored: a person, a company, a paper's title fit, a paragraph does
#: not; the name is indexed, and the database refuses to index a value of a few kilobytes
MAX_ENTITY_NAME_CHARS = 256

__all__ = [
    "ExtractionResult",
    "CENTRALITY_KINDS",
    "ENTITY_MAX_HOPS",
    "MAX_ENTITY_NAME_CHARS",
    "Entity",
    "EntityBoostContext",
    "EntityCandidate",
    "EntityDetails",
    "EntityGraph",
    "EntityListing",
    "EntityMention",
    "EntityRelation",
    "EntityTextUnit",
    "Neighbour",
    "QueryEntity",
    "RelatedEntity",
    "ScoredEntity",
    "entity_id",
    "normalise_name",
    "normalise_type",
]

#: the entity importance measures entity-boosted retrieval's centrality option takes
CENTRALITY_KINDS = ("degree", "pagerank")
#: hops over RELATED_TO unrolled in cypher/entities/neighbours.cypher and boost_retrieve.cypher
ENTITY_MAX_HOPS = 3

# Common short forms an LLM or a NER tagger uses for the canonical types.
_TYPE_ALIASES = {
    "ORG": "ORGANIZATION",
    "ORGANISATION": "ORGANIZATION",
    "COMPANY": "ORGANIZATION",
    "PER": "PERSON",
    "PEOPLE": "PERSON",
    "CHARACTER": "PERSON",
    "LOC": "LOCATION",
    "GPE": "LOCATION",
    "PLACE": "LOCATION",
}

_SPACES = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^0-9A-Za-z]+")


def _is_edge_punct(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P")


def _normalise_once(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    text = unicodedata.normalize("NFKC", text)
    text = _SPACES.sub(" ", text).strip()
    start, end = 0, len(text)
    while start < end and (_is_edge_punct(text[start]) or text[start].isspace()):
        start += 1
    while end > start and (_is_edge_punct(text[end - 1]) or text[end - 1].isspace()):
        end -= 1
    text = text[start:end]
    if text.startswith("the "):
        text = text[4:]
    return text


def normalise_name(name: str) -> str:
    """The comparison key of an entity name.

    NFKC, casefold, whitespace collapsed, punctuation stripped at both ends, a leading "the "
    dropped: ``normalise_name("  The  University of Oxford. ")`` is
    ``"university of oxford"``. Repeated until nothing changes, so it is idempotent.
    """
    if not isinstance(name, str):
        raise InputError(f"an entity name must be a string, got {type(name).__name__}")
    text = name
    # Casefolding can produce text that NFKC changes again (and vice versa); a handful of
    # rounds reaches the fixed point for any real input.
    for _ in range(8):
        nxt = _normalise_once(text)
        if nxt == text:
            break
        text = nxt
    return text


def normalise_type(type_: str | None) -> str:
    """Upper snake case (``"organisation"`` -> ``ORGANIZATION``, ``"Noble House"`` ->
    ``NOBLE_HOUSE``); a few common aliases map to the canonical names; empty -> ``OTHER``."""
    if type_ is None:
        return "OTHER"
    if not isinstance(type_, str):
        raise InputError(f"an entity type must be a string, got {type(type_).__name__}")
    text = unicodedata.normalize("NFKD", type_)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = _NON_WORD.sub("_", text).strip("_").upper()
    if not text:
        return "OTHER"
    return _TYPE_ALIASES.get(text, text)


def _digest(*parts: str, size: int = 16) -> str:
    # Same scheme as kgrag_neo4j.ids: length-prefixed, so ("ab", "c") != ("a", "bc").
    h = hashlib.blake2b(digest_size=size)
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


def entity_id(namespace: str, name: str, type_: str | None) -> str:
    """``ent_`` + a hash of namespace, normalised name and normalised type.

    Raises ``InputError`` if the name normalises to nothing (only spaces or punctuation).
    """
    key = normalise_name(name)
    if not key:
        raise InputError(f"entity name {name!r} is empty once normalised")
    return "ent_" + _digest("entity", str(namespace), key, normalise_type(type_))


@dataclass(frozen=True, slots=True)
class Entity:
    """A node of the entity graph. ``type`` is stored normalised (upper snake case)."""

    id: str
    name: str
    type: str
    description: str = ""
    source_chunk_id: str | None = None
    embedding: tuple[float, ...] | None = field(default=None, compare=False, hash=False)
    namespace: str = "default"

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InputError("an entity needs a non-empty id")
        if not isinstance(self.name, str) or not self.name.strip():
            raise InputError(f"entity {self.id!r} needs a non-empty name")
        object.__setattr__(self, "type", normalise_type(self.type))
        if self.embedding is not None and not isinstance(self.embedding, tuple):
            object.__setattr__(self, "embedding", tuple(float(x) for x in self.embedding))

    @classmethod
    def create(
        cls,
        name: str,
        type_: str | None,
        *,
        namespace: str = "default",
        description: str = "",
        source_chunk_id: str | None = None,
        embedding: Sequence[float] | None = None,
    ) -> Entity:
        """An entity whose id is ``entity_id(namespace, name, type_)``."""
        return cls(
            id=entity_id(namespace, name, type_),
            name=_SPACES.sub(" ", name).strip(),
            type=normalise_type(type_),
            description=description,
            source_chunk_id=source_chunk_id,
            embedding=tuple(embedding) if embedding is not None else None,
            namespace=namespace,
        )


@dataclass(frozen=True, slots=True)
class EntityRelation:
    """A directed, typed, weighted relationship ``(source)-[:RELATED_TO {type}]->(target)``.

    ``type`` is open vocabulary (``ALLY``, ``CO_OCCURS``, ``caused_by``, ...) and kept as given;
    ``weight`` is in [0, 1]; ``sequence`` is the story position the relationship was established at.
    """

    source_id: str
    target_id: str
    type: str
    weight: float
    description: str = ""
    sequence: int | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not self.source_id or not self.target_id:
            raise InputError("a relation needs both a source_id and a target_id")
        if not isinstance(self.type, str) or not self.type.strip():
            raise InputError(f"relation {self.source_id}->{self.target_id} needs a non-empty type")
        weight = check_number(
            self.weight, f"relation {self.source_id}->{self.target_id} weight", minimum=0.0, maximum=1.0, error=InputError
        )
        object.__setattr__(self, "weight", weight)

    def key(self) -> tuple[str, str, str]:
        return (self.source_id, self.target_id, self.type)


@dataclass(frozen=True, slots=True)
class EntityMention:
    """``(:Chunk {id: chunk_id})-[:MENTIONS {count}]->(:Entity {id: entity_id})``."""

    chunk_id: str
    entity_id: str
    count: int = 1

    def __post_init__(self) -> None:
        if not self.chunk_id or not self.entity_id:
            raise InputError("a mention needs a chunk_id and an entity_id")
        check_int(self.count, "mention count", minimum=1, error=InputError)


# --- what the store reads back ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScoredEntity:
    """An entity found by vector search; ``score`` is Neo4j's normalised cosine in [0, 1]."""

    entity: Entity
    score: float


class Neighbour(NamedTuple):
    """How an entity was reached from the start entities: hops, the weight of its best edge at
    the first hop that reached it, and the steps ``((entity name, relation type), ...)``."""

    distance: int
    strength: float
    path: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class EntityTextUnit:
    """A chunk mentioning some of the asked entities (GraphRAG's text unit)."""

    chunk: Chunk
    entity_ids: tuple[str, ...]
    mentions: int


@dataclass(frozen=True, slots=True)
class EntityListing:
    entity: Entity
    mentions: int
    degree: int


@dataclass(frozen=True, slots=True)
class EntityDetails:
    """An entity with its relationships (both directions, heaviest first) and the chunks that
    mention it (most mentions first); ``mention_total`` counts them all, the lists are cut."""

    entity: Entity
    relations: list[dict[str, Any]]
    mentions: list[dict[str, Any]]
    mention_total: int


@dataclass(frozen=True, slots=True)
class EntityGraph:
    """Every entity of a namespace and every RELATED_TO relationship between them."""

    entities: list[Entity]
    relations: list[EntityRelation]

    def weighted_edges(self) -> list[tuple[str, str, float]]:
        return [(r.source_id, r.target_id, r.weight) for r in self.relations]


@dataclass(frozen=True, slots=True)
class QueryEntity:
    """An entity the query is about: found by vector search (``score``, normalised cosine) or
    named in the query text (``score`` None)."""

    id: str
    name: str
    type: str
    score: float | None


@dataclass(frozen=True, slots=True)
class RelatedEntity:
    """An entity reached from the query entities: hops, the weight of its best edge at the first
    hop that reached it, and the steps ``((entity name, relation type), ...)``."""

    id: str
    name: str
    distance: int
    strength: float
    path: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class EntityCandidate:
    """A chunk entity-boosted retrieval may rank: as a result scored by its closeness alone (``similarity``,
    None when the chunk has no embedding), with the entities it mentions. An expansion chunk
    also names the related entity whose source chunk it is (``via_*``)."""

    result: RetrievalResult
    similarity: float | None
    mentions: tuple[str, ...] = ()
    via_entity_id: str | None = None
    via_entity: str = ""
    via_distance: int = 0
    via_strength: float = 0.0


@dataclass(frozen=True, slots=True)
class EntityBoostContext:
    """Everything the entity boost needs for one query, read in one round trip."""

    candidates: tuple[EntityCandidate, ...] = ()
    query_entities: tuple[QueryEntity, ...] = ()
    related: tuple[RelatedEntity, ...] = ()
    expansion: tuple[EntityCandidate, ...] = ()


@dataclass(frozen=True, slots=True)
class ExtractionResult:
    """What an extractor found. ``dropped`` counts the items validation rejected, by reason
    (``empty_name``, ``unknown_chunk``, ``unknown_endpoint``, ``bad_strength``,
    ``self_relation``, ``ungrounded``, ``malformed``, ``failed_batch``, ...)."""

    entities: tuple[Entity, ...] = ()
    relations: tuple[EntityRelation, ...] = ()
    mentions: tuple[EntityMention, ...] = ()
    dropped: Mapping[str, int] = field(default_factory=dict, compare=False, hash=False)

    def entity_by_name(self, name: str) -> list[Entity]:
        """The entities whose normalised name equals ``normalise_name(name)``."""
        key = normalise_name(name)
        return [e for e in self.entities if normalise_name(e.name) == key]
