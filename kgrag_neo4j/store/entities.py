"""Entity-graph capability of Neo4jStore: entities, their relationships and chunk mentions
(entity-boosted retrieval and local search), and the reads centrality and Leiden start from.

Writes are idempotent ``UNWIND ... MERGE`` statements in batches; the entity-boosted retrieval
and the local-search context are one statement each
(``cypher/entities/boost_retrieve`` and ``cypher/entities/local_context``). The store counts
degrees in the database and reads the weighted entity graph in one query; PageRank over it
runs in ``entities/centrality.py``, Leiden in ``communities/``.

Deleting a document (``cypher/documents/delete_document``) deletes the entities no chunk
mentions any more; ``DETACH DELETE`` takes their ``IN_COMMUNITY`` links with them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, InputError, NotFoundError
from ..steps import Steps, run_steps, twin_methods
from ..types import Chunk, ChunkFilter, filters_active, filters_to_param
from ..types.context import LocalContext
from ..types.entities import (
    ENTITY_MAX_HOPS,
    MAX_ENTITY_NAME_CHARS,
    Entity,
    EntityBoostContext,
    EntityDetails,
    EntityGraph,
    EntityListing,
    EntityMention,
    EntityRelation,
    EntityTextUnit,
    Neighbour,
    ScoredEntity,
    normalise_name,
)
from ..validation import check_int
from ._rows import (
    _check_top_k,
    boost_context_from_row,
    check_count,
    check_ids,
    chunk_from_row,
    context_from_row,
    entity_from_row,
    entity_key_rows,
    metadata_text,
    unit_weight,
)
from .aio import AsyncDrivers, Read
from .runner import CypherRunner, check_vanished

if TYPE_CHECKING:
    from .schema import VectorSlot

__all__ = [
    "ENTITY_MAX_HOPS",
    "EntitiesMixin",
    "EntityDetails",
    "EntityGraph",
    "EntityListing",
    "EntityTextUnit",
    "Neighbour",
    "ScoredEntity",
]

ENTITY_ROWS = 500
LINK_ROWS = 2000


class EntitiesMixin:
    runner: CypherRunner
    aio: AsyncDrivers
    namespace: str
    vector_overfetch: int

    if TYPE_CHECKING:  # defined by SchemaMixin and DocumentsMixin

        def check_embedding(self, embedding: Any, *, what: str = "embedding") -> list[float]: ...
        def _check_embedding(self, embedding: Any, what: str) -> Steps[list[float]]: ...
        def vector_fetch_k(self, top_k: int) -> int: ...
        def _query_vector(self, embedding: Any, what: str = ...) -> Steps[tuple[list[float], dict[str, str]]]: ...
        def vector_slot(self) -> VectorSlot: ...

    def _entity_from_row(self, row: Mapping[str, Any]) -> Entity:
        return entity_from_row(row, self.namespace)

    def _check_entity_ids(self, ids: Sequence[str], what: str) -> list[str]:
        return check_ids(ids, what)

    # -- writes ---------------------------------------------------------------------------------
    def upsert_entities(self, entities: Sequence[Entity], *, build: str | None = None) -> int:
        """MERGE entities by id (one transaction per ``ENTITY_ROWS``). A stored description is
        replaced only by a longer one, together with its embedding; the first name and source
        chunk are kept. Entities must belong to this store's namespace (their id embeds it; an
        id another namespace uses is refused and its batch rolled back).

        With ``build`` (an id of your choosing) new entities are staged: no read sees them
        until ``publish_entities(build)``, so a build that stops half-way shows nothing
        half-built. Returns the rows written."""
        if build is not None and (not isinstance(build, str) or not build):
            raise InputError("build must be a non-empty string (or None)")
        rows: dict[str, dict[str, Any]] = {}
        for e in entities:
            if not isinstance(e, Entity):
                raise InputError(f"upsert_entities takes Entity values, got {type(e).__name__}")
            if len(e.name) > MAX_ENTITY_NAME_CHARS:
                # refused before the first transaction: a batch the database refuses after
                # others were committed would leave them staged, in no build
                raise InputError(
                    f"entity name {e.name[:40]!r}... is {len(e.name)} characters; the limit is {MAX_ENTITY_NAME_CHARS}"
                )
            if e.namespace != self.namespace:
                raise InputError(
                    f"entity {e.name!r} was made for namespace {e.namespace!r}, the store's is "
                    f"{self.namespace!r}; ids embed the namespace, so build it with "
                    "Entity.create(..., namespace=store.namespace)"
                )
            embedding = (
                self.check_embedding(e.embedding, what=f"entity {e.name!r} embedding") if e.embedding is not None else None
            )
            row: dict[str, Any] = {
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
        prop = self.vector_slot().vector_property
        written = 0
        for start in range(0, len(ordered), ENTITY_ROWS):
            batch = ordered[start : start + ENTITY_ROWS]

            def work(tx, batch=batch) -> int:
                row = tx.run("entities/upsert_entities", namespace=self.namespace, build=build, rows=batch, vector_property=prop)[
                    0
                ]
                check_vanished("entity", row["vanished"])
                taken = set(row["ids"])
                foreign = [r["id"] for r in batch if r["id"] not in taken]
                if foreign:  # raised inside the transaction: the batch is rolled back
                    raise InputError(f"entity id {foreign[0]!r} belongs to another namespace")
                return int(row["written"])

            written += self.runner.write_fn(work)
        return written

    def publish_entities(self, build: str) -> int:
        """Make the entities ``upsert_entities(..., build=build)`` staged visible, in one
        transaction, with every mention and relation written to them. Returns how many."""
        if not isinstance(build, str) or not build:
            raise InputError("build must be a non-empty string")
        return int(self.runner.write("entities/publish_build", namespace=self.namespace, build=build)[0]["published"])

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
            if r.sequence is not None:
                check_int(r.sequence, f"relation {r.source_id}->{r.target_id} sequence", error=InputError)
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
                "metadata": metadata_text(r.metadata, "relation metadata"),
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
        vector, slot = run_steps(self._query_vector(embedding))
        rows = self.runner.read(
            "entities/search_entities",
            namespace=self.namespace,
            vector_property=slot["vector_property"],
            entity_index=slot["entity_index"],
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
            r["entity_id"]: Neighbour(int(r["distance"]), float(r["strength"]), tuple((p[0], p[1]) for p in r["path"]))
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
        return [EntityTextUnit(chunk_from_row(r["chunk"]), tuple(sorted(r["entity_ids"])), int(r["mentions"] or 0)) for r in rows]

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

    def extraction_chunks(self, document_ids: Sequence[str] | None = None, *, skip_key: str | None = None) -> list[Chunk]:
        """The leaf chunks with text of the namespace's documents (or of ``document_ids``), in
        ingestion order, in one query: parent chunks are skipped (they repeat their
        children's text), and so are the chunks marked read with ``skip_key``
        (:meth:`mark_extracted`)."""
        ids = None if document_ids is None else self._check_entity_ids(document_ids, "document_ids")
        rows = self.runner.read("entities/extraction_chunks", namespace=self.namespace, document_ids=ids, skip_key=skip_key)
        return [chunk_from_row(r["chunk"]) for r in rows]

    def mark_extracted(self, chunk_ids: Sequence[str], key: str) -> int:
        """Mark ``chunk_ids`` as read by the extractor whose :attr:`extraction_key` is ``key``."""
        marked = 0
        for start in range(0, len(chunk_ids), LINK_ROWS):
            marked += int(
                self.runner.write(
                    "entities/mark_extracted",
                    namespace=self.namespace,
                    chunk_ids=list(chunk_ids[start : start + LINK_ROWS]),
                    key=key,
                )[0]["marked"]
            )
        return marked

    def list_entities(self, *, limit: int | None = None) -> list[EntityListing]:
        """Entities with mention and relationship counts, most mentioned first."""
        if limit is not None:
            _check_top_k(limit)
        rows = self.runner.read("entities/list_entities", namespace=self.namespace, limit=limit or 10_000_000)
        return [EntityListing(self._entity_from_row(r["entity"]), int(r["mentions"]), int(r["degree"])) for r in rows]

    def get_entity_by_name(self, name: str, *, limit: int = 20) -> list[EntityDetails]:
        """The entities called ``name`` (compared normalised; one per type), most mentioned
        first, each with up to ``limit`` relationships and mentioning chunks.
        ``NotFoundError`` when there is none."""
        if not isinstance(name, str) or not normalise_name(name):
            raise InputError("an entity name must be non-empty text")
        _check_top_k(limit)
        rows = self.runner.read("entities/get_by_name", namespace=self.namespace, name_key=normalise_name(name), limit=limit)
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

    def _read_entity_graph(self) -> Steps[EntityGraph]:
        rows = yield from Read(self, "entities/graph", {"namespace": self.namespace})
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
                        weight=unit_weight(weight),
                        description=description or "",
                        sequence=sequence,
                    )
                )
        return EntityGraph(entities=entities, relations=relations)

    #: every entity of the namespace and the weighted RELATED_TO relationships between them,
    #: in one query (the input of Leiden and PageRank)
    read_entity_graph, aread_entity_graph = twin_methods(_read_entity_graph)

    def _entity_degrees(self) -> Steps[dict[str, int]]:
        """Entity id -> its RELATED_TO relationship count, counted in the database with
        ``COUNT {}`` (degree centrality, before ``entities.centrality`` normalises it)."""
        rows = yield from Read(self, "entities/degree", {"namespace": self.namespace})
        return {r["entity_id"]: int(r["degree"]) for r in rows}

    entity_degrees, aentity_degrees = twin_methods(_entity_degrees)

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
    ) -> Steps[EntityBoostContext]:
        """Candidates, query entities, related entities and expansion chunks of entity-boosted retrieval in ONE
        round trip (``cypher/entities/boost_retrieve.cypher``);
        ``retrieval.entity.EntityGraphRetriever`` does the arithmetic."""
        _check_top_k(chunk_k)
        _check_top_k(entity_k)
        check_count(expand_k, "expand_k")
        vector, slot = yield from self._query_vector(embedding)
        rows = yield from Read(
            self,
            "entities/boost_retrieve",
            dict(
                slot,
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
        return boost_context_from_row(rows[0])

    entity_boost_context, aentity_boost_context = twin_methods(_entity_boost_context)

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
    ) -> Steps[LocalContext]:
        """The local-search context in ONE round trip
        (``cypher/entities/local_context.cypher``): entities, text units within the token
        budget (at most ``unit_k``, of the chunks passing ``filters`` and scoring at least
        ``min_similarity``), relationships, community reports."""
        _check_top_k(entity_k)
        _check_top_k(unit_k)
        for label, value in (("max_tokens", max_tokens), ("relationship_k", relationship_k), ("report_k", report_k)):
            check_count(value, label)
        vector, slot = yield from self._query_vector(embedding)
        param = filters_to_param(filters)
        rows = yield from Read(
            self,
            "entities/local_context",
            dict(
                namespace=self.namespace,
                vector_property=slot["vector_property"],
                entity_index=slot["entity_index"],
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
        return context_from_row(rows[0])

    local_context, alocal_context = twin_methods(_local_context)


def _check_hops(max_hops: Any) -> int:
    return check_int(max_hops, "max_hops", minimum=0, maximum=ENTITY_MAX_HOPS)


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
    return None if max_sequence is None else check_int(max_sequence, "max_sequence")
