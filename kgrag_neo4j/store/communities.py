"""Community capability of Neo4jStore: the Leiden communities of the entity graph and their
reports, as ``communities/`` computed them.

Replacing the communities of a namespace is one transaction: readers see the old set or the
new one. A community left without members (its entities deleted with their documents) is
hidden from ``list_communities`` at once and removed by ``prune_communities``
(``build_communities`` runs it too, by replacing everything).

``communities update`` (``communities.update``) reads and writes through the methods below
``prune_communities``: pages of unplaced entities with their neighbours' communities,
placements, and the snapshots stale reports are made from. Its writes take the entity graph's
lock first (``entity_graph/lock``), so they serialise with the ingests that maintain the graph.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..errors import InputError, NotFoundError
from ..types.communities import Community, CommunityReport, CommunitySnapshot, StoredCommunity
from ..types.entities import Entity, EntityRelation
from ..validation import check_int
from ._rows import _check_top_k, check_ids, community_from_row, unit_weight
from .runner import CypherRunner, Rows, TxRunner

__all__ = ["CommunitiesMixin", "StoredCommunity"]

#: community rows per UNWIND statement, and membership / parent links per statement
COMMUNITY_ROWS = 500
LINK_ROWS = 2000


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


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
        one gets an empty report; every report records when it was written (``reported_at``).
        Returns counts: deleted, communities, memberships, parents."""
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

        reported_at = _now()
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
                        "reported_at": reported_at,
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

    def community_update_state(self) -> dict[str, int]:
        """Counts ``communities update`` starts from: communities, stale ones, and entities of
        the entity graph in no community (``unplaced``)."""
        row = self.runner.read("communities/update_state", namespace=self.namespace)[0]
        return {k: int(row[k]) for k in ("communities", "stale", "unplaced")}

    def mark_changed_communities(self, *, batch_size: int = 10_000) -> int:
        """Mark stale the communities whose live member count differs from the size their
        report was written for, in transactions of at most ``batch_size``; returns how many."""
        check_int(batch_size, "batch_size", minimum=1)
        total = 0
        while True:
            marked = int(self.runner.write("communities/mark_changed", namespace=self.namespace, limit=batch_size)[0]["marked"])
            total += marked
            if marked < batch_size:
                return total

    def unplaced_entity_votes(
        self, *, after: str = "", limit: int = 1000, round_key: str, previous: str | None = None
    ) -> list[tuple[str, list[tuple[str, float]]]]:
        """A page of the entities in no community (by id, after ``after``), each with its votes
        ``(community id, weight)``: one per RELATED_TO relationship to a neighbour with a
        community (its finest one), not counting memberships written in round ``round_key``.
        With ``previous``: only entities next to one round ``previous`` placed."""
        check_int(limit, "limit", minimum=1)
        rows = self.runner.read(
            "communities/unplaced_votes", namespace=self.namespace, after=after, limit=limit, round=round_key, previous=previous
        )
        return [(r["entity_id"], [(str(c), unit_weight(w)) for c, w in r["votes"]]) for r in rows]

    def place_entities(self, placements: Sequence[tuple[str, str]], *, round_key: str) -> int:
        """Put each ``(entity id, community id)``'s entity into that community and the ones above
        it, marking them stale, in one transaction; returns the entities placed (one that
        meanwhile went or got a community is skipped)."""
        rows = [{"entity_id": e, "community_id": c} for e, c in placements]
        if not rows:
            return 0

        def work(tx: TxRunner) -> int:
            tx.run("entity_graph/lock", namespace=self.namespace)
            return int(tx.run("communities/place_entities", namespace=self.namespace, rows=rows, round=round_key)[0]["placed"])

        return int(self.runner.write_fn(work))

    def stale_community_ids(self, *, after: str = "", limit: int = 20) -> list[str]:
        """A page of the ids of stale communities, by id after ``after``."""
        check_int(limit, "limit", minimum=1)
        rows = self.runner.read("communities/stale_page", namespace=self.namespace, after=after, limit=limit)
        return [r["id"] for r in rows]

    def community_snapshots(self, community_ids: Sequence[str]) -> list[CommunitySnapshot]:
        """What the reports of these communities are made of (see ``CommunitySnapshot``);
        communities that are gone are left out."""
        return self._snapshots(self.runner.read, check_ids(community_ids, "community_ids"))

    def _snapshots(self, read: Callable[..., Rows], ids: list[str]) -> list[CommunitySnapshot]:
        if not ids:
            return []
        out = []
        for r in read("communities/snapshots", namespace=self.namespace, ids=ids):
            entities = []
            relations = []
            for entity_id, name, type_, description, source_chunk_id, edges in r["members"]:
                entity = Entity(
                    id=entity_id,
                    name=name or entity_id,
                    type=type_ or "OTHER",
                    description=description or "",
                    source_chunk_id=source_chunk_id,
                    namespace=self.namespace,
                )
                entities.append(entity)
                for target, relation_type, weight, relation_description, sequence in edges:
                    relations.append(
                        EntityRelation(
                            source_id=entity.id,
                            target_id=target,
                            type=relation_type or "RELATED_TO",
                            weight=unit_weight(weight),
                            description=relation_description or "",
                            sequence=sequence,
                        )
                    )
            relations.sort(key=lambda x: (x.source_id, x.target_id, x.type, x.description, x.weight, x.sequence or 0))
            members = tuple(e.id for e in entities)
            community = Community(
                id=r["id"], level=int(r["level"] or 0), members=members, parent_id=r.get("parent_id"), size=len(members)
            )
            out.append(CommunitySnapshot(community, tuple(entities), tuple(relations)))
        return out

    def write_community_reports(self, made: Sequence[tuple[CommunitySnapshot, CommunityReport]]) -> int:
        """Write each report whose community still reads as the snapshot it was made from, with
        that snapshot's size, and clear the community's stale mark, in one transaction; a
        community that changed meanwhile keeps its old report and stays stale. Returns the
        reports written. For reports that take long to make (a chat model's)."""
        for snapshot, report in made:
            if report.community_id != snapshot.community.id:
                raise InputError(f"report of {report.community_id} given for community {snapshot.community.id}")
        if not made:
            return 0
        reported_at = _now()

        def work(tx: TxRunner) -> int:
            tx.run("entity_graph/lock", namespace=self.namespace)
            now = {s.community.id: s for s in self._snapshots(tx.run, [s.community.id for s, _ in made])}
            return self._write_reports(tx, [(s, r) for s, r in made if now.get(s.community.id) == s], reported_at)

        return int(self.runner.write_fn(work))

    def refresh_community_reports(
        self, community_ids: Sequence[str], make: Callable[[CommunitySnapshot], CommunityReport]
    ) -> int:
        """Read these communities, make their reports with ``make`` (pure, quick: it runs
        inside the transaction) and write them, clearing their stale mark, in one transaction
        that holds the entity graph's lock, so nothing changes them in between. Communities
        without members are left alone. Returns the reports written."""
        ids = check_ids(community_ids, "community_ids")
        if not ids:
            return 0
        reported_at = _now()

        def work(tx: TxRunner) -> int:
            tx.run("entity_graph/lock", namespace=self.namespace)
            made = [(s, make(s)) for s in self._snapshots(tx.run, ids) if s.community.members]
            return self._write_reports(tx, made, reported_at)

        return int(self.runner.write_fn(work))

    def _write_reports(self, tx: TxRunner, made: Sequence[tuple[CommunitySnapshot, CommunityReport]], reported_at: str) -> int:
        rows = [
            {
                "id": snapshot.community.id,
                "props": {
                    "title": report.title,
                    "summary": report.summary,
                    "full_content": report.full_content,
                    "rank": float(report.rank),
                    "rating": report.rating,
                    "size": snapshot.community.size,
                    "reported_at": reported_at,
                },
            }
            for snapshot, report in made
        ]
        if not rows:
            return 0
        return int(tx.run("communities/write_reports", namespace=self.namespace, rows=rows)[0]["written"])

    def list_communities(self, *, level: int | None = None, limit: int | None = None) -> list[StoredCommunity]:
        """Communities by level, then rank (highest first); empty ones are not listed."""
        if level is not None:
            check_int(level, "level", minimum=0, error=InputError)
        if limit is not None:
            _check_top_k(limit)
        rows = self.runner.read("communities/list_communities", namespace=self.namespace, level=level, limit=limit or 10_000_000)
        return [community_from_row(r, members=int(r["members"]), parent_id=r.get("parent_id")) for r in rows]

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
        rows = self.runner.read("communities/reports_for_entities", namespace=self.namespace, ids=ids, top_k=top_k)
        return [community_from_row(r, matched=int(r["matched"])) for r in rows]
