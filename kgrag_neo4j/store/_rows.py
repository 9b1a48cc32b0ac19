"""Rows to values and values to rows: the conversions every capability of the store shares.

Private to ``store/``: the mixins import these, nothing else should. A ``RetrievalResult`` is
built from a row here only (``result_from_row``), whatever statement produced the row.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from ..errors import InputError
from ..ids import edge_id
from ..steps import Steps
from ..types import (
    PENDING_HASH_SUFFIX,
    Chunk,
    ChunkEdge,
    ComponentScores,
    Document,
    EdgeContext,
    RelationType,
    RetrievalResult,
)
from ..types import load_metadata as _load_metadata
from ..types.communities import StoredCommunity
from ..types.context import LocalContext, LocalEntity, LocalRelationship, LocalReport, LocalTextUnit
from ..types.entities import Entity, EntityBoostContext, EntityCandidate, QueryEntity, RelatedEntity
from ..validation import MAX_TOP_K, check_int
from .aio import Read, Readers

#: edge rows per UNWIND statement of graph/store_edges and graph/delete_edges
EDGE_ROWS = 1000


def same_content(stored: Any, new: str) -> bool:
    """Equal hashes, a pending mark aside (``types.PENDING_HASH_SUFFIX``): an ingest racing
    another one that already completed the same content must not rewrite it as "replaced"."""
    return isinstance(stored, str) and stored.removesuffix(PENDING_HASH_SUFFIX) == new.removesuffix(PENDING_HASH_SUFFIX)


#: Neo4j reads at read-committed isolation: a retrieval racing a replace (or delete) of the
#: same document can read an old-version chunk together with the new document, or a chunk
#: deleted under it (found by tests/test_concurrency.py). Even ONE node's properties can be
#: read half old, half new while a commit lands (rarely, but seen on a document's title and
#: hash under a rewriting writer), so each chunk also carries its document's title
#: and a row counts as whole only when both the hash and the title agree. Torn rows make the
#: read run again; after these retries the torn rows left are dropped.
TORN_READ_RETRIES = 2


def is_torn(row: Mapping[str, Any]) -> bool:
    """Whether a retrieval row mixes two versions of its document (see ``TORN_READ_RETRIES``)."""
    chunk = row.get("chunk") or {}
    if not chunk.get("id"):
        return True  # a node deleted while the statement ran
    via = row.get("via")
    if via is not None and via.get("weight") is None:
        return True  # the edge it was reached by, deleted (an edge rebuild) while the statement ran
    if "score" in row and row["score"] is None:
        return True  # a score computed from what was deleted meanwhile
    written_by = chunk.get("document_hash")
    if written_by is None:
        return False  # a chunk stored before versions were recorded
    current = row.get("document_hash")
    if current is None or not same_content(current, written_by):
        return True
    title_then = chunk.get("document_title")
    return title_then is not None and title_then != row.get("title")


def consistent(store: Readers, name: str, *, listed: str | None = None, **params: Any) -> Steps[list[dict[str, Any]]]:
    """The rows of a retrieval statement, without torn rows (a read body). ``listed``: the
    statement returns its rows as a list in this column of one record."""
    for _ in range(TORN_READ_RETRIES + 1):
        rows = yield from Read(store, name, params)
        if listed is not None:
            rows = rows[0][listed] if rows else []
        if not any(is_torn(r) for r in rows):
            return rows
    return [r for r in rows if not is_torn(r)]


def chunk_from_row(row: Mapping[str, Any], *, embedding: Sequence[float] | None = None) -> Chunk:
    return Chunk(
        id=row["id"],
        document_id=row.get("document_id") or "",
        content=row.get("content") or "",
        chunk_index=int(row.get("chunk_index") or 0),
        parent_id=row.get("parent_id"),
        embedding=list(embedding) if embedding is not None else None,
        token_count=int(row.get("token_count") or 0),
        metadata=_load_metadata(row.get("metadata")),
        namespace=row.get("namespace") or "",
        source=row.get("source") or "",
        created_at=int(row.get("created_at") or 0),
        document_title=row.get("document_title") or "",
    )


def document_from_row(row: Mapping[str, Any]) -> Document:
    return Document(
        id=row["id"],
        source=row.get("source") or "",
        title=row.get("title") or "",
        content=row.get("content") or "",
        namespace=row.get("namespace") or "",
        content_hash=row.get("content_hash") or "",
        created_at=int(row.get("created_at") or 0),
        metadata=_load_metadata(row.get("metadata")),
    )


#: the largest integer Neo4j stores (a LIMIT beyond it cannot even be sent)
MAX_INT64 = 2**63 - 1


def _check_top_k(top_k: Any, name: str = "top_k") -> int:
    return check_int(top_k, name, minimum=1, maximum=MAX_TOP_K, error=InputError)


def check_limit(limit: Any) -> int:
    """A listing's ``limit``: None means every row; otherwise a positive 64-bit integer."""
    if limit is None:
        return MAX_INT64
    if not (_is_int(limit) and 1 <= limit <= MAX_INT64):
        # worded by hand: "9223372036854775807" tells a user less than "64 bits"
        raise InputError(f"limit must be a positive integer of at most 64 bits, got {limit!r}")
    return limit


