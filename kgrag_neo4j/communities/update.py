"""Bring a namespace's communities up to date without clustering again (``kgrag communities
update``); ``build_communities`` stays the full re-clustering.

1. **prune**: communities no entity belongs to any more go (a deleted entity takes its
   memberships with it); communities whose live member count differs from the size their
   report was written for are marked stale.
2. **place** every entity in no community: it joins the community most of its RELATED_TO
   weight points to (each neighbour votes for its finest community with the relationship's
   weight; ties: the smallest community id), and every coarser community above that one.
   Placement runs in rounds: a round decides from what the rounds before it placed, so an
   entity whose only neighbours are new is placed in a later round, and the result does not
   depend on the page size. An entity with no placed neighbour stays in no community, as the
   full build leaves an isolated entity (it keeps no community smaller than two); a new
   topic that touches no community waits for the next ``kgrag communities build``.
3. **reports**: the report of every stale community (a member changed, joined or left) is
   written again from its live members, the same way the build writes it, and its stale mark
   cleared. Extractive reports are read, made and written in one transaction holding the
   entity graph's lock; a model's are made outside any transaction and written only if the
   community did not change meanwhile (else it keeps its mark for the next update).

Memory holds one page of entities (``page_size``) or of communities (``report_batch``) at a
time, never the graph; every write is one bounded transaction.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import ConfigurationError, NotFoundError
from ..protocols import ChatProvider, CommunityUpdateStore
from ..types.communities import CommunityReport, CommunitySnapshot
from ..validation import check_int
from .reports import extractive_report, llm_report

__all__ = ["CommunityUpdateSummary", "choose_community", "update_communities"]

#: ``progress(stage, done, total)``; stages: place (entities), reports (communities)
Progress = Callable[[str, int, int], None]


@dataclass
class CommunityUpdateSummary:
    """What ``update_communities`` did. ``communities``: how many there are after it;
    ``placed``: entities put into a community;
    ``unplaced``: entities still in none (no neighbour in a community); ``pruned``: empty
    communities removed; ``stale_reports_regenerated``: reports written again; ``still_stale``:
    communities that changed while their report was made (the next update takes them)."""

    communities: int
    placed: int = 0
    unplaced: int = 0
    rounds: int = 0
    pruned: int = 0
    stale_reports_regenerated: int = 0
    still_stale: int = 0
    reports: str = "extractive"
    seconds: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def choose_community(votes: Iterable[tuple[str, float]]) -> str | None:
    """The community with the most vote weight (ties: the smallest id); None when no vote
    weighs anything. Votes are summed in sorted order, so their order does not matter."""
    totals: dict[str, float] = {}
    for community, weight in sorted(votes):
        if weight > 0:
            totals[community] = totals.get(community, 0.0) + weight
    if not totals:
        return None
    return min(totals, key=lambda c: (-totals[c], c))


def _extractive(snapshot: CommunitySnapshot) -> CommunityReport:
    return extractive_report(snapshot.community, snapshot.entities, snapshot.relations)


def _report(chat: ChatProvider, snapshot: CommunitySnapshot) -> CommunityReport:
    return llm_report(chat, snapshot.community, snapshot.entities, snapshot.relations)


def update_communities(
    store: CommunityUpdateStore,
    *,
    chat: ChatProvider | None = None,
    workers: int = 4,
    page_size: int = 1000,
    report_batch: int = 20,
    progress: Progress | None = None,
) -> CommunityUpdateSummary:
    """Place the entities in no community, drop empty communities and write the stale
    communities' reports again (see the module docstring).

    With ``chat`` each report is written by the model (``workers`` at a time; a failed call
    falls back to the extractive report). ``page_size`` entities and ``report_batch``
    communities are held at once. ``NotFoundError`` when the namespace has no communities:
    there is nothing to update, ``build_communities`` makes them.
    """
    if chat is not None and not callable(getattr(chat, "chat", None)):
        raise ConfigurationError("chat must be a ChatProvider (an object with .chat())")
    check_int(workers, "workers", minimum=1)
    check_int(page_size, "page_size", minimum=1)
    check_int(report_batch, "report_batch", minimum=1)
    report = progress or (lambda stage, done, total: None)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[stage] = round(now - clock, 3)
        clock = now

    state = store.community_update_state()
    if state["communities"] == 0:
        raise NotFoundError(f"namespace {store.namespace!r} has no communities yet: run `kgrag communities build` first")
    summary = CommunityUpdateSummary(communities=state["communities"], reports="llm" if chat is not None else "extractive")
    summary.pruned = store.prune_communities()
    store.mark_changed_communities()
    lap("prune")

    # A round's key tells its memberships apart from those it may count; unique per run, so a
    # key left on a membership by an earlier run never matches.
    run = uuid.uuid4().hex
    previous: str | None = None
    while True:
        summary.rounds += 1
        key = f"{run}:{summary.rounds}"
        placed = 0
        after = ""
        while True:
            page = store.unplaced_entity_votes(after=after, limit=page_size, round_key=key, previous=previous)
            if not page:
                break
            chosen = [(entity, c) for entity, votes in page if (c := choose_community(votes)) is not None]
            placed += store.place_entities(chosen, round_key=key)
            report("place", summary.placed + placed, state["unplaced"])
            after = page[-1][0]
            if len(page) < page_size:
                break
        summary.placed += placed
        if not placed:
            break
        previous = key
    lap("place")

    after_place = store.community_update_state()
    summary.unplaced = after_place["unplaced"]
    summary.communities = after_place["communities"]
    total = after_place["stale"]
    done = 0
    after = ""
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kgrag-reports") if chat and workers > 1 else None
    try:
        while True:
            ids = store.stale_community_ids(after=after, limit=report_batch)
            if not ids:
                break
            if chat is None:
                # quick to make: read, made and written in one locked transaction
                summary.stale_reports_regenerated += store.refresh_community_reports(ids, _extractive)
            else:
                # a model takes long: made outside any transaction, written if nothing changed
                snapshots = [s for s in store.community_snapshots(ids) if s.community.members]
                made = list(
                    zip(
                        snapshots,
                        pool.map(lambda s: _report(chat, s), snapshots) if pool else (_report(chat, s) for s in snapshots),
                    )
                )
                written = store.write_community_reports(made)
                summary.stale_reports_regenerated += written
                summary.still_stale += len(made) - written
            done += len(ids)
            report("reports", min(done, total), total)
            after = ids[-1]
            if len(ids) < report_batch:
                break
    finally:
        if pool is not None:
            pool.shutdown()
    lap("reports")
    summary.seconds = seconds
    return summary
