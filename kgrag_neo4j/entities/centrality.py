"""Entity importance for entity-boosted retrieval's centrality option: PageRank and max-normalisation.

Degree centrality is counted in the database (``store.entity_degrees``,
``cypher/entities/degree.cypher``); PageRank runs here, in numpy, over the graph the store
reads in one query (``store.read_entity_graph``): a few dozen power iterations of a graph of
tens of thousands of entities take milliseconds, and it needs no plugin (GDS) on the server.
The store only reads; ``entity_centrality`` computes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ..errors import InputError
from ..protocols import EntityCentralitySource
from ..types.entities import CENTRALITY_KINDS, EntityGraph
from ..validation import check_choice, check_int, check_number

__all__ = ["degree_centrality", "entity_centrality", "normalise_max", "pagerank", "pagerank_centrality"]


def entity_centrality(store: EntityCentralitySource, kind: str = "degree") -> dict[str, float]:
    """Entity id -> importance in [0, 1] (the largest is 1.0), one read of the store.

    ``degree``: RELATED_TO relationships per entity. ``pagerank``: weighted PageRank (damping
    0.85, undirected) of the entity graph."""
    check_choice(kind, "centrality", CENTRALITY_KINDS)
    if kind == "degree":
        return degree_centrality(store.entity_degrees())
    return pagerank_centrality(store.read_entity_graph())


def degree_centrality(degrees: Mapping[str, int]) -> dict[str, float]:
    return normalise_max({k: float(v) for k, v in degrees.items()})


def pagerank_centrality(graph: EntityGraph) -> dict[str, float]:
    return normalise_max(pagerank([e.id for e in graph.entities], graph.weighted_edges()))


def pagerank(
    node_ids: Iterable[str],
    weighted_edges: Iterable[Sequence[object]],
    *,
    damping: float = 0.85,
    iterations: int = 50,
    tolerance: float = 1e-10,
) -> dict[str, float]:
    """Weighted PageRank of an undirected graph (each edge counts both ways).

    ``weighted_edges`` are ``(source, target, weight)`` with weight >= 0; parallel edges add
    up, self-loops are ignored, an endpoint not in ``node_ids`` is an ``InputError``. A node
    without edges spreads its rank evenly over all nodes (the usual dangling-node rule), so the
    scores always sum to 1. Stops after ``iterations`` power steps or when the L1 change falls
    below ``tolerance``. Deterministic: the same graph gives the same scores in any order.
    """
    if not check_number(damping, "damping", above=0.0, error=InputError) < 1.0:
        raise InputError(f"damping must be in (0, 1), got {damping!r}")
    check_int(iterations, "iterations", minimum=1, error=InputError)
    nodes = sorted(set(node_ids))
    if not nodes:
        return {}
    index = {n: i for i, n in enumerate(nodes)}
    n = len(nodes)
    rows: list[int] = []
    cols: list[int] = []
    weights: list[float] = []
    for edge in weighted_edges:
        if len(edge) != 3:
            raise InputError(f"an edge is (source, target, weight), got {edge!r}")
        a, b, w = edge
        if a not in index or b not in index:
            missing = a if a not in index else b
            raise InputError(f"edge {a!r} -> {b!r} names {missing!r}, which is not a node")
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
            raise InputError(f"edge {a!r} -> {b!r} has weight {w!r}; weights are finite and >= 0")
        if a == b or w == 0:
            continue
        i, j = index[a], index[b]
        rows += [i, j]
        cols += [j, i]
        weights += [float(w), float(w)]

    src = np.asarray(rows, dtype=np.int64)
    dst = np.asarray(cols, dtype=np.int64)
    wts = np.asarray(weights, dtype=np.float64)
    out_weight = np.bincount(src, weights=wts, minlength=n) if len(wts) else np.zeros(n)
    dangling = out_weight == 0
    # share of a node's rank each of its edges carries
    share = wts / out_weight[src] if len(wts) else wts

    rank = np.full(n, 1.0 / n)
    for _ in range(iterations):
        flow = np.bincount(dst, weights=rank[src] * share, minlength=n) if len(wts) else np.zeros(n)
        new = (1.0 - damping) / n + damping * (flow + rank[dangling].sum() / n)
        change = float(np.abs(new - rank).sum())
        rank = new
        if change < tolerance:
            break
    return {node: float(rank[i]) for node, i in index.items()}


def normalise_max(scores: Mapping[str, float]) -> dict[str, float]:
    """Scale scores so the largest is 1.0 (the entity boost wants centrality in [0, 1]); all-zero or
    empty input maps to zeros."""
    top = max(scores.values(), default=0.0)
    if top <= 0:
        return {k: 0.0 for k in scores}
    return {k: float(v) / top for k, v in scores.items()}
