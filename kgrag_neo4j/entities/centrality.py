"""Entity importance for the seed-001 centrality option: PageRank and max-normalisation.

Pure code. Degree centrality is counted in the database (``cypher/entities/degree.cypher``);
PageRank runs here, in numpy, over the edges the store reads in one query: a few dozen power
iterations of a graph of tens of thousands of entities take milliseconds, and it needs no
plugin (GDS) on the server.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..errors import InputError

__all__ = ["normalise_max", "pagerank"]


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
    if not 0.0 < damping < 1.0:
        raise InputError(f"damping must be in (0, 1), got {damping!r}")
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise InputError(f"iterations must be a positive integer, got {iterations!r}")
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
    """Scale scores so the largest is 1.0 (the seed wants centrality in [0, 1]); all-zero or
    empty input maps to zeros."""
    top = max(scores.values(), default=0.0)
    if top <= 0:
        return {k: 0.0 for k in scores}
    return {k: float(v) / top for k, v in scores.items()}
