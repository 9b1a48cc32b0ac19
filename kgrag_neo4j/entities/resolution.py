"""Optional entity resolution: merge entities whose embeddings are nearly the same.

Exact duplicates already share an id (``entity_id`` normalises names); this catches spellings
normalisation cannot ("Eddard Stark" / "Ned Stark") when their descriptions embed alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..blas import one_blas_thread
from ..errors import DimensionMismatchError, InputError
from ..types.entities import Entity, EntityMention, EntityRelation, ExtractionResult
from .merging import merge_results

__all__ = ["merge_similar_entities", "remap_extraction"]

_BLOCK = 1024  # rows per similarity block: bounds memory at _BLOCK * n floats


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def merge_similar_entities(
    entities: Sequence[Entity],
    embeddings: Sequence[Sequence[float] | None] | Mapping[str, Sequence[float]] | None = None,
    *,
    threshold: float = 0.92,
) -> dict[str, str]:
    """Map every entity id to its canonical id.

    Two entities of the same type whose cosine similarity is at least ``threshold`` are merged,
    transitively (union-find: a~b and b~c merge a, b, c even if a and c are further apart).
    ``embeddings`` is a list aligned with ``entities``, a mapping id -> vector, or None to use
    each ``Entity.embedding``; entities without a vector (or with a zero vector) stay alone.
    The canonical id of a group is its smallest id, so the answer does not depend on the order
    of ``entities``. Unmerged entities map to themselves.
    """
    if not (-1.0 <= threshold <= 1.0):
        raise InputError(f"threshold must be a cosine similarity in [-1, 1], got {threshold!r}")
    ids = [e.id for e in entities]
    if len(set(ids)) != len(ids):
        raise InputError("merge_similar_entities got the same entity id twice")
    vectors: list[Sequence[float] | None]
    if embeddings is None:
        vectors = [e.embedding for e in entities]
    elif isinstance(embeddings, Mapping):
        vectors = [embeddings.get(e.id) for e in entities]
    else:
        vectors = list(embeddings)
        if len(vectors) != len(entities):
            raise InputError(
                f"{len(vectors)} embeddings for {len(entities)} entities; pass one per entity "
                "(None for a missing one) or a mapping id -> vector"
            )

    mapping = {i: i for i in ids}
    by_type: dict[str, list[int]] = {}
    dims: int | None = None
    for idx, (e, v) in enumerate(zip(entities, vectors)):
        if v is None or len(v) == 0:
            continue
        if dims is None:
            dims = len(v)
        elif len(v) != dims:
            raise DimensionMismatchError(
                f"entity {e.id!r} has a {len(v)}-dimensional embedding, others have {dims}",
                expected=dims,
                got=len(v),
            )
        by_type.setdefault(e.type, []).append(idx)

    for members in by_type.values():
        if len(members) < 2:
            continue
        matrix = np.asarray([vectors[i] for i in members], dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1)
        usable = norms > 0
        matrix = matrix[usable] / norms[usable, None]
        kept = [m for m, ok in zip(members, usable) if ok]
        uf = _UnionFind(len(kept))
        for start in range(0, len(kept), _BLOCK):
            with one_blas_thread():
                sims = matrix[start : start + _BLOCK] @ matrix.T
            rows, cols = np.nonzero(sims >= threshold)
            for r, c in zip(rows.tolist(), cols.tolist()):
                if start + r < c:
                    uf.union(start + r, c)
        groups: dict[int, list[str]] = {}
        for local, global_ in enumerate(kept):
            groups.setdefault(uf.find(local), []).append(ids[global_])
        for group in groups.values():
            canonical = min(group)
            for member in group:
                mapping[member] = canonical
    return mapping


def remap_extraction(result: ExtractionResult, mapping: Mapping[str, str]) -> ExtractionResult:
    """Apply an id mapping: merged entities fold into their canonical one (by the merging
    rules of ``merge_results``), relations and mentions are re-pointed, and relations that
    became self-relations are removed."""
    by_id = {e.id: e for e in result.entities}
    entities = []
    for e in result.entities:
        target = mapping.get(e.id, e.id)
        canonical = by_id.get(target, e)
        entities.append(
            Entity(
                id=target,
                name=canonical.name,
                type=canonical.type,
                description=e.description,
                source_chunk_id=e.source_chunk_id,
                embedding=e.embedding,
                namespace=canonical.namespace,
            )
        )
    # Canonical entities go first so their name and source chunk win the merge.
    canon_first = sorted(
        range(len(entities)),
        key=lambda i: (0 if result.entities[i].id == entities[i].id else 1, i),
    )
    relations = []
    for r in result.relations:
        s, t = mapping.get(r.source_id, r.source_id), mapping.get(r.target_id, r.target_id)
        if s == t:
            continue
        relations.append(
            EntityRelation(
                source_id=s,
                target_id=t,
                type=r.type,
                weight=r.weight,
                description=r.description,
                sequence=r.sequence,
                metadata=r.metadata,
            )
        )
    # Mentions of merged entities in the same chunk add up: they were different spellings.
    counts: dict[tuple[str, str], int] = {}
    for m in result.mentions:
        k = (m.chunk_id, mapping.get(m.entity_id, m.entity_id))
        counts[k] = counts.get(k, 0) + m.count
    merged = merge_results([ExtractionResult(entities=tuple(entities[i] for i in canon_first), relations=tuple(relations))])
    return ExtractionResult(
        entities=merged.entities,
        relations=merged.relations,
        mentions=tuple(EntityMention(c, e, n) for (c, e), n in counts.items()),
        dropped=dict(result.dropped),
    )
