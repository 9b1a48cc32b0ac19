"""Community capability of Neo4jStore: the Leiden communities of the entity graph and their
reports, as ``communities/`` computed them.

Replacing the communities of a namespace is one transaction: readers see the old set or the
new one. A community left without members (its entities deleted with their documents) is
hidden from ``list_communities`` at once and removed by ``prune_communities``
(``build_communities`` runs it too, by replacing everything).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import InputError, NotFoundError
from ..graph_types.communities import Community, CommunityReport, StoredCommunity
from ..validation import check_int
from ._rows import _check_top_k, check_ids, community_from_row
from .runner import CypherRunner

__all__ = ["CommunitiesMixin", "StoredCommunity"]

#: community rows per UNWIND statement, and membership / parent links per statement
COMMUNITY_ROWS = 500
LINK_ROWS = 2000


class CommunitiesMixin:
    runner: CypherRunner
    namespace: str

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
            ("communities/upsert_communities", {"namespace": ns, "rows": rows[i : i + COMMUNITY_ROWS]})
            for i in range(0, len(rows), COMMUNITY_ROWS)
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
        if level is not None:
            check_int(level, "level", minimum=0, error=InputError)
        if limit is not None:
            _check_top_k(limit)
        rows = self.runner.read(
            "communities/list_communities", namespace=self.namespace, level=level, limit=limit or 10_000_000
        )
        return [
            community_from_row(r, members=int(r["members"]), parent_id=r.get("parent_id")) for r in rows
        ]

    def get_community(self, community_id: str) -> StoredCommunity:
        """One community with its report, parent, children and members; ``NotFoundError``."""
        if not isinstance(community_id, str) or not community_id:
            raise InputError("community_id must be a non-empty string")
        rows = self.runner.read("communities/get_community", namespace=self.namespace, community_id=community_id)
        if not rows:
            raise NotFoundError(f"no community {community_id!r} in namespace {self.namespace!r}")
        r = rows[0]
        return community_from_row(
            r,
            members=len(r["members"]),
            parent_id=r.get("parent_id"),
            child_ids=tuple(sorted(r["child_ids"])),
            member_entities=tuple(r["members"]),
        )

    def community_reports_for_entities(self, entity_ids: Sequence[str], top_k: int = 3) -> list[StoredCommunity]:
        """Reports of the communities (any level) these entities belong to, highest rank first
        (ties: more of the entities, lower level), at most ``top_k``."""
        ids = check_ids(entity_ids, "entity_ids")
        _check_top_k(top_k)
        if not ids:
            return []
        rows = self.runner.read(
            "communities/reports_for_entities", namespace=self.namespace, ids=ids, top_k=top_k
        )
        return [community_from_row(r, matched=int(r["matched"])) for r in rows]