def check_count(value: Any, name: str) -> int:
    """A per-call count that may be 0 (``expand_k``, ``max_tokens``, ...)."""
    return check_int(value, name, minimum=0, error=InputError)


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def entity_key_rows(keys: Any) -> list[dict[str, Any]]:
    """Validate the query's word runs (``[{key, start, end}]``) before they become a parameter."""
    if isinstance(keys, (str, bytes, Mapping)) or not isinstance(keys, Sequence):
        raise InputError("entity keys must be a list of {key, start, end} maps")
    out = []
    for k in keys:
        if not isinstance(k, Mapping):
            raise InputError("entity keys must be a list of {key, start, end} maps")
        key, start, end = k.get("key"), k.get("start"), k.get("end")
        if not isinstance(key, str) or not key:
            raise InputError(f"an entity key must be a non-empty string, got {key!r}")
        if not (_is_int(start) and _is_int(end) and 0 <= start < end):
            raise InputError(f"entity key {key!r}: start and end must be word positions with start < end")
        out.append({"key": key, "start": start, "end": end})
    return out


def edge_from_row(row: Mapping[str, Any]) -> ChunkEdge:
    return ChunkEdge(
        id=row.get("id") or "",
        source_id=row["source_id"],
        target_id=row["target_id"],
        relation=RelationType.parse(row["relation"]),
        weight=float(row["weight"]),
        description=row.get("description") or "",
        origin=row.get("origin") or "",
    )


def edge_row(edge: ChunkEdge) -> dict[str, Any]:
    relation = RelationType.parse(edge.relation).value
    weight = float(edge.weight)
    if not 0.0 < weight <= 1.0:
        raise InputError(f"edge {edge.source_id}->{edge.target_id} weight {weight} is outside (0, 1]")
    if not edge.source_id or not edge.target_id:
        raise InputError("edge source_id and target_id are required")
    if edge.source_id == edge.target_id:
        raise InputError(f"self edge on {edge.source_id} is not allowed")
    return {
        "id": edge.id or edge_id(edge.source_id, edge.target_id, relation),
        "source_id": edge.source_id,
        "target_id": edge.target_id,
        "relation": relation,
        "weight": weight,
        "description": edge.description or "",
        "origin": edge.origin or "llm",
    }


def edge_rows(edges: Sequence[ChunkEdge]) -> list[dict[str, Any]]:
    """Validated ``graph/store_edges`` rows, one per (source, target, relation) with the
    highest weight, in a stable order."""
    best: dict[tuple[str, str, str], dict[str, Any]] = {}
    for e in edges:
        row = edge_row(e)
        key = (row["source_id"], row["target_id"], row["relation"])
        if key not in best or row["weight"] > best[key]["weight"]:
            best[key] = row
    # a stable order keeps concurrent writers from locking the same chunks in opposite order
    return [best[k] for k in sorted(best)]


def result_from_row(
    row: Mapping[str, Any],
    *,
    scores: ComponentScores,
    score: float | None = None,
    graph_context: Sequence[EdgeContext] = (),
    explanation: Sequence[str] = (),
) -> RetrievalResult:
    """The one place a retrieval row (``{chunk, title, score, ...}``) becomes a result;
    ``score`` defaults to the row's."""
    c = row["chunk"]
    return RetrievalResult(
        id=c["id"],
        content=c.get("content") or "",
        score=float(row["score"]) if score is None else score,
        document_id=c.get("document_id") or "",
        source=c.get("source") or "",
        title=row.get("title") or "",
        chunk_index=int(c.get("chunk_index") or 0),
        parent_id=c.get("parent_id"),
        metadata=_load_metadata(c.get("metadata")),
        scores=scores,
        graph_context=list(graph_context),
        explanation=list(explanation),
    )


def entity_from_row(row: Mapping[str, Any], namespace: str) -> Entity:
    return Entity(
        id=row["id"],
        name=row.get("name") or row["id"],
        type=row.get("type") or "OTHER",
        description=row.get("description") or "",
        source_chunk_id=row.get("source_chunk_id"),
        namespace=namespace,
    )


