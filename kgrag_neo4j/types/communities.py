"""Communities of the entity graph: the clusters, their reports, and what the store reads back
(``StoredCommunity``). Pure value types shared by ``communities/`` (which computes them) and
the store (which writes and reads them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .entities import Entity, EntityRelation

__all__ = [
    "Community",
    "CommunityAssignment",
    "CommunityReport",
    "CommunitySnapshot",
    "StoredCommunity",
    "community_id",
]


@dataclass(frozen=True, slots=True)
class Community:
    """One cluster at one level. ``members`` are entity ids (sorted), at every level."""

    id: str
    level: int
    members: tuple[str, ...]
    parent_id: str | None
    size: int


@dataclass(frozen=True, slots=True)
class CommunityAssignment:
    """``(:Entity {id: node_id})-[:IN_COMMUNITY]->(:Community {id: community_id})``."""

    node_id: str
    community_id: str
    level: int


def community_id(level: int, members: Iterable[str]) -> str:
    """``com_`` + a hash of the level and the sorted member ids."""
    h = hashlib.blake2b(digest_size=16)
    for part in (str(level), *sorted(members)):
        data = part.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return "com_" + h.hexdigest()


@dataclass(frozen=True, slots=True)
class CommunityReport:
    """What is written onto a ``(:Community)`` node."""

    community_id: str
    title: str
    summary: str
    full_content: str
    rank: float
    rating: float | None = None


@dataclass(frozen=True, slots=True)
class CommunitySnapshot:
    """What a stored community's report is made of: the community (its live members), their
    entities and the relationships between them. Two equal snapshots make the same report, so
    ``communities update`` writes a report only if the snapshot it was made from still holds."""

    community: Community
    entities: tuple[Entity, ...]
    relations: tuple[EntityRelation, ...]


@dataclass(frozen=True, slots=True)
class StoredCommunity:
    """A ``(:Community)`` node and its report. ``members`` is the live member count;
    ``member_entities`` and ``child_ids`` are filled by ``get_community`` only, ``matched`` (how
    many of the asked entities belong to it) by ``community_reports_for_entities`` only.
    ``stale``: a member changed since the report was written (``kgrag communities update``
    writes it again); ``reported_at``: when it was written (ISO 8601, UTC)."""

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
    stale: bool = False
    reported_at: str | None = None

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
            "stale": self.stale,
            "reported_at": self.reported_at,
        }
