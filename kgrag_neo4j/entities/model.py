"""What extraction produces, and how two extractions merge. The value types (``Entity``,
``EntityRelation``, ``EntityMention``) and the name/id normalisers live in
``kgrag_neo4j.graph_types.entities`` and are re-exported here.

Merging rules (``merge_results``), used wherever two extractions meet:

- entities with the same id: the longest description wins (the first one on a tie); the first
  known ``source_chunk_id`` and embedding are kept;
- mentions with the same ``(chunk_id, entity_id)``: the highest count (the same chunk is the
  same text, so counts are not additive and merging a result with itself changes nothing);
- relations with the same ``(source_id, target_id, type)``: the highest weight, the longest
  description, the first ``sequence``, metadata merged (first value wins).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..graph_types.entities import (
    Entity,
    EntityMention,
    EntityRelation,
    entity_id,
    normalise_name,
    normalise_type,
)

__all__ = [
    "Entity",
    "EntityMention",
    "EntityRelation",
    "ExtractionResult",
    "entity_id",
    "merge_results",
    "normalise_name",
    "normalise_type",
]


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


def _longer(a: str, b: str) -> str:
    return b if len(b) > len(a) else a


def merge_results(results: Iterable[ExtractionResult]) -> ExtractionResult:
    """Merge extractions by the rules in the module docstring; order is kept (first seen)."""
    entities: dict[str, Entity] = {}
    relations: dict[tuple[str, str, str], EntityRelation] = {}
    mentions: dict[tuple[str, str], int] = {}
    dropped: dict[str, int] = {}
    for result in results:
        for e in result.entities:
            old = entities.get(e.id)
            if old is None:
                entities[e.id] = e
                continue
            entities[e.id] = Entity(
                id=old.id,
                name=old.name,
                type=old.type,
                description=_longer(old.description, e.description),
                source_chunk_id=old.source_chunk_id or e.source_chunk_id,
                embedding=old.embedding if old.embedding is not None else e.embedding,
                namespace=old.namespace,
            )
        for r in result.relations:
            old_r = relations.get(r.key())
            if old_r is None:
                relations[r.key()] = r
                continue
            relations[r.key()] = EntityRelation(
                source_id=r.source_id,
                target_id=r.target_id,
                type=r.type,
                weight=max(old_r.weight, r.weight),
                description=_longer(old_r.description, r.description),
                sequence=old_r.sequence if old_r.sequence is not None else r.sequence,
                metadata={**dict(r.metadata), **dict(old_r.metadata)},
            )
        for m in result.mentions:
            k = (m.chunk_id, m.entity_id)
            mentions[k] = max(mentions.get(k, 0), m.count)
        for reason, n in result.dropped.items():
            dropped[reason] = dropped.get(reason, 0) + n
    return ExtractionResult(
        entities=tuple(entities.values()),
        relations=tuple(relations.values()),
        mentions=tuple(EntityMention(c, e, n) for (c, e), n in mentions.items()),
        dropped=dropped,
    )


def finite_unit(value: Any) -> float | None:
    """``value`` as a float if it is a finite number in [0, 1] (numeric strings accepted)."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    if math.isnan(f) or not (0.0 <= f <= 1.0):
        return None
    return f