def community_from_row(row: Mapping[str, Any], **extra: Any) -> StoredCommunity:
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
        stale=bool(c.get("stale")),
        reported_at=c.get("reported_at"),
        **extra,
    )


def metadata_text(metadata: Mapping[str, Any], what: str = "metadata") -> str:
    try:
        return json.dumps(dict(metadata), sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what} must be JSON-serialisable: {exc}") from None


def unit_weight(value: Any) -> float:
    """A stored weight as a float in [0, 1] (edges written by other tools may lack one)."""
    if value is None or isinstance(value, bool):
        return 1.0
    w = float(value)
    return 0.0 if math.isnan(w) else min(1.0, max(0.0, w))


def check_ids(ids: Sequence[str], what: str) -> list[str]:
    """Distinct non-empty id strings, in the order given (one string is refused: it is not a list)."""
    if isinstance(ids, str):
        raise InputError(f"{what} must be a list of ids, not one string")
    out = list(dict.fromkeys(ids))
    if not all(isinstance(i, str) and i for i in out):
        raise InputError(f"{what} must be non-empty strings")
    return out


def context_from_row(row: Mapping[str, Any]) -> LocalContext:
    """Build a :class:`LocalContext` from the row of ``cypher/entities/local_context``."""
    return LocalContext(
        entities=tuple(
            LocalEntity(
                e["id"], e.get("name") or e["id"], e.get("type") or "OTHER", e.get("description") or "", float(e["score"])
            )
            for e in row["entities"]
        ),
        text_units=tuple(
            LocalTextUnit(
                id=u["id"],
                content=u.get("content") or "",
                token_count=int(u.get("token_count") or 0),
                similarity=float(u["similarity"]) if u.get("similarity") is not None else None,
                document_id=u.get("document_id") or "",
                source=u.get("source") or "",
                chunk_index=int(u.get("chunk_index") or 0),
                parent_id=u.get("parent_id"),
                metadata=_load_metadata(u.get("metadata")),
                entity_ids=tuple(sorted(u.get("entity_ids") or ())),
                title=u.get("title") or "",
            )
            for u in row["text_units"]
        ),
        relationships=tuple(
            LocalRelationship(
                source_id=r["source_id"],
                source=r.get("source") or r["source_id"],
                target_id=r["target_id"],
                target=r.get("target") or r["target_id"],
                type=r.get("type") or "RELATED_TO",
                weight=float(r.get("weight") if r.get("weight") is not None else 1.0),
                description=r.get("description") or "",
                sequence=r.get("sequence"),
                internal=bool(r.get("internal")),
            )
            for r in row["relationships"]
        ),
        community_reports=tuple(
            LocalReport(
                id=m["id"],
                level=int(m.get("level") or 0),
                title=m.get("title") or "",
                summary=m.get("summary") or "",
                full_content=m.get("full_content") or "",
                rank=float(m.get("rank") or 0.0),
                size=int(m.get("size") or 0),
                matched=int(m.get("matched") or 0),
                stale=bool(m.get("stale")),
            )
            for m in row["reports"]
        ),
        candidate_units=int(row.get("candidate_units") or 0),
    )


def candidate_from_row(row: Mapping[str, Any]) -> EntityCandidate:
    """A candidate or expansion row of ``cypher/entities/boost_retrieve``."""
    similarity = None if row.get("score") is None else float(row["score"])
    via = row.get("entity_id")
    return EntityCandidate(
        result=result_from_row(row, scores=ComponentScores(vector=similarity), score=similarity or 0.0),
        similarity=similarity,
        mentions=tuple(row.get("mentions") or ()),
        via_entity_id=via,
        via_entity=(row.get("entity") or via or "") if via else "",
        via_distance=int(row.get("distance") or 0) if via else 0,
        via_strength=float(row.get("strength") or 0.0) if via else 0.0,
    )


def boost_context_from_row(row: Mapping[str, Any]) -> EntityBoostContext:
    return EntityBoostContext(
        candidates=tuple(candidate_from_row(c) for c in row["candidates"]),
        query_entities=tuple(
            QueryEntity(
                id=q["id"],
                name=q.get("name") or q["id"],
                type=q.get("type") or "OTHER",
                score=None if q.get("score") is None else float(q["score"]),
            )
            for q in row["query_entities"]
        ),
        related=tuple(
            RelatedEntity(
                id=h["id"],
                name=h.get("name") or h["id"],
                distance=int(h["distance"]),
                strength=float(h["strength"]),
                path=tuple((str(p[0]), str(p[1])) for p in h["path"]),
            )
            for h in row["related"]
        ),
        expansion=tuple(candidate_from_row(x) for x in row.get("expansion") or ()),
    )
