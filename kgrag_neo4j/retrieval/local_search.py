"""Seed 002: GraphRAG local search on Neo4j.

query -> embedding -> the ``top_k_entities`` (10) entities whose description embedding is
nearest -> the chunks ("text units") mentioning them, ranked by the cosine of their stored
embedding to the query and taken in that order while they fit ``max_text_unit_tokens`` (4000;
the first unit that would overflow stops the selection, as the seed does), at most
``top_k_text_units`` (10) of them -> the
``top_k_relationships`` (20) heaviest relationships touching those entities -> the reports of
the ``top_k_community_reports`` (3) highest-ranked communities those entities belong to.

On ``Neo4jStore`` all of it is ONE database round trip (``cypher/entities/local_context``);
the similarities are computed in the database from the stored chunk embeddings (nothing is
re-embedded at query time, unlike the seed). ``filters`` restrict the text units (and the
entities to those some passing chunk mentions); ``min_similarity`` drops text units less close
to the query. ``context(query)`` returns the whole
:class:`LocalContext` (``to_text()`` renders it for a prompt); ``retrieve(query, top_k)``
returns the selected text units as results, so the retriever plugs in wherever a
``Retriever`` does.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..errors import ConfigurationError, InputError
from ..protocols import EmbeddingProvider
from ..types import ChunkFilter, ComponentScores, RetrievalResult
from .retrievers import embed_query
from .steps import Call, Steps, arun_steps, run_steps
from ..validation import check_int, check_number

__all__ = [
    "LocalContext",
    "LocalEntity",
    "LocalReport",
    "LocalRelationship",
    "LocalSearchRetriever",
    "LocalTextUnit",
]


@dataclass(frozen=True, slots=True)
class LocalEntity:
    id: str
    name: str
    type: str
    description: str
    score: float  # Neo4j's normalised cosine of the description embedding to the query


@dataclass(frozen=True, slots=True)
class LocalTextUnit:
    id: str
    content: str
    token_count: int
    similarity: float | None  # normalised cosine to the query; None without an embedding
    document_id: str = ""
    source: str = ""
    chunk_index: int = 0
    parent_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    entity_ids: tuple[str, ...] = ()  # which of the context's entities it mentions


@dataclass(frozen=True, slots=True)
class LocalRelationship:
    source_id: str
    source: str
    target_id: str
    target: str
    type: str
    weight: float
    description: str = ""
    sequence: int | None = None
    internal: bool = False  # both ends are among the context's entities


@dataclass(frozen=True, slots=True)
class LocalReport:
    id: str
    level: int
    title: str
    summary: str
    full_content: str
    rank: float
    size: int
    matched: int  # how many of the context's entities belong to the community


@dataclass(frozen=True, slots=True)
class LocalContext:
    """What local search found for one query (the seed's ``RetrievedContext``)."""

    entities: tuple[LocalEntity, ...] = ()
    text_units: tuple[LocalTextUnit, ...] = ()
    relationships: tuple[LocalRelationship, ...] = ()
    community_reports: tuple[LocalReport, ...] = ()
    #: chunks that mentioned the entities before the token budget cut
    candidate_units: int = 0

    @property
    def total_tokens(self) -> int:
        return sum(u.token_count for u in self.text_units)

    def to_text(self) -> str:
        """The context as prompt text: sections Entities, Relationships, Sources, Reports."""
        names = {e.id: e.name for e in self.entities}
        out = ["## Entities"]
        out += [
            f"- {e.name} ({e.type})" + (f": {e.description}" if e.description else "") for e in self.entities
        ] or ["(none)"]
        out += ["", "## Relationships"]
        out += [
            f"- {r.source} -[{r.type} {r.weight:.2f}]-> {r.target}" + (f": {r.description}" if r.description else "")
            for r in self.relationships
        ] or ["(none)"]
        out += ["", "## Sources"]
        for i, u in enumerate(self.text_units, 1):
            about = ", ".join(names.get(e, e) for e in u.entity_ids)
            header = f"[{i}] {u.source or u.document_id} #{u.chunk_index}" + (f" (about {about})" if about else "")
            out += [header, u.content.strip(), ""]
        if not self.text_units:
            out += ["(none)", ""]
        out += ["## Reports"]
        for r in self.community_reports:
            out += [f"### {r.title or r.id}", r.summary.strip(), ""]
        if not self.community_reports:
            out.append("(none)")
        return "\n".join(out).rstrip() + "\n"

    def to_json(self) -> dict[str, Any]:
        def plain(x: Any) -> dict[str, Any]:
            return {k: (dict(v) if isinstance(v, Mapping) else list(v) if isinstance(v, tuple) else v)
                    for k, v in ((s, getattr(x, s)) for s in x.__slots__)}

        return {
            "entities": [plain(e) for e in self.entities],
            "text_units": [plain(u) for u in self.text_units],
            "relationships": [plain(r) for r in self.relationships],
            "reports": [plain(r) for r in self.community_reports],
            "candidate_units": self.candidate_units,
            "total_tokens": self.total_tokens,
        }


def _metadata(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def context_from_row(row: Mapping[str, Any]) -> LocalContext:
    """Build a :class:`LocalContext` from the row of ``cypher/entities/local_context``."""
    return LocalContext(
        entities=tuple(
            LocalEntity(e["id"], e.get("name") or e["id"], e.get("type") or "OTHER", e.get("description") or "",
                        float(e["score"]))
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
                metadata=_metadata(u.get("metadata")),
                entity_ids=tuple(sorted(u.get("entity_ids") or ())),
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
            )
            for m in row["reports"]
        ),
        candidate_units=int(row.get("candidate_units") or 0),
    )


class LocalSearchRetriever:
    """GraphRAG local search (seed 002); defaults are the seed's. See the module docstring."""

    kind = "local"

    def __init__(
        self,
        store: Any,
        embedder: EmbeddingProvider,
        *,
        top_k_entities: int = 10,
        max_text_unit_tokens: int = 4000,
        top_k_relationships: int = 20,
        top_k_community_reports: int = 3,
        top_k_text_units: int = 10,
        filters: Sequence[ChunkFilter] = (),
        min_similarity: float = 0.0,
    ):
        check_int(top_k_entities, "top_k_entities", minimum=1)
        check_int(top_k_text_units, "top_k_text_units", minimum=1)
        check_number(min_similarity, "min_similarity (a normalised cosine)", minimum=0, maximum=1)
        for label, value in (
            ("max_text_unit_tokens", max_text_unit_tokens),
            ("top_k_relationships", top_k_relationships),
            ("top_k_community_reports", top_k_community_reports),
            ("top_k_text_units", top_k_text_units),
        ):
            check_int(value, label, minimum=0)
        if not callable(getattr(store, "local_context", None)):
            raise ConfigurationError("LocalSearchRetriever needs a store with the entity capability (Neo4jStore)")
        self.store, self.embedder = store, embedder
        self.top_k_entities = top_k_entities
        self.max_text_unit_tokens = max_text_unit_tokens
        self.top_k_relationships = top_k_relationships
        self.top_k_community_reports = top_k_community_reports
        self.top_k_text_units = top_k_text_units
        self.filters = tuple(filters)
        self.min_similarity = float(min_similarity)

    def context(self, query: str) -> LocalContext:
        """Entities, text units, relationships and community reports for ``query``."""
        return run_steps(self._context(query))

    async def acontext(self, query: str) -> LocalContext:
        return await arun_steps(self._context(query))

    def _context(self, query: str) -> Steps[LocalContext]:
        if not isinstance(query, str) or not query.strip():
            raise InputError("query must be non-empty text")
        vector = yield from embed_query(self.store, self.embedder, query)
        row = yield Call.of(
            self.store.local_context,
            vector,
            entity_k=self.top_k_entities,
            max_tokens=self.max_text_unit_tokens,
            relationship_k=self.top_k_relationships,
            report_k=self.top_k_community_reports,
            unit_k=self.top_k_text_units,
            min_similarity=self.min_similarity,
            filters=self.filters,
        )
        ctx = context_from_row(row)
        # the seed's top_k_text_units caps the units the token budget let through
        return dataclasses.replace(ctx, text_units=ctx.text_units[: self.top_k_text_units])

    def retrieve(self, query: str, top_k: int = 5) -> list[RetrievalResult]:
        """The first ``top_k`` selected text units, most similar first; ``scores.vector`` is
        the similarity, the explanation names the entities that led to the unit."""
        return run_steps(self._retrieve(query, top_k))

    async def aretrieve(self, query: str, top_k: int = 5) -> list[RetrievalResult]:
        return await arun_steps(self._retrieve(query, top_k))

    def _retrieve(self, query: str, top_k: int) -> Steps[list[RetrievalResult]]:
        check_int(top_k, "top_k", minimum=1, error=InputError)
        return self.retrieve_from((yield from self._context(query)), top_k)

    @staticmethod
    def retrieve_from(ctx: LocalContext, top_k: int) -> list[RetrievalResult]:
        """The first ``top_k`` text units of a context already read, as results."""
        names = {e.id: e.name for e in ctx.entities}
        out = []
        for u in ctx.text_units[:top_k]:
            about = ", ".join(names.get(e, e) for e in u.entity_ids)
            out.append(
                RetrievalResult(
                    id=u.id,
                    content=u.content,
                    score=u.similarity if u.similarity is not None else 0.0,
                    document_id=u.document_id,
                    source=u.source,
                    chunk_index=u.chunk_index,
                    parent_id=u.parent_id,
                    metadata=dict(u.metadata),
                    scores=ComponentScores(vector=u.similarity),
                    explanation=[f"text unit of entities: {about}"] if about else [],
                )
            )
        return out
