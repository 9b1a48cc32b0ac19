"""Community reports: a title, a summary and a full text per community (GraphRAG's
``community_reports``), built from the community's entities and internal relationships.

``extractive_report`` needs no model and is the fallback of ``llm_report``. Both give the same
``rank``, the community's total internal relationship weight, so reports written with and
without a model order consistently in local search. The model's own 0-10 importance ``rating``
is kept separately.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import KgragError, ProviderResponseError
from ..protocols import ChatProvider
from ..types.communities import Community, CommunityReport
from ..types.entities import Entity, EntityRelation

__all__ = ["CommunityReport", "extractive_report", "llm_report"]

_REPORT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "summary": {"type": "string"},
        "rating": {"type": "number"},
    },
    "required": ["title", "summary", "rating"],
}

_SYSTEM_PROMPT = """\
You write a short report about one community of a knowledge graph: a group of entities and the
relationships between them. Use only the facts given.
Answer with JSON only: {"title": "...", "summary": "...", "rating": 0.0}
- title: a short name for the community (at most 10 words), naming its key entities;
- summary: 2-4 sentences on what connects these entities;
- rating: a number from 0 to 10, how important this community is to understand the corpus."""


@dataclass(frozen=True, slots=True)
class _Digest:
    """The community's entities and internal relations, ranked."""

    entities: list[tuple[str, str, str, str, float]]  # id, name, type, description, weighted degree
    relations: list[EntityRelation]
    rank: float


def _digest(community: Community, entities: Iterable[Entity], relations: Iterable[EntityRelation]) -> _Digest:
    members = set(community.members)
    known = {e.id: e for e in entities if e.id in members}
    internal = [r for r in relations if r.source_id in members and r.target_id in members]
    weighted: dict[str, float] = {m: 0.0 for m in members}
    degree: dict[str, int] = {m: 0 for m in members}
    for r in internal:
        for end in (r.source_id, r.target_id):
            weighted[end] += r.weight
            degree[end] += 1

    def row(mid: str) -> tuple[str, str, str, str, float]:
        e = known.get(mid)
        if e is None:  # a member the caller gave no Entity for: show its id
            return (mid, mid, "OTHER", "", weighted[mid])
        return (mid, e.name, e.type, e.description, weighted[mid])

    rows = sorted((row(m) for m in members), key=lambda r: (-r[4], -degree[r[0]], r[1].casefold(), r[0]))
    internal.sort(key=lambda r: (-r.weight, r.source_id, r.target_id, r.type))
    return _Digest(entities=rows, relations=internal, rank=round(sum(r.weight for r in internal), 6))


def _join_names(names: list[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _body(digest: _Digest, max_entities: int, max_relations: int) -> str:
    names = {r[0]: r[1] for r in digest.entities}
    lines = ["## Entities"]
    for _id, name, type_, description, wdeg in digest.entities[:max_entities]:
        tail = f": {description}" if description else ""
        lines.append(f"- **{name}** ({type_}, weighted degree {wdeg:.2f}){tail}")
    if len(digest.entities) > max_entities:
        lines.append(f"- ... and {len(digest.entities) - max_entities} more")
    lines.append("")
    lines.append("## Relationships")
    if not digest.relations:
        lines.append("- (none inside this community)")
    for r in digest.relations[:max_relations]:
        tail = f": {r.description}" if r.description else ""
        lines.append(f"- {names[r.source_id]} -[{r.type} {r.weight:.2f}]-> {names[r.target_id]}{tail}")
    if len(digest.relations) > max_relations:
        lines.append(f"- ... and {len(digest.relations) - max_relations} more")
    return "\n".join(lines)


def extractive_report(
    community: Community,
    entities: Iterable[Entity],
    relations: Iterable[EntityRelation],
    *,
    top_entities: int = 3,
    top_relations: int = 3,
    max_entities: int = 50,
    max_relations: int = 50,
) -> CommunityReport:
    """A report without a model.

    Entities are ranked by weighted degree inside the community (sum of the weights of their
    internal relations), then degree, then name. Title: the ``top_entities`` first names.
    Summary: member count by type, the top entities, the ``top_relations`` heaviest internal
    relations. ``full_content``: title, summary, then every entity (with description) and
    every internal relation, heaviest first. ``rank``: the sum of internal relation weights.
    Relations with an endpoint outside the community are ignored.
    """
    digest = _digest(community, entities, relations)
    top = digest.entities[:top_entities]
    title = _join_names([r[1] for r in top])
    if len(digest.entities) > len(top):
        title += f" (+{len(digest.entities) - len(top)})"
    by_type: dict[str, int] = {}
    for r in digest.entities:
        by_type[r[2]] = by_type.get(r[2], 0) + 1
    types = ", ".join(f"{n} {t}" for t, n in sorted(by_type.items(), key=lambda kv: (-kv[1], kv[0])))
    names = {r[0]: r[1] for r in digest.entities}
    parts = [
        f"Community of {len(digest.entities)} entities ({types}) at level {community.level}.",
        "Key entities: " + ", ".join(f"{r[1]} ({r[2]})" for r in top) + ".",
    ]
    if digest.relations:
        strongest = "; ".join(
            f"{names[r.source_id]} {r.type} {names[r.target_id]} ({r.weight:.2f})" for r in digest.relations[:top_relations]
        )
        parts.append(f"Strongest relationships: {strongest}.")
    summary = " ".join(parts)
    full = f"# {title}\n\n{summary}\n\n{_body(digest, max_entities, max_relations)}\n"
    return CommunityReport(community_id=community.id, title=title, summary=summary, full_content=full, rank=digest.rank)


def llm_report(
    chat: ChatProvider,
    community: Community,
    entities: Iterable[Entity],
    relations: Iterable[EntityRelation],
    *,
    logger: logging.Logger | None = None,
    max_entities: int = 50,
    max_relations: int = 50,
) -> CommunityReport:
    """A report whose title and summary a model writes from the extractive listing.

    The reply must be JSON ``{title, summary, rating}`` with a non-empty title and summary; a
    rating that is not a number in [0, 10] is recorded as None. On any failure (the call, the
    JSON, a missing field) the extractive report is returned and a WARNING logged.
    """
    log = logger or logging.getLogger(__name__)
    entities = list(entities)
    relations = list(relations)
    fallback = extractive_report(community, entities, relations, max_entities=max_entities, max_relations=max_relations)
    digest = _digest(community, entities, relations)
    body = _body(digest, max_entities, max_relations)
    messages = [
        {"role": "system", "content": _SYSTEM_PROMPT},
        {"role": "user", "content": body},
    ]
    try:
        try:
            reply = chat.chat(messages, json_schema=_REPORT_SCHEMA)
        except KgragError:
            raise
        except Exception as exc:  # noqa: BLE001 - third-party provider code
            raise ProviderResponseError(f"chat call failed: {exc!r}") from exc
        from ..replies import CommunityReportReply, parse_reply  # Why here: pydantic is slow to import

        parsed = parse_reply(reply, CommunityReportReply, what="the report reply")
    except KgragError as exc:
        log.warning("community %s: model report failed (%s); using the extractive one", community.id, exc)
        return fallback
    title, summary, rating = parsed.title, parsed.summary, parsed.rating
    return CommunityReport(
        community_id=community.id,
        title=title,
        summary=summary,
        full_content=f"# {title}\n\n{summary}\n\n{body}\n",
        rank=digest.rank,
        rating=float(rating) if rating is not None else None,
    )
