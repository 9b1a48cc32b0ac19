"""What GraphRAG local search hands back for one query: entities, text units within a token
budget, relationships, community reports (GraphRAG's ``RetrievedContext``). The store fills
it in one round trip; retrieval trims and renders it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LocalContext", "LocalEntity", "LocalRelationship", "LocalReport", "LocalTextUnit"]


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
    title: str = ""  # its document's


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
    stale: bool = False  # a member changed since the report was written


@dataclass(frozen=True, slots=True)
class LocalContext:
    """What local search found for one query (GraphRAG's ``RetrievedContext``)."""

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
        out += [f"- {e.name} ({e.type})" + (f": {e.description}" if e.description else "") for e in self.entities] or ["(none)"]
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
            mark = " (stale: its members changed since this report)" if r.stale else ""
            out += [f"### {r.title or r.id}{mark}", r.summary.strip(), ""]
        if not self.community_reports:
            out.append("(none)")
        return "\n".join(out).rstrip() + "\n"

    def to_json(self) -> dict[str, Any]:
        def plain(x: Any) -> dict[str, Any]:
            return {
                k: (dict(v) if isinstance(v, Mapping) else list(v) if isinstance(v, tuple) else v)
                for k, v in ((s, getattr(x, s)) for s in x.__slots__)
            }

        return {
            "entities": [plain(e) for e in self.entities],
            "text_units": [plain(u) for u in self.text_units],
            "relationships": [plain(r) for r in self.relationships],
            "reports": [plain(r) for r in self.community_reports],
            "candidate_units": self.candidate_units,
            "total_tokens": self.total_tokens,
        }
