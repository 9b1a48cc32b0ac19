"""Personalized PageRank over chunks and entities: the walk checked against an independent
dense solve, the neighbourhood arithmetic by hand, and the retriever on a real server."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kgrag_neo4j.errors import ConfigurationError
from kgrag_neo4j.options import PPROptions
from kgrag_neo4j.retrieval.ppr import personalized_pagerank, ppr_rank
from kgrag_neo4j.types import Neighbourhood


def dense_ppr(nodes, edges, out_degree, reset, damping):
    """p = (1 - d) r + d W p solved exactly: p = (1 - d) (I - d W)^-1 r."""
    index = {n: i for i, n in enumerate(nodes)}
    W = np.zeros((len(nodes), len(nodes)))
    for a, b, w in edges:
        W[index[b], index[a]] += w / out_degree[a]
    r = np.array([reset.get(n, 0.0) for n in nodes])
    r = r / r.sum()
    p = np.linalg.solve(np.eye(len(nodes)) - damping * W, (1 - damping) * r)
    return {n: p[index[n]] for n in nodes}


def test_walk_matches_a_dense_solve():
    # a small chunk-entity graph: c1 - e1 - c2 - e2 - c3, plus c1 - e2; mentions weigh 1/df
    edges = []
    for c, e, df in (("c1", "e1", 2), ("c2", "e1", 2), ("c2", "e2", 3), ("c3", "e2", 3), ("c1", "e2", 3)):
        edges += [(c, e, 1 / df), (e, c, 1 / df)]
    out_degree = {"c1": 1 / 2 + 1 / 3, "c2": 1 / 2 + 1 / 3, "c3": 1 / 3, "e1": 1.0, "e2": 1.0}
    reset = {"c1": 0.7, "e2": 0.3}
    for damping in (0.3, 0.5, 0.85):
        mass, iterations, *_ = personalized_pagerank(edges, out_degree, reset, damping=damping, tol=1e-13, max_iterations=500)
        exact = dense_ppr(list(out_degree), edges, out_degree, reset, damping)
        assert iterations < 500
        for n in exact:
            assert mass[n] == pytest.approx(exact[n], abs=1e-10)
        assert sum(mass.values()) == pytest.approx(1.0)  # nothing leaks: every degree is its edges' sum


def test_a_larger_degree_leaks_the_mass_bound_outside():
    # c1's full degree counts an entity outside the neighbourhood: half its outflow is lost
    edges = [("c1", "e1", 1.0), ("e1", "c1", 1.0)]
    mass, *_ = personalized_pagerank(edges, {"c1": 2.0, "e1": 1.0}, {"c1": 1.0}, damping=0.5, tol=1e-14, max_iterations=1000)
    exact = dense_ppr(["c1", "e1"], edges, {"c1": 2.0, "e1": 1.0}, {"c1": 1.0}, 0.5)
    assert mass["c1"] == pytest.approx(exact["c1"]) and mass["e1"] == pytest.approx(exact["e1"])
    assert sum(mass.values()) < 1.0


def test_walk_refuses_an_empty_reset():
    with pytest.raises(ConfigurationError):
        personalized_pagerank([], {}, {"a": 0.0})


def hood():
    # seeds s1 (cos 0.6) and s2 (cos 0.2); the query names entity "Q" (df 2: s1 and far);
    # s1 also mentions "common" (df 4: s1, s2, x, y); "far" is reached only through "Q"
    return Neighbourhood(
        seeds=(("s1", 0.8), ("s2", 0.6)),
        query_entities=(("Q", "Quux", 1.0, "named"),),
        entities={"Q": ("Quux", 2), "common": ("Common", 4)},
        chunk_degrees={"s1": 1 / 2 + 1 / 4, "s2": 1 / 4, "far": 1 / 2, "x": 1 / 4, "y": 1 / 4},
        mentions=(("s1", "Q"), ("far", "Q"), ("s1", "common"), ("s2", "common"), ("x", "common"), ("y", "common")),
    )


def test_ppr_rank_reset_and_ranking_by_hand():
    o = PPROptions(temperature=0.1, entity_share=0.5, damping=0.5)
    result = ppr_rank(hood(), o)
    # reset: seeds share 0.5 by softmax((0.6, 0.2) / 0.1): e^0 : e^-4
    w1 = 1 / (1 + math.exp(-4))
    nodes = ["c:s1", "c:s2", "c:far", "c:x", "c:y", "e:Q", "e:common"]
    edges = []
    for c, e, df in (
        ("s1", "Q", 2),
        ("far", "Q", 2),
        ("s1", "common", 4),
        ("s2", "common", 4),
        ("x", "common", 4),
        ("y", "common", 4),
    ):
        edges += [("c:" + c, "e:" + e, 1 / df), ("e:" + e, "c:" + c, 1 / df)]
    degree = {"c:s1": 0.75, "c:s2": 0.25, "c:far": 0.5, "c:x": 0.25, "c:y": 0.25, "e:Q": 1.0, "e:common": 1.0}
    exact = dense_ppr(nodes, edges, degree, {"c:s1": 0.5 * w1, "c:s2": 0.5 * (1 - w1), "e:Q": 0.5}, 0.5)
    for n in nodes:
        key = n[2:] if n.startswith("c:") else n
        assert result.mass[key] == pytest.approx(exact[n], abs=1e-7)
    # the chunk reached only through the named entity outranks the weak seed
    assert result.mass["far"] > result.mass["s2"]
    assert result.carried_by["far"][0][0] == "Q"


def test_ppr_rank_without_query_entities_gives_the_seeds_all_the_reset():
    h = hood()
    plain = Neighbourhood(seeds=h.seeds, entities=h.entities, chunk_degrees=h.chunk_degrees, mentions=h.mentions)
    result = ppr_rank(plain, PPROptions())
    assert result.mass["s1"] > result.mass["s2"] > 0
    assert ppr_rank(Neighbourhood(), PPROptions()).mass == {}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"damping": 1.0},
        {"damping": -0.1},
        {"temperature": 0},
        {"entity_share": 1.5},
        {"seed_top_k": 0},
        {"max_entity_chunks": 0},
        {"relation_weight": float("nan")},
    ],
)
def test_ppr_options_validation(kwargs):
    with pytest.raises(ConfigurationError):
        PPROptions(**kwargs)
