"""Entity-graph capability of Neo4jStore: entities, their relationships and chunk mentions
(seeds 001 and 002), centrality, and the Leiden communities with their reports.

Writes are idempotent ``UNWIND ... MERGE`` statements in batches; the entity retrieval of seed
001 and the local-search context of seed 002 are one statement each
(``cypher/entities/boost_retrieve`` and ``cypher/entities/local_context``). Replacing the
communities of a namespace is one transaction: readers see the old set or the new one.

Deleting a document (``cypher/documents/delete_document``) deletes the entities no chunk
mentions any more; ``DETACH DELETE`` takes their ``IN_COMMUNITY`` links with them. A community
left without members is hidden from ``list_communities`` at once and removed by
``prune_communities`` (``build_communities`` runs it too, by replacing everything).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

from ..communities.leiden import Community
from ..communities.reports import CommunityReport
from ..entities.centrality import normalise_max, pagerank
from ..entities.model import Entity, EntityMention, EntityRelation, normalise_name
from ..errors import ConfigurationError, InputError, NotFoundError
from ..types import Chunk, ChunkFilter, filters_active, filters_to_param
from .documents import _check_top_k, chunk_from_row
from .graph import entity_key_rows
from .runner import CypherRunner, Plan, Read, read_methods

__all__ = [
    "ENTITY_MAX_HOPS",
    "EntitiesMixin",
    "EntityDetails",
    "EntityGraph",
    "EntityListing",
    "EntityTextUnit",
    "Neighbour",
    "ScoredEntity",
    "StoredCommunity",
]

#: hops unrolled in cypher/entities/neighbours.cypher and boost_retrieve.cypher
ENTITY_MAX_HOPS = 3
ENTITY_ROWS = 500
LINK_ROWS = 2000
CENTRALITY_KINDS = ("degree", "pagerank")


# --- what the reads return -------------------------------------------------------------------


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
class StoredCommunity:
    """A ``(:Community)`` node and its report. ``members`` is the live member count;
    ``member_entities`` and ``child_ids`` are filled by ``get_community`` only, ``matched`` (how
    many of the asked entities belong to it) by ``community_reports_for_entities`` only."""

    id: str
    level: int
    title: str
    summary: str
    full_content: str
    rank: float
    size: int
    rating: float | None = None
    members: int | None = None
    parent_id: str | None = None
    child_ids: tuple[str, ...] = ()
    member_entities: tuple[dict[str, Any], ...] = ()
    matched: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "level": self.level,
            "title": self.title,
            "summary": self.summary,
            "full_content": self.full_content,
            "rank": self.rank,
            "rating": self.rating,
            "size": self.size,
            "members": self.members,
            "parent_id": self.parent_id,
            "child_ids": list(self.child_ids),
            "member_entities": list(self.member_entities),
            "matched": self.matched,
        }


# --- row conversions -------------------------------------------------------------------------


def _metadata_text(metadata: Mapping[str, Any]) -> str:
    try:
        return json.dumps(dict(metadata), sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputError(f"relation metadata must be JSON-serialisable: {exc}") from None


def _community_from_row(row: Mapping[str, Any], **extra: Any) -> StoredCommunity:
    c = row["community"]
    return StoredCommunity(
        id=c["id"],
        level=int(c.get("level") or 0),
        title=c.get("title") or "",
        summary=c.get("summary") or "",
        full_content=c.get("full_content") or "",
        rank=float(c.get("rank") or 0.0),
        size=int(c.get("size") or 0),
        rating=c.get("rating"),
        **extra,
    )


def _unit_weight(value: Any) -> float:
    """A stored weight as a float in [0, 1] (edges written by other tools may lack one)."""
    if value is None or isinstance(value, bool):
        return 1.0
    w = float(value)
    return 0.0 if math.isnan(w) else min(1.0, max(0.0, w))


class EntitiesMixin:
    runner: CypherRunner
    namespace: str
    vector_overfetch: int

    def check_embedding(self, embedding: Any, *, what: str = "embedding") -> list[float]: ...

    # -- conversions needing the namespace ------------------------------------------------------
    def _entity_from_row(self, row: Mapping[str, Any]) -> Entity:
        return Entity(
            id=row["id"],
            name=row.get("name") or row["id"],
            type=row.get("type") or "OTHER",
            description=row.get("description") or "",
            source_chunk_id=row.get("source_chunk_id"),
            namespace=self.namespace,
        )

    def _check_entity_ids(self, ids: Sequence[str], what: str) -> list[str]:
        if isinstance(ids, str):
            raise InputError(f"{what} must be a list of ids, not one string")
        out = list(dict.fromkeys(ids))
        if not all(isinstance(i, str) and i for i in out):
            raise InputError(f"{what} must be non-empty strings")
        return out

    # -- writes ---------------------------------------------------------------------------------
    def upsert_entities(self, entities: Sequence[Entity]) -> int:
        """MERGE entities by id (one statement per ``ENTITY_ROWS``). A stored description is
        replaced only by a longer one, together with its embedding; the first name and source
        chunk are kept. Entities must belong to this store's namespace (their id embeds it).
        Returns the rows written."""
        rows: dict[str, dict[str, Any]] = {}
        for e in entities:
            if not isinstance(e, Entity):
                raise InputError(f"upsert_entities takes Entity values, got {type(e).__name__}")
            if e.namespace != self.namespace:
                raise InputError(
                    f"entity {e.name!r} was made for namespace {e.namespace!r}, the store's is "
                    f"{self.namespace!r}; ids embed the namespace, so build it with "
                    "Entity.create(..., namespace=store.namespace)"
                )
            embedding = (
                self.check_embedding(e.embedding, what=f"entity {e.name!r} embedding")
                if e.embedding is not None
                else None
            )
            row = {
                "id": e.id,
                "name": e.name,
                "name_key": normalise_name(e.name),
                "type": e.type,
                "description": e.description or "",
                "source_chunk_id": e.source_chunk_id,
                "embedding": embedding,
            }
            old = rows.get(e.id)
            if old is None or len(row["description"]) > len(old["description"]):
                rows[e.id] = row
        ordered = [rows[k] for k in sorted(rows)]
        written = 0
        for start in range(0, len(ordered), ENTITY_ROWS):
            written += self.runner.write(
                "entities/upsert_entities", namespace=self.namespace, rows=ordered[start : start + ENTITY_ROWS]
            )[0]["written"]
        return written

    def upsert_relations(self, relations: Sequence[EntityRelation]) -> int:
        """MERGE ``(a)-[:RELATED_TO {type}]->(b)``; a repeat keeps the highest weight, the
        longest description and the earliest sequence. Relations whose ends are not entities
        of the namespace are skipped. Returns the rows written."""
        best: dict[tuple[str, str, str], EntityRelation] = {}
        for r in relations:
            if not isinstance(r, EntityRelation):
                raise InputError(f"upsert_relations takes EntityRelation values, got {type(r).__name__}")
            if r.source_id == r.target_id:
                raise InputError(f"relation {r.type} of {r.source_id} to itself is not allowed")
            if r.sequence is not None and (isinstance(r.sequence, bool) or not isinstance(r.sequence, int)):
                raise InputError(f"relation {r.source_id}->{r.target_id} sequence must be an integer")
            old = best.get(r.key())
            if old is None or r.weight > old.weight:
                best[r.key()] = r
        rows = [
            {
                "source_id": r.source_id,
                "target_id": r.target_id,
                "type": r.type,
                "weight": float(r.weight),
                "description": r.description or "",
                "sequence": r.sequence,
                "metadata": _metadata_text(r.metadata),
            }
            for _, r in sorted(best.items())
        ]
        written = 0
        for start in range(0, len(rows), LINK_ROWS):
            written += self.runner.write(
                "entities/upsert_relations", namespace=self.namespace, rows=rows[start : start + LINK_ROWS]
            )[0]["written"]
        return written

    def upsert_mentions(self, mentions: Sequence[EntityMention]) -> int:
        """MERGE ``(chunk)-[:MENTIONS {count}]->(entity)``; the count is set, not added.
        Mentions of chunks or entities outside the namespace are skipped."""
        counts: dict[tuple[str, str], int] = {}
        for m in mentions:
            if not isinstance(m, EntityMention):
                raise InputError(f"upsert_mentions takes EntityMention values, got {type(m).__name__}")
            key = (m.chunk_id, m.entity_id)
            counts[key] = max(counts.get(key, 0), m.count)
        rows = [{"chunk_id": c, "entity_id": e, "count": n} for (c, e), n in sorted(counts.items())]
        written = 0
        for start in range(0, len(rows), LINK_ROWS):
            written += self.runner.write(
                "entities/upsert_mentions", namespace=self.namespace, rows=rows[start : start + LINK_ROWS]
            )[0]["written"]
        return written

    # -- entity reads ---------------------------------------------------------------------------
    def search_entities(self, embedding: Sequence[float], top_k: int) -> list[ScoredEntity]:
        """Entities whose description embedding is nearest ``embedding``, score descending.
        Never loses recall to other namespaces (exact scan when the index is crowded)."""
        _check_top_k(top_k)
        vector = self.check_embedding(embedding, what="query embedding")
        rows = self.runner.read(
            "entities/search_entities",
            namespace=self.namespace,
            embedding=vector,
            top_k=top_k,
            fetch_k=self.vector_fetch_k(top_k),
        )
        return [ScoredEntity(self._entity_from_row(r["entity"]), float(r["score"])) for r in rows]

    def entity_neighbours(
        self,
        entity_ids: Sequence[str],
        max_hops: int,
        relation_types: Sequence[str] | None = None,
        max_sequence: int | None = None,
    ) -> dict[str, Neighbour]:
        """Entities within ``max_hops`` (0..3) of ``entity_ids`` over RELATED_TO in either
        direction, in ONE statement (see ``cypher/entities/neighbours.cypher`` for the BFS
        rules). ``relation_types`` keeps only those types (None = all); ``max_sequence`` keeps
        relationships whose sequence is at most that (relationships without one always pass).
        The start entities are not in the answer."""
        ids = self._check_entity_ids(entity_ids, "entity_ids")
        hops = _check_hops(max_hops)
        if not ids or hops == 0:
            return {}
        rows = self.runner.read(
            "entities/neighbours",
            namespace=self.namespace,
            ids=ids,
            max_hops=hops,
            relation_types=_relation_types(relation_types),
            max_sequence=_sequence(max_sequence),
        )
        return {
            r["entity_id"]: Neighbour(
                int(r["distance"]), float(r["strength"]), tuple((p[0], p[1]) for p in r["path"])
            )
            for r in rows
        }

    def chunk_mentions(self, chunk_ids: Sequence[str]) -> dict[str, list[str]]:
        """Chunk id -> ids of the entities it mentions (sorted); chunks not in the namespace
        are absent."""
        ids = self._check_entity_ids(chunk_ids, "chunk_ids")
        if not ids:
            return {}
        rows = self.runner.read("entities/chunk_mentions", namespace=self.namespace, ids=ids)
        return {r["chunk_id"]: sorted(r["entity_ids"]) for r in rows}

    def namespace_mentions(self) -> dict[str, list[str]]:
        """Chunk id -> ids of the entities it mentions, for every chunk of the namespace that
        mentions any."""
        rows = self.runner.read("entities/namespace_mentions", namespace=self.namespace)
        return {r["chunk_id"]: sorted(r["entity_ids"]) for r in rows}

    def document_titles(self, document_ids: Sequence[str] | None = None) -> list[tuple[str, str, str | None]]:
        """(document id, title, id of its first leaf chunk) of the documents with a title."""
        ids = None if document_ids is None else self._check_entity_ids(document_ids, "document_ids")
        rows = self.runner.read("entities/document_titles", namespace=self.namespace, document_ids=ids)
        return [(r["document_id"], r["title"], r["first_chunk_id"]) for r in rows]

    def entity_text_units(self, entity_ids: Sequence[str]) -> list[EntityTextUnit]:
        """The chunks mentioning any of the entities, with content and token count, most
        mentions first."""
        ids = self._check_entity_ids(entity_ids, "entity_ids")
        if not ids:
            return []
        rows = self.runner.read("entities/text_units", namespace=self.namespace, ids=ids)
        return [
            EntityTextUnit(chunk_from_row(r["chunk"]), tuple(sorted(r["entity_ids"])), int(r["mentions"] or 0))
            for r in rows
        ]

    def entity_source_chunks(self, entity_ids: Sequence[str]) -> dict[str, Chunk]:
        """Entity id -> the chunk it was first found in (absent when that chunk is gone)."""
        ids = self._check_entity_ids(entity_ids, "entity_ids")
        if not ids:
            return {}
        rows = self.runner.read("entities/source_chunks", namespace=self.namespace, ids=ids)
        return {r["entity_id"]: chunk_from_row(r["chunk"]) for r in rows}

    def known_entities(self) -> list[Entity]:
        """Id, name and type of every entity (no counts, no embedding): cheap enough to hand a
        whole namespace to an extractor as ``known_entities``."""
        rows = self.runner.read("entities/known", namespace=self.namespace)
        return [self._entity_from_row(r) for r in rows]

    def extraction_chunks(self, document_ids: Sequence[str] | None = None) -> list[Chunk]:
        """The leaf chunks with text of the namespace's documents (or of ``document_ids``), in
        ingestion order, in one query: parent chunks are skipped (they repeat their
        children's text)."""
        ids = None if document_ids is None else self._check_entity_ids(document_ids, "document_ids")
        rows = self.runner.read("entities/extraction_chunks", namespace=self.namespace, document_ids=ids)
        return [chunk_from_row(r["chunk"]) for r in rows]

    def list_entities(self, *, limit: int | None = None) -> list[EntityListing]:
        """Entities with mention and relationship counts, most mentioned first."""
        if limit is not None:
            _check_top_k(limit)
        rows = self.runner.read("entities/list_entities", namespace=self.namespace, limit=limit or 10_000_000)
        return [
            EntityListing(self._entity_from_row(r["entity"]), int(r["mentions"]), int(r["degree"]))
            for r in rows
        ]

    def get_entity_by_name(self, name: str, *, limit: int = 20) -> list[EntityDetails]:
        """The entities called ``name`` (compared normalised; one per type), most mentioned
        first, each with up to ``limit`` relationships and mentioning chunks.
        ``NotFoundError`` when there is none."""
        if not isinstance(name, str) or not normalise_name(name):
            raise InputError("an entity name must be non-empty text")
        _check_top_k(limit)
        rows = self.runner.read(
            "entities/get_by_name", namespace=self.namespace, name_key=normalise_name(name), limit=limit
        )
        if not rows:
            raise NotFoundError(f"no entity named {name!r} in namespace {self.namespace!r}")
        return [
            EntityDetails(
                entity=self._entity_from_row(r["entity"]),
                relations=list(r["relations"]),
                mentions=list(r["mentions"]),
                mention_total=int(r["mention_total"]),
            )
            for r in rows
        ]

    def read_entity_graph(self) -> EntityGraph:
        """Every entity of the namespace and the weighted RELATED_TO relationships between
        them, in one query (the input of Leiden and PageRank)."""
        return self.runner.run(self._read_entity_graph())

    def _read_entity_graph(self) -> Plan[EntityGraph]:
        rows = yield Read("entities/graph", {"namespace": self.namespace})
        entities = [self._entity_from_row(r["entity"]) for r in rows]
        relations = []
        for r in rows:
            source = r["entity"]["id"]
            for target, type_, weight, description, sequence in r["edges"]:
                if target == source:
                    continue
                relations.append(
                    EntityRelation(
                        source_id=source,
                        target_id=target,
                        type=type_ or "RELATED_TO",
                        weight=_unit_weight(weight),
                        description=description or "",
                        sequence=sequence,
                    )
                )
        return EntityGraph(entities=entities, relations=relations)

    def entity_centrality(self, kind: str = "degree") -> dict[str, float]:
        """Entity id -> importance in [0, 1] (the largest is 1.0).

        ``degree``: RELATED_TO relationships per entity, counted in the database with
        ``COUNT {}``. ``pagerank``: weighted PageRank (damping 0.85, undirected) computed in
        Python (numpy power iterations) over the graph read in one query
        (``read_entity_graph``); no GDS needed."""
        return self.runner.run(self._entity_centrality(kind))

    async def aentity_centrality(self, kind: str = "degree") -> dict[str, float]:
        return await self.aio.run(self._entity_centrality(kind))

    def _entity_centrality(self, kind: str) -> Plan[dict[str, float]]:
        if kind == "degree":
            rows = yield Read("entities/degree", {"namespace": self.namespace})
            return normalise_max({r["entity_id"]: float(r["degree"]) for r in rows})
        if kind == "pagerank":
            graph = yield from self._read_entity_graph()
            return normalise_max(pagerank([e.id for e in graph.entities], graph.weighted_edges()))
        raise ConfigurationError(f"centrality must be one of {', '.join(CENTRALITY_KINDS)}, got {kind!r}")

    # -- one-statement retrieval contexts ---------------------------------------------------------
    def _entity_boost_context(
        self,
        embedding: Sequence[float],
        *,
        chunk_k: int,
        entity_k: int = 3,
        max_hops: int = 1,
        relation_types: Sequence[str] | None = None,
        max_sequence: int | None = None,
        expand_k: int = 0,
        min_similarity: float = 0.0,
        filters: Sequence[ChunkFilter] = (),
        entity_floor: float = 0.0,
        entity_keys: Sequence[Mapping[str, Any]] = (),
        named_max_chunks: int = 25,
    ) -> Plan[dict[str, Any]]:
        """Candidates, query entities, related entities and expansion chunks of seed 001 in ONE
        round trip (``cypher/entities/boost_retrieve.cypher``). Returns the raw lists;
        ``retrieval.entity.EntityGraphRetriever`` does the arithmetic."""
        _check_top_k(chunk_k)
        _check_top_k(entity_k)
        if isinstance(expand_k, bool) or not isinstance(expand_k, int) or expand_k < 0:
            raise InputError(f"expand_k must be an integer >= 0, got {expand_k!r}")
        vector = yield from self._check_embedding(embedding, "query embedding")
        rows = yield Read(
            "entities/boost_retrieve",
            dict(
                namespace=self.namespace,
                embedding=vector,
                chunk_k=chunk_k,
                fetch_k=self.vector_fetch_k(chunk_k),
                filter=filters_to_param(filters),
                min_similarity=float(min_similarity),
                entity_k=entity_k,
                entity_fetch_k=max(entity_k * self.vector_overfetch * 4, entity_k + 20),
                entity_floor=float(entity_floor),
                entity_keys=entity_key_rows(entity_keys),
                named_max_chunks=int(named_max_chunks),
                max_hops=_check_hops(max_hops),
                relation_types=_relation_types(relation_types),
                max_sequence=_sequence(max_sequence),
                expand_k=expand_k,
            ),
        )
        return rows[0]

    entity_boost_context, aentity_boost_context = read_methods(_entity_boost_context)

    def _local_context(
        self,
        embedding: Sequence[float],
        *,
        entity_k: int = 10,
        max_tokens: int = 4000,
        relationship_k: int = 20,
        report_k: int = 3,
        unit_k: int = 10,
        min_similarity: float = 0.0,
        filters: Sequence[ChunkFilter] = (),
    ) -> Plan[dict[str, Any]]:
        """The local-search context of seed 002 in ONE round trip
        (``cypher/entities/local_context.cypher``): entities, text units within the token
        budget (at most ``unit_k``, of the chunks passing ``filters`` and scoring at least
        ``min_similarity``), relationships, community reports. Returns the raw lists."""
        _check_top_k(entity_k)
        _check_top_k(unit_k)
        for label, value in (("max_tokens", max_tokens), ("relationship_k", relationship_k), ("report_k", report_k)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InputError(f"{label} must be an integer >= 0, got {value!r}")
        vector = yield from self._check_embedding(embedding, "query embedding")
        param = filters_to_param(filters)
        rows = yield Read(
            "entities/local_context",
            dict(
                namespace=self.namespace,
                embedding=vector,
                entity_k=entity_k,
                entity_fetch_k=max(entity_k * self.vector_overfetch * 4, entity_k + 20),
                max_tokens=max_tokens,
                unit_k=unit_k,
                min_similarity=float(min_similarity),
                filter=param,
                filtered=filters_active(param),
                relationship_k=relationship_k,
                report_k=report_k,
            ),
        )
        return rows[0]

    local_context, alocal_context = read_methods(_local_context)

    # -- communities ------------------------------------------------------------------------------
    def gds_available(self) -> bool:
        """Whether the server has the Graph Data Science Leiden procedures."""
        return bool(self.runner.read("communities/gds_available")[0]["available"])

    def write_communities(
        self,
        communities: Sequence[Community],
        reports: Mapping[str, CommunityReport] | Iterable[CommunityReport] = (),
    ) -> dict[str, int]:
        """Replace the namespace's communities in ONE transaction: delete the old Community
        nodes (with their IN_COMMUNITY and PARENT links), create the new ones with their
        reports, link members and parents (each in statements of bounded size). Readers see the
        old set or the new one, never a mix; a failure leaves the old set in place.

        ``reports`` maps community id -> report (or is a list of reports); a community without
        one gets an empty report. Returns counts: deleted, communities, memberships, parents."""
        by_id: dict[str, Community] = {}
        for c in communities:
            if not isinstance(c, Community):
                raise InputError(f"write_communities takes Community values, got {type(c).__name__}")
            if c.id in by_id:
                raise InputError(f"community {c.id} given twice")
            by_id[c.id] = c
        report_map: dict[str, CommunityReport] = (
            dict(reports) if isinstance(reports, Mapping) else {r.community_id: r for r in reports}
        )
        unknown = sorted(set(report_map) - set(by_id))
        if unknown:
            raise InputError(f"report(s) for unknown communit{'y' if len(unknown) == 1 else 'ies'}: {', '.join(unknown[:5])}")
        for c in by_id.values():
            if c.parent_id is not None and c.parent_id not in by_id:
                raise InputError(f"community {c.id} names parent {c.parent_id}, which is not being written")

        rows = []
        for cid in sorted(by_id):
            c = by_id[cid]
            rep = report_map.get(cid)
            rows.append(
                {
                    "id": cid,
                    "props": {
                        "level": int(c.level),
                        "size": int(c.size),
                        "title": rep.title if rep else "",
                        "summary": rep.summary if rep else "",
                        "full_content": rep.full_content if rep else "",
                        "rank": float(rep.rank) if rep else 0.0,
                        "rating": rep.rating if rep else None,
                    },
                }
            )
        members = [{"entity_id": m, "community_id": c.id} for c in by_id.values() for m in c.members]
        parents = [{"child_id": c.id, "parent_id": c.parent_id} for c in by_id.values() if c.parent_id]
        ns = self.namespace
        steps: list[tuple[str, Mapping[str, Any]]] = [("communities/delete_all", {"namespace": ns})]
        steps += [
            ("communities/upsert_communities", {"namespace": ns, "rows": rows[i : i + ENTITY_ROWS]})
            for i in range(0, len(rows), ENTITY_ROWS)
        ]
        steps += [
            ("communities/assign_members", {"namespace": ns, "rows": members[i : i + LINK_ROWS]})
            for i in range(0, len(members), LINK_ROWS)
        ]
        steps += [
            ("communities/link_parents", {"namespace": ns, "rows": parents[i : i + LINK_ROWS]})
            for i in range(0, len(parents), LINK_ROWS)
        ]
        results = self.runner.write_tx(steps)
        counts = {"deleted": int(results[0][0]["deleted"]), "communities": 0, "memberships": 0, "parents": 0}
        for (name, _), out in zip(steps[1:], results[1:]):
            key = {
                "communities/upsert_communities": "communities",
                "communities/assign_members": "memberships",
                "communities/link_parents": "parents",
            }[name]
            counts[key] += int(out[0]["written"])
        return counts

    def prune_communities(self) -> int:
        """Remove communities no entity belongs to any more; returns how many went."""
        return int(self.runner.write("communities/prune_empty", namespace=self.namespace)[0]["pruned"])

    def list_communities(self, *, level: int | None = None, limit: int | None = None) -> list[StoredCommunity]:
        """Communities by level, then rank (highest first); empty ones are not listed."""
        if level is not None and (isinstance(level, bool) or not isinstance(level, int) or level < 0):
            raise InputError(f"level must be an integer >= 0, got {level!r}")
        if limit is not None:
            _check_top_k(limit)
        rows = self.runner.read(
            "communities/list_communities", namespace=self.namespace, level=level, limit=limit or 10_000_000
        )
        return [
            _community_from_row(r, members=int(r["members"]), parent_id=r.get("parent_id")) for r in rows
        ]

    def get_community(self, community_id: str) -> StoredCommunity:
        """One community with its report, parent, children and members; ``NotFoundError``."""
        if not isinstance(community_id, str) or not community_id:
            raise InputError("community_id must be a non-empty string")
        rows = self.runner.read("communities/get_community", namespace=self.namespace, community_id=community_id)
        if not rows:
            raise NotFoundError(f"no community {community_id!r} in namespace {self.namespace!r}")
        r = rows[0]
        return _community_from_row(
            r,
            members=len(r["members"]),
            parent_id=r.get("parent_id"),
            child_ids=tuple(sorted(r["child_ids"])),
            member_entities=tuple(r["members"]),
        )

    def community_reports_for_entities(self, entity_ids: Sequence[str], top_k: int = 3) -> list[StoredCommunity]:
        """Reports of the communities (any level) these entities belong to, highest rank first
        (ties: more of the entities, lower level), at most ``top_k``."""
        ids = self._check_entity_ids(entity_ids, "entity_ids")
        _check_top_k(top_k)
        if not ids:
            return []
        rows = self.runner.read(
            "communities/reports_for_entities", namespace=self.namespace, ids=ids, top_k=top_k
        )
        return [_community_from_row(r, matched=int(r["matched"])) for r in rows]


def _check_hops(max_hops: Any) -> int:
    if isinstance(max_hops, bool) or not isinstance(max_hops, int) or not 0 <= max_hops <= ENTITY_MAX_HOPS:
        raise ConfigurationError(f"max_hops must be an integer in 0..{ENTITY_MAX_HOPS}, got {max_hops!r}")
    return max_hops


def _relation_types(types: Sequence[str] | None) -> list[str] | None:
    if types is None:
        return None
    if isinstance(types, str):
        types = [types]
    out = list(dict.fromkeys(types))
    if not out or not all(isinstance(t, str) and t.strip() for t in out):
        raise ConfigurationError("relation types must be a non-empty list of non-empty strings (or None for all)")
    return out


def _sequence(max_sequence: Any) -> int | None:
    if max_sequence is None:
        return None
    if isinstance(max_sequence, bool) or not isinstance(max_sequence, int):
        raise ConfigurationError(f"max_sequence must be an integer or None, got {max_sequence!r}")
    return max_sequence
