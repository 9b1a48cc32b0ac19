"""Hierarchical Leiden communities of the entity graph, in Python (igraph + leidenalg).

Used when the database has no GDS plugin. Bottom-up hierarchy:

- level 0 is the finest partition: Leiden with ``RBConfigurationVertexPartition`` at
  ``resolution``, run to convergence;
- level k >= 1 clusters the *aggregate graph* of level k-1 (one node per community, edge
  weights summed, internal weight kept as self-loops) at resolution
  ``resolution * level_decay ** k``; so level k is always a coarsening of level k-1 (every
  community is a union of communities of the level below);
- it stops after ``levels`` levels, or as soon as a level merges nothing.

Deterministic: node ids are sorted, parallel edges folded, and leidenalg is seeded, so the same
graph and seed give the same communities whatever order the input came in. A community's id
is a hash of its level and sorted member ids.

Communities smaller than ``min_size`` (default 2) are not returned: an isolated entity is not a
community worth a report. Their nodes still take part in the clustering, and a returned
community's parent is always returned too (a parent is never smaller than its child).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import ConfigurationError, InputError
from ..types.communities import Community, CommunityAssignment, community_id
from ..validation import check_int, check_number

__all__ = ["Community", "CommunityAssignment", "community_assignments", "community_id", "leiden_communities"]


def community_assignments(communities: Iterable[Community]) -> list[CommunityAssignment]:
    """One assignment per (member, community): the rows for the ``IN_COMMUNITY`` write."""
    return [CommunityAssignment(m, c.id, c.level) for c in communities for m in c.members]


def _import_leiden() -> tuple[Any, Any]:
    try:
        import igraph
        import leidenalg
    except ImportError as exc:
        raise ConfigurationError('Leiden communities need igraph and leidenalg: pip install "kgrag-neo4j[communities]"') from exc
    return igraph, leidenalg


def _fold_edges(
    node_ids: Sequence[str], weighted_edges: Iterable[Sequence[Any]]
) -> tuple[list[str], dict[tuple[int, int], float]]:
    nodes = sorted(set(node_ids))
    for n in nodes:
        if not isinstance(n, str) or not n:
            raise InputError(f"node ids must be non-empty strings, got {n!r}")
    index = {n: i for i, n in enumerate(nodes)}
    folded: dict[tuple[int, int], float] = {}
    for edge in weighted_edges:
        if len(edge) != 3:
            raise InputError(f"an edge is (source, target, weight), got {edge!r}")
        a, b, w = edge
        if a not in index or b not in index:
            missing = a if a not in index else b
            raise InputError(f"edge {a!r} -> {b!r} names {missing!r}, which is not in node_ids")
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
            raise InputError(f"edge {a!r} -> {b!r} has weight {w!r}; weights are finite and >= 0")
        if a == b or w == 0:
            continue  # a self-loop says nothing about which community to join
        key = (min(index[a], index[b]), max(index[a], index[b]))
        folded[key] = folded.get(key, 0.0) + float(w)
    return nodes, folded


def leiden_communities(
    node_ids: Iterable[str],
    weighted_edges: Iterable[Sequence[Any]],
    *,
    levels: int = 2,
    resolution: float = 1.0,
    seed: int = 42,
    level_decay: float = 0.5,
    min_size: int = 2,
    n_iterations: int = 2,
) -> list[Community]:
    """Communities of an undirected weighted graph, by level (0 = finest).

    ``n_iterations`` Leiden passes per level (2, leidenalg's default; -1 runs to convergence,
    which on a real entity graph takes dozens of passes for a slightly better quality score).

    ``weighted_edges`` are ``(source, target, weight)``; both directions and repeated edges
    add up; self-loops and zero weights are ignored; a node not in ``node_ids`` is an
    ``InputError``. Sorted by level, then size (largest first), then id.
    """
    check_int(levels, "levels", minimum=1, error=InputError)
    check_number(resolution, "resolution", above=0.0, error=InputError)
    check_number(level_decay, "level_decay", above=0.0, maximum=1.0, error=InputError)
    check_int(min_size, "min_size", minimum=1, error=InputError)
    nodes, folded = _fold_edges(list(node_ids), weighted_edges)
    if not nodes:
        return []
    igraph, leidenalg = _import_leiden()

    edges = sorted(folded)
    graph = igraph.Graph(n=len(nodes), edges=edges)
    graph.es["weight"] = [folded[e] for e in edges]

    # memberships[k][v]: community index of node v at level k.
    memberships: list[list[int]] = []
    partition = leidenalg.find_partition(
        graph,
        leidenalg.RBConfigurationVertexPartition,
        weights="weight",
        resolution_parameter=float(resolution),
        n_iterations=n_iterations,
        seed=seed,
    )
    memberships.append(list(partition.membership))
    optimiser = leidenalg.Optimiser()
    optimiser.set_rng_seed(seed)
    for level in range(1, levels):
        aggregate = partition.aggregate_partition()
        aggregate.resolution_parameter = float(resolution) * level_decay**level
        optimiser.optimise_partition(aggregate, n_iterations=n_iterations)
        if len(set(aggregate.membership)) == len(set(partition.membership)):
            break  # nothing merged: a higher level would repeat this one
        memberships.append([aggregate.membership[c] for c in memberships[-1]])
        partition = aggregate

    # Community index -> member node indices, per level.
    groups_by_level: list[dict[int, list[int]]] = []
    for membership in memberships:
        groups: dict[int, list[int]] = {}
        for v, c in enumerate(membership):
            groups.setdefault(c, []).append(v)
        groups_by_level.append(groups)
    ids_by_level = [
        {c: community_id(level, (nodes[v] for v in members)) for c, members in groups.items()}
        for level, groups in enumerate(groups_by_level)
    ]

    out: list[Community] = []
    for level, groups in enumerate(groups_by_level):
        for c, members in groups.items():
            if len(members) < min_size:
                continue
            parent_id = None
            if level + 1 < len(memberships):
                parent_id = ids_by_level[level + 1][memberships[level + 1][members[0]]]
            out.append(
                Community(
                    id=ids_by_level[level][c],
                    level=level,
                    members=tuple(sorted(nodes[v] for v in members)),
                    parent_id=parent_id,
                    size=len(members),
                )
            )
    out.sort(key=lambda com: (com.level, -com.size, com.id))
    return out
