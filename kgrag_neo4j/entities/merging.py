"""How two extractions merge, used wherever two extractions meet (the value types live in
:mod:`kgrag_neo4j.types.entities`):

- entities with the same id: the longest description wins (the first one on a tie); the first
  known ``source_chunk_id`` and embedding are kept;
- mentions with the same ``(chunk_id, entity_id)``: the highest count (the same chunk is the
  same text, so counts are not additive and merging a result with itself changes nothing);
- relations with the same ``(source_id, target_id, type)``: the highest weight, the longest
  description, the first ``sequence``, metadata merged (first value wins).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..types.entities import Entity, EntityMention, EntityRelation, ExtractionResult

__all__ = ["finite_unit", "merge_results"]


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
