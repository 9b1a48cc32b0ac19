"""Build the communities of a namespace's entity graph and write them with their reports.

read the entity graph (one query) -> hierarchical Leiden (``leiden.leiden_communities``:
igraph + leidenalg, seeded, deterministic) -> one report per community (``llm_report`` with a
chat model, else ``extractive_report``) -> ``write_communities``, which replaces the old
communities of the namespace in one transaction.

GDS: ``gds_available`` in the summary says whether the server has the Graph Data Science
Leiden procedures (``cypher/communities/gds_available``). The in-database GDS path is NOT
wired in: every ``cypher/`` file must plan (EXPLAIN) on every server, and a statement calling
``gds.leiden.stream`` does not plan where the plugin is absent, which is the case of the test
server. Leiden therefore always runs in Python on the graph read in one query; the answer is the
same on every server, with or without the plugin (untested with GDS here).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import ConfigurationError
from ..protocols import ChatProvider, CommunityStore
from ..validation import check_int
from .leiden import Community, leiden_communities
from .reports import CommunityReport, extractive_report, llm_report

__all__ = ["CommunityBuildSummary", "build_communities"]


@dataclass
class CommunityBuildSummary:
    """What ``build_communities`` did. ``by_level`` counts communities per level (0 = finest);
    ``deleted`` is how many old communities the rebuild replaced."""

    engine: str
    gds_available: bool
    entities: int
    relations: int
    communities: int
    by_level: dict[int, int] = field(default_factory=dict)
    reports: str = "extractive"
    deleted: int = 0
    memberships: int = 0
    parents: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["by_level"] = {str(k): v for k, v in self.by_level.items()}
        return out


def build_communities(
    store: CommunityStore,
    *,
    levels: int = 2,
    resolution: float = 1.0,
    seed: int = 42,
    chat: ChatProvider | None = None,
    min_size: int = 2,
    workers: int = 4,
    progress: Callable[[str, int, int], None] | None = None,
) -> CommunityBuildSummary:
    """Cluster the namespace's entities into ``levels`` levels of communities and store them
    with their reports (replacing the previous ones atomically).

    ``resolution`` is Leiden's (higher: smaller communities); ``seed`` makes it repeatable;
    ``min_size`` is the smallest community kept. With ``chat`` each report is written by the
    model (``workers`` at a time; a failed call falls back to the extractive report).
    """
    if chat is not None and not callable(getattr(chat, "chat", None)):
        raise ConfigurationError("chat must be a ChatProvider (an object with .chat())")
    check_int(workers, "workers", minimum=1)
    report = progress or (lambda stage, done, total: None)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[stage] = round(now - clock, 3)
        clock = now

    gds = store.gds_available()
    graph = store.read_entity_graph()
    lap("read")
    communities = leiden_communities(
        [e.id for e in graph.entities],
        graph.weighted_edges(),
        levels=levels,
        resolution=resolution,
        seed=seed,
        min_size=min_size,
    )
    lap("leiden")

    # Give each report only its own members and internal relations (not the whole graph).
    by_id = {e.id: e for e in graph.entities}
    community_of: dict[int, dict[str, str]] = {}
    for c in communities:
        level_map = community_of.setdefault(c.level, {})
        for m in c.members:
            level_map[m] = c.id
    internal: dict[str, list] = {c.id: [] for c in communities}
    for r in graph.relations:
        for level_map in community_of.values():
            cid = level_map.get(r.source_id)
            if cid is not None and level_map.get(r.target_id) == cid:
                internal[cid].append(r)

    def make_report(c: Community) -> CommunityReport:
        members = [by_id[m] for m in c.members if m in by_id]
        if chat is None:
            return extractive_report(c, members, internal[c.id])
        return llm_report(chat, c, members, internal[c.id])

    reports: list[CommunityReport] = []
    if chat is None or workers == 1:
        for i, c in enumerate(communities, 1):
            reports.append(make_report(c))
            report("reports", i, len(communities))
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kgrag-reports") as pool:
            for i, rep in enumerate(pool.map(make_report, communities), 1):
                reports.append(rep)
                report("reports", i, len(communities))
    lap("reports")

    counts = store.write_communities(communities, reports)
    lap("write")
    by_level: dict[int, int] = {}
    for c in communities:
        by_level[c.level] = by_level.get(c.level, 0) + 1
    return CommunityBuildSummary(
        engine="python",
        gds_available=gds,
        entities=len(graph.entities),
        relations=len(graph.relations),
        communities=len(communities),
        by_level=by_level,
        reports="llm" if chat is not None else "extractive",
        deleted=counts["deleted"],
        memberships=counts["memberships"],
        parents=counts["parents"],
        seconds=seconds,
    )
