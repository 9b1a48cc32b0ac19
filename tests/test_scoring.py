"""Pure retrieval scoring: RRF, graph scores, the per-hop BFS, blending, entity boosts and
parent-child resolution. No database; every expected value is computed by hand."""

from __future__ import annotations

import dataclasses
import itertools
import logging

import pytest

from kgrag_neo4j.errors import ConfigurationError, InputError, StoreError
from kgrag_neo4j.retrieval.scoring import (
    GraphHit,
    GraphOptions,
    blend_and_rank,
    entity_boost,
    expand_per_hop,
    hop_score,
    reciprocal_rank_fusion,
    resolve_parents,
    seed_score,
)
from kgrag_neo4j.types import Chunk, ChunkEdge, ComponentScores, EdgeContext, RelationType, RetrievalResult

R = RelationType

# --- Reciprocal Rank Fusion --------------------------------------------------------------

# Hand computations (rank r is 1-based, a list adds weight / (k + r)):
#
# A) vector [a, b, c], keyword [c, a], keyword_weight 0.3, k 60, normalised (x 61):
#    a = 61 * (0.7/61 + 0.3/62) = 0.7 + 18.3/62      = 0.995161...
#    c = 61 * (0.7/63 + 0.3/61) = 42.7/63 + 0.3     = 0.977777...
#    b = 61 * (0.7/62)          = 42.7/62           = 0.688709...
# B) vector [x, y], keyword [y, x], keyword_weight 0.5, raw:
#    x = y = 0.5/61 + 0.5/62 = 0.016261237...  -> tie, first appearance (x) first
# C) vector [a, b], keyword [b], keyword_weight 0.3, k 0, raw:
#    a = 0.7/1 = 0.7 ; b = 0.7/2 + 0.3/1 = 0.65
# D) vector [a], keyword [z, a], keyword_weight 0.3, k 60, raw:
#    a = 0.7/61 + 0.3/62 = 0.0163141...; z = 0.3/61 = 0.0049180...
RRF_CASES = [
    pytest.param(
        ["a", "b", "c"],
        ["c", "a"],
        dict(keyword_weight=0.3),
        [("a", 0.7 + 18.3 / 62), ("c", 42.7 / 63 + 0.3), ("b", 42.7 / 62)],
        id="A-normalised",
    ),
    pytest.param(
        ["x", "y"],
        ["y", "x"],
        dict(keyword_weight=0.5, normalize=False),
        [("x", 0.5 / 61 + 0.5 / 62), ("y", 0.5 / 61 + 0.5 / 62)],
        id="B-tie-first-appearance",
    ),
    pytest.param(
        ["a", "b"],
        ["b"],
        dict(keyword_weight=0.3, k=0, normalize=False),
        [("a", 0.7), ("b", 0.65)],
        id="C-k0",
    ),
    pytest.param(
        ["a"],
        ["z", "a"],
        dict(keyword_weight=0.3, normalize=False),
        [("a", 0.7 / 61 + 0.3 / 62), ("z", 0.3 / 61)],
        id="D-keyword-only-id",
    ),
    pytest.param([], [], dict(), [], id="empty"),
]


@pytest.mark.parametrize("vector, keyword, kwargs, expected", RRF_CASES)
def test_rrf_hand_examples(vector, keyword, kwargs, expected):
    got = reciprocal_rank_fusion(vector, keyword, **kwargs)
    assert [cid for cid, _ in got] == [cid for cid, _ in expected]
    for (_, score), (_, want) in zip(got, expected):
        assert score == pytest.approx(want, rel=1e-12)


def test_rrf_rank_one_in_both_lists_normalises_to_one():
    assert reciprocal_rank_fusion(["a"], ["a"]) == [("a", pytest.approx(1.0))]


@pytest.mark.parametrize(
    "keyword_weight, expected_order",
    [(0.0, ["v1", "shared", "v2"]), (1.0, ["k1", "k2", "shared"])],
    ids=["vector-only", "keyword-only"],
)
def test_rrf_weight_extremes_reduce_to_one_list(keyword_weight, expected_order):
    vector = ["v1", "shared", "v2"]
    keyword = ["k1", "k2", "shared"]
    got = reciprocal_rank_fusion(vector, keyword, keyword_weight=keyword_weight)
    assert [cid for cid, _ in got] == expected_order
    # A zero-weight list contributes nothing, not even zero-score entries.
    assert all(score > 0 for _, score in got)


def test_rrf_accepts_pairs_and_results_and_ignores_their_scores():
    vector = [("a", 0.1), ("b", 0.99)]  # rank, not score, counts: a stays first
    keyword = [RetrievalResult(id="b", content="", score=3.0)]
    got = reciprocal_rank_fusion(vector, keyword, keyword_weight=0.3, normalize=False)
    assert got == [("b", pytest.approx(0.7 / 62 + 0.3 / 61)), ("a", pytest.approx(0.7 / 61))]


def test_rrf_repeated_id_keeps_first_rank():
    got = reciprocal_rank_fusion(["a", "b", "a"], [], keyword_weight=0.0, normalize=False)
    assert got == [("a", pytest.approx(1 / 61)), ("b", pytest.approx(1 / 62))]


@pytest.mark.parametrize("kwargs", [dict(keyword_weight=-0.1), dict(keyword_weight=1.5), dict(keyword_weight=True), dict(k=-1)])
def test_rrf_rejects_bad_options(kwargs):
    with pytest.raises(ConfigurationError):
        reciprocal_rank_fusion(["a"], ["b"], **kwargs)


def test_rrf_rejects_bad_items():
    with pytest.raises(InputError, match="vector_ranked"):
        reciprocal_rank_fusion([42], [])


# --- seed and hop scores -----------------------------------------------------------------


@pytest.mark.parametrize(
    "vector_score, kwargs, expected",
    [
        (0.9, {}, 0.93),  # the original worked example: 0.7 * 0.9 + 0.3
        (0.0, {}, 0.3),
        (1.0, {}, 1.0),
        (0.5, dict(vector_weight=1.0, graph_weight=0.0), 0.5),
        (0.5, dict(vector_weight=0.6, graph_weight=0.4), 0.7),
    ],
)
def test_seed_score(vector_score, kwargs, expected):
    assert seed_score(vector_score, **kwargs) == pytest.approx(expected)


@pytest.mark.parametrize(
    "edge_weight, hop, kwargs, expected",
    [
        (0.8, 2, {}, 0.12),  # the original worked example: 0.3 * 0.8 * 0.5
        (0.8, 1, {}, 0.168),  # 0.3 * 0.8 * 0.7
        (1.0, 1, {}, 0.21),
        (1.0, 5, {}, 0.15),  # past the decay list: its last value, 0.5
        (0.5, 3, dict(hop_decay=(1.0, 0.9)), 0.135),  # 0.3 * 0.5 * 0.9
        (0.5, 1, dict(graph_weight=1.0, hop_decay=[1.0, 0.4, 0.2]), 0.2),
    ],
)
def test_hop_score(edge_weight, hop, kwargs, expected):
    assert hop_score(edge_weight, hop, **kwargs) == pytest.approx(expected)


def test_hop_score_rejects_hop_zero_and_empty_decay():
    with pytest.raises(InputError, match="hop"):
        hop_score(0.5, 0)
    with pytest.raises(ConfigurationError, match="hop_decay"):
        hop_score(0.5, 1, hop_decay=())


# --- GraphOptions ------------------------------------------------------------------------


def test_graph_options_defaults_are_the_seeds():
    o = GraphOptions()
    assert (o.max_hops, o.graph_weight, o.vector_weight, o.hop_decay) == (2, 0.3, 0.7, (1.0, 0.7, 0.5))
    assert (o.bidirectional, o.relation_filter, o.min_traversal_score) == (False, (), 0.0)
    assert (o.seed_top_k, o.seed_keyword_weight) == (10, 0.0)
    assert o.decay(1) == 0.7 and o.decay(2) == 0.5 and o.decay(9) == 0.5
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.max_hops = 3  # type: ignore[misc]


def test_graph_options_normalise_relations_and_decay():
    o = GraphOptions(relation_filter=["Depends_On", R.REFERENCES, "depends_on"], hop_decay=[1, 0.9])
    assert o.relation_filter == (R.DEPENDS_ON, R.REFERENCES)
    assert o.hop_decay == (1.0, 0.9)
    assert GraphOptions(relation_filter="elaborates").relation_filter == (R.ELABORATES,)
    assert o.follows("references") and o.follows(R.DEPENDS_ON) and not o.follows("sequence")
    assert GraphOptions().follows("anything")


@pytest.mark.parametrize(
    "kwargs, named",
    [
        (dict(max_hops=-1), "max_hops"),
        (dict(max_hops=1.5), "max_hops"),
        (dict(graph_weight=-0.1), "graph_weight"),
        (dict(vector_weight=float("nan")), "vector_weight"),
        (dict(hop_decay=()), "hop_decay"),
        (dict(hop_decay=(1.0, -0.5)), "hop_decay"),
        (dict(hop_decay="0.5"), "hop_decay"),
        (dict(relation_filter=("friend_of",)), "relation_filter"),
        (dict(min_traversal_score=1.5), "min_traversal_score"),
        (dict(min_traversal_score=-0.1), "min_traversal_score"),
        (dict(seed_top_k=0), "seed_top_k"),
        (dict(seed_keyword_weight=1.2), "seed_keyword_weight"),
        (dict(bidirectional="yes"), "bidirectional"),
    ],
)
def test_graph_options_validation(kwargs, named):
    with pytest.raises(ConfigurationError, match=named):
        GraphOptions(**kwargs)


# --- per-hop BFS -------------------------------------------------------------------------


def edge(src: str, dst: str, weight: float, relation: RelationType = R.REFERENCES, description: str = "") -> ChunkEdge:
    return ChunkEdge(src, dst, relation, weight, description=description)


class EdgeTable:
    """An in-memory GraphStore edge lookup that records every call it answers."""

    def __init__(self, edges, *, fail_on_call: int | None = None, fail_incoming: bool = False):
        self.edges = list(edges)
        self.calls: list[tuple[str, tuple[str, ...]]] = []
        self.fail_on_call = fail_on_call
        self.fail_incoming = fail_incoming

    def _record(self, kind, ids):
        self.calls.append((kind, tuple(ids)))
        if self.fail_on_call is not None and len(self.calls) == self.fail_on_call:
            raise StoreError("connection reset")

    def outgoing(self, ids):
        self._record("out", ids)
        return [e for e in self.edges if e.source_id in ids]

    def incoming(self, ids):
        self._record("in", ids)
        if self.fail_incoming:
            raise StoreError("incoming failed")
        return [e for e in self.edges if e.target_id in ids]


def run_bfs(edges, seeds, **options):
    table = EdgeTable(edges)
    # these pin the original formula: blend="seed"
    hits = expand_per_hop(seeds, table.outgoing, table.incoming, GraphOptions(blend="seed", **options))
    return hits, table


def summary(hits):
    return {cid: (h.hop, round(h.score, 10), h.context.from_chunk_id, h.context.relation) for cid, h in hits.items()}


def test_bfs_chain_scores_and_depth():
    # a -0.9-> b -0.8-> c -1.0-> d ; max_hops 2 stops before d.
    hits, table = run_bfs([edge("a", "b", 0.9), edge("b", "c", 0.8), edge("c", "d", 1.0)], {"a": 0.9})
    assert summary(hits) == {
        "b": (1, round(0.3 * 0.9 * 0.7, 10), "a", "references"),
        "c": (2, round(0.12, 10), "b", "references"),  # the original example: 0.3 * 0.8 * 0.5
    }
    assert table.calls == [("out", ("a",)), ("out", ("b",))]
    assert hits["c"].context == EdgeContext("b", "references", "", hops=2, weight=0.8)


def test_bfs_decay_past_the_list_uses_last_value():
    chain = [edge("a", "b", 1.0), edge("b", "c", 1.0), edge("c", "d", 1.0), edge("d", "e", 1.0)]
    hits, _ = run_bfs(chain, ["a"], max_hops=4)
    assert {cid: h.score for cid, h in hits.items()} == pytest.approx({"b": 0.21, "c": 0.15, "d": 0.15, "e": 0.15})


def test_bfs_cycles_end_and_seeds_are_never_rescored():
    cycle = [edge("a", "b", 0.5), edge("b", "a", 0.9), edge("b", "c", 0.5), edge("c", "a", 1.0), edge("c", "b", 1.0)]
    hits, table = run_bfs(cycle, ["a"], max_hops=10)
    assert set(hits) == {"b", "c"}
    assert (hits["b"].hop, hits["c"].hop) == (1, 2)
    # hop 3 finds only visited chunks, so the frontier empties and the loop ends.
    assert table.calls == [("out", ("a",)), ("out", ("b",)), ("out", ("c",))]


def test_bfs_edge_between_two_seeds_scores_nothing():
    hits, _ = run_bfs([edge("a", "b", 1.0)], {"a": 0.9, "b": 0.2})
    assert hits == {}


@pytest.mark.parametrize("bidirectional, expected", [(False, {}), (True, {"x": (1, 0.126, "a", "references")})])
def test_bfs_bidirectional(bidirectional, expected):
    # Only x -> a exists: it is reachable from seed a only against the edge direction.
    hits, table = run_bfs([edge("x", "a", 0.6)], ["a"], bidirectional=bidirectional)
    assert summary(hits) == {k: (v[0], round(v[1], 10), v[2], v[3]) for k, v in expected.items()}
    asked_incoming = any(kind == "in" for kind, _ in table.calls)
    assert asked_incoming is bidirectional


def test_bfs_bidirectional_walks_on_from_incoming_neighbours():
    # hop 1: y via incoming y->a ; hop 2: z via outgoing y->z
    hits, _ = run_bfs([edge("y", "a", 1.0), edge("y", "z", 0.8)], ["a"], bidirectional=True)
    assert summary(hits) == {"y": (1, 0.21, "a", "references"), "z": (2, 0.12, "y", "references")}


def test_bfs_bidirectional_needs_incoming_callable():
    with pytest.raises(ConfigurationError, match="get_incoming_edges"):
        expand_per_hop(["a"], lambda ids: [], None, GraphOptions(bidirectional=True))


@pytest.mark.parametrize(
    "relation_filter, expected",
    [
        ((), {"b", "c", "d", "e"}),
        ((R.DEPENDS_ON,), {"b", "d"}),  # e hangs off c, which the filter cuts away
        (("references",), {"c"}),
        ((R.CONTRADICTS,), set()),
    ],
)
def test_bfs_relation_filter(relation_filter, expected):
    edges = [
        edge("a", "b", 0.9, R.DEPENDS_ON),
        edge("a", "c", 0.9, R.REFERENCES),
        edge("b", "d", 0.9, R.DEPENDS_ON),
        edge("c", "e", 0.9, R.DEPENDS_ON),
    ]
    hits, _ = run_bfs(edges, ["a"], relation_filter=relation_filter)
    assert set(hits) == expected


@pytest.mark.parametrize("threshold, expected", [(0.0, {"b", "c"}), (0.5, {"c"}), (0.51, set())])
def test_bfs_min_traversal_score_is_inclusive(threshold, expected):
    hits, _ = run_bfs([edge("a", "b", 0.4), edge("a", "c", 0.5)], ["a"], min_traversal_score=threshold)
    assert set(hits) == expected


def test_bfs_first_hop_wins_over_a_better_later_path():
    # b is reached at hop 1 through a weak edge; the strong path a -> c -> b comes a hop later.
    hits, _ = run_bfs([edge("a", "b", 0.2), edge("a", "c", 0.9), edge("c", "b", 1.0)], ["a"])
    assert (hits["b"].hop, hits["b"].context.from_chunk_id) == (1, "a")
    assert hits["b"].score == pytest.approx(0.3 * 0.2 * 0.7)


def test_bfs_best_edge_at_a_hop_scores_the_chunk():
    edges = [edge("a", "x", 0.5, description="weak"), edge("s", "x", 0.9, description="strong")]
    hits, _ = run_bfs(edges, {"a": 0.9, "s": 0.1})
    assert hits["x"].score == pytest.approx(0.3 * 0.9 * 0.7)
    assert (hits["x"].context.from_chunk_id, hits["x"].context.description) == ("s", "strong")


TIED = [
    edge("b", "x", 0.7, R.ELABORATES),
    edge("a", "x", 0.7, R.REFERENCES),
    edge("a", "x", 0.7, R.DEPENDS_ON),
]


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_bfs_tie_break_is_deterministic(order):
    # Equal weights: smallest from_chunk_id (a), then smallest relation name (depends_on).
    hits, _ = run_bfs([TIED[i] for i in order], ["b", "a"])
    assert (hits["x"].context.from_chunk_id, hits["x"].context.relation) == ("a", "depends_on")


def test_bfs_frontier_is_in_id_order():
    hits, table = run_bfs([edge("a", "z", 1.0), edge("a", "m", 1.0), edge("m", "q", 1.0)], ["a"])
    assert table.calls[1] == ("out", ("m", "z"))
    assert set(hits) == {"m", "q", "z"}


def test_bfs_ignores_edges_not_leaving_the_frontier():
    # A store answering with an unrelated edge must not make b reachable.
    hits = expand_per_hop(["a"], lambda ids: [edge("q", "b", 1.0)], None, GraphOptions())
    assert hits == {}


def test_bfs_max_hops_zero_makes_no_calls():
    hits, table = run_bfs([edge("a", "b", 1.0)], ["a"], max_hops=0)
    assert hits == {} and table.calls == []


def test_bfs_traversal_error_stops_and_keeps_earlier_hops(caplog):
    table = EdgeTable([edge("a", "b", 1.0), edge("b", "c", 1.0)], fail_on_call=2)
    with caplog.at_level(logging.WARNING, logger="kgrag_neo4j.retrieval.scoring"):
        hits = expand_per_hop({"a": 1.0}, table.outgoing, table.incoming, GraphOptions(max_hops=3))
    assert set(hits) == {"b"}
    assert len(table.calls) == 2
    assert any(r.levelno == logging.WARNING and "hop 2" in r.getMessage() for r in caplog.records)


def test_bfs_error_on_first_hop_returns_nothing(caplog):
    table = EdgeTable([edge("a", "b", 1.0)], fail_on_call=1)
    with caplog.at_level(logging.WARNING):
        assert expand_per_hop(["a"], table.outgoing, table.incoming, GraphOptions()) == {}
    assert "connection reset" in caplog.text


def test_bfs_incoming_error_stops_too(caplog):
    table = EdgeTable([edge("a", "b", 1.0)], fail_incoming=True)
    with caplog.at_level(logging.WARNING):
        hits = expand_per_hop(["a"], table.outgoing, table.incoming, GraphOptions(bidirectional=True))
    assert hits == {}
    assert "incoming failed" in caplog.text


# --- blending ----------------------------------------------------------------------------


def hit(cid: str, score: float, hop: int = 1) -> GraphHit:
    return GraphHit(cid, score, hop, EdgeContext("s1", "references", hops=hop, weight=1.0))


def test_blend_and_rank_orders_seeds_and_hits():
    seeds = {"s1": 0.9, "s2": 0.5}
    hits = {"g1": hit("g1", 0.12, 2), "g2": hit("g2", 0.189)}
    ranked = blend_and_rank(seeds, hits, 10)
    assert [(r.chunk_id, round(r.score, 10)) for r in ranked] == [
        ("s1", 0.93),  # 0.7 * 0.9 + 0.3
        ("s2", 0.65),  # 0.7 * 0.5 + 0.3
        ("g2", 0.189),
        ("g1", 0.12),
    ]
    assert ranked[0].is_seed and ranked[0].seed_score == 0.9 and ranked[0].graph is None
    assert not ranked[3].is_seed and ranked[3].graph.hop == 2
    assert [r.chunk_id for r in blend_and_rank(seeds, hits, 2)] == ["s1", "s2"]


def test_blend_seed_reached_by_graph_keeps_seed_score():
    ranked = blend_and_rank({"s": 0.1}, [hit("s", 0.9), hit("g", 0.2)], 5)
    assert [(r.chunk_id, round(r.score, 10)) for r in ranked] == [("s", 0.37), ("g", 0.2)]
    assert ranked[0].graph is None and ranked[1].graph.chunk_id == "g"


def test_blend_ties_break_by_id_and_weights_apply():
    seeds = [("b", 0.5), ("a", 0.5), ("b", 0.1)]  # a repeated seed keeps its best score
    ranked = blend_and_rank(seeds, [hit("c", 0.5)], 5, vector_weight=1.0, graph_weight=0.0)
    assert [(r.chunk_id, r.score) for r in ranked] == [("a", 0.5), ("b", 0.5), ("c", 0.5)]


@pytest.mark.parametrize("top_k", [0, -1, 2.0])
def test_blend_rejects_bad_top_k(top_k):
    with pytest.raises(InputError, match="top_k"):
        blend_and_rank({"a": 1.0}, {}, top_k)


# --- entity boost ------------------------------------------------------------------------

QUERY = {"ned", "robert"}
RELATED = {"catelyn": (1, 1.0), "jon": (1, 0.8), "tywin": (2, 0.9), "lysa": (2, 0.8), "robert": (1, 0.9)}


@pytest.mark.parametrize(
    "mentioned, kwargs, expected_boost",
    [
        # Seed: "Robert and Ned fought together" -> 0.72 + 0.3 + 0.3 = 1.32
        ({"ned", "robert"}, {}, 0.6),
        # Seed: "Tywin Lannister sent a raven" -> 0.55 + 0.1 * (1/2) * 0.9 = 0.595
        ({"tywin"}, {}, 0.045),
        # strength ignored: 0.1 * (1/2) * 1
        ({"tywin"}, dict(use_strength=False), 0.05),
        # robert is both query and related: counted once, as direct
        ({"robert"}, {}, 0.3),
        # 0.3 (ned) + 0.1*1*1.0 (catelyn) + 0.1*0.5*0.8 (lysa); "stranger" is unrelated
        ({"ned", "catelyn", "lysa", "stranger"}, {}, 0.44),
        ({"ned", "tywin"}, dict(direct=0.4, indirect=0.15), 0.4 + 0.15 * 0.5 * 0.9),
        (set(), {}, 0.0),
    ],
)
def test_entity_boost_table(mentioned, kwargs, expected_boost):
    boost, _ = entity_boost(mentioned, QUERY, RELATED, **kwargs)
    assert boost == pytest.approx(expected_boost)


def test_entity_boost_final_scores_match_the_seed():
    assert 0.72 + entity_boost(["ned", "robert"], QUERY, RELATED)[0] == pytest.approx(1.32)
    assert 0.55 + entity_boost(["tywin"], QUERY, RELATED)[0] == pytest.approx(0.595)


def test_entity_boost_explains_each_term_in_order():
    _, why = entity_boost({"lysa", "ned", "catelyn"}, QUERY, RELATED)
    assert len(why) == 3
    assert why[0].startswith("mentions query entity ned") and why[0].endswith("+0.300")
    assert "catelyn" in why[1] and why[1].endswith("+0.100")
    assert "lysa" in why[2] and "distance 2" in why[2] and why[2].endswith("+0.040")


@pytest.mark.parametrize("info", [(0, 1.0), (-1, 0.5), (1, -0.2), ("far", 0.5)])
def test_entity_boost_rejects_bad_related_info(info):
    with pytest.raises(InputError, match="distance|strength"):
        entity_boost({"x"}, set(), {"x": info})


# --- parent-child resolution -------------------------------------------------------------


def result(cid: str, score: float, parent: str | None = None, **kw) -> RetrievalResult:
    return RetrievalResult(id=cid, content=f"child {cid}", score=score, parent_id=parent, document_id="d", **kw)


PARENTS = {
    "P": Chunk(id="P", document_id="d", content="parent P text", chunk_index=0, metadata={"h": "Intro"}),
    "Q": Chunk(id="Q", document_id="d", content="parent Q text", chunk_index=4),
}


def test_resolve_parents_best_child_wins_and_others_pass_through():
    results = [
        result("c1", 0.8, "P", scores=ComponentScores(vector=0.8)),
        result("x", 0.7),
        result("c2", 0.9, "P", scores=ComponentScores(vector=0.9)),
        result("c3", 0.6, "Q"),
        result("c4", 0.65, "missing"),
    ]
    resolved = resolve_parents(results, PARENTS)
    assert [(r.id, r.score) for r in resolved] == [("P", 0.9), ("x", 0.7), ("c4", 0.65), ("Q", 0.6)]
    p = resolved[0]
    assert (p.content, p.chunk_index, p.parent_id, p.metadata) == ("parent P text", 0, None, {"h": "Intro"})
    assert p.scores.vector == 0.9 and "c2" in p.explanation[-1]
    assert resolved[2].content == "child c4"  # parent not found: the child stays as it was
    # Inputs are not mutated.
    assert results[2].id == "c2" and results[2].content == "child c2"


def test_resolve_parents_parent_matched_directly_is_not_duplicated():
    resolved = resolve_parents([result("P", 0.5), result("c1", 0.8, "P")], PARENTS)
    assert [(r.id, r.score) for r in resolved] == [("P", 0.8)]


def test_resolve_parents_without_parents_sorts_stably():
    resolved = resolve_parents([result("a", 0.5), result("b", 0.9), result("c", 0.5)], {})
    assert [r.id for r in resolved] == ["b", "a", "c"]


# --- the propagate blend -------------------------------------------------------------------
#
# Hand computations (vector_weight 0.7, graph_weight 0.3, hop_decay 1.0 / 0.7 / 0.5,
# similarities are Neo4j's normalised cosine s, cos = 2s - 1):
#
#   seed a: s = 0.9 (cos 0.8), mentions one query entity of df 2 (entity score 0.5),
#           entity_seed_weight 0.35          -> 0.7 * 0.8 + 0.35 * 0.5          = 0.735
#   seed w: s = 0.8 (cos 0.6), no entity      -> 0.7 * 0.6                       = 0.42
#   b, hop 1 from a over 1.0: s = 0.75 (cos 0.5)
#                                             -> 0.7 * 0.5 + 0.3 * 0.735 * 0.7  = 0.50435
#   c, hop 2 from b over 0.5: s = 0.5 (cos 0)
#                                             -> 0.0 + 0.3 * (0.50435 * 0.5) * 0.5 = 0.03782625
#   d, hop 1, reached from a over 0.4 (0.735 * 0.4 = 0.294) and from w over 0.9
#      (0.42 * 0.9 = 0.378): the edge from w is best although it is the lighter seed;
#      s = 0.6 (cos 0.2)                      -> 0.7 * 0.2 + 0.3 * 0.378 * 0.7  = 0.21938
# b outranks the weaker seed w: that is the point of the blend.


def test_propagate_formulas_by_hand():
    from kgrag_neo4j.retrieval.scoring import propagate_hop_score, propagate_seed_score
    from kgrag_neo4j.score_parts import raw_cosine

    assert raw_cosine(0.9) == pytest.approx(0.8)
    assert propagate_seed_score(0.9, 0.5, entity_seed_weight=0.35) == pytest.approx(0.735)
    assert propagate_seed_score(0.8) == pytest.approx(0.42)
    assert propagate_hop_score(0.75, 0.735, 1) == pytest.approx(0.50435)
    assert propagate_hop_score(0.5, 0.50435 * 0.5, 2) == pytest.approx(0.03782625)
    assert propagate_hop_score(0.5, 1.0, 7, hop_decay=(1.0, 0.9)) == pytest.approx(0.3 * 0.9)
    with pytest.raises(InputError):
        propagate_hop_score(0.5, 1.0, 0)


def test_propagate_per_hop_flows_scores_and_picks_the_best_contribution():
    table = EdgeTable([edge("a", "b", 1.0), edge("b", "c", 0.5), edge("a", "d", 0.4), edge("w", "d", 0.9)])
    sims = {"b": 0.75, "c": 0.5, "d": 0.6}
    asked = []

    def similarity(ids):
        asked.append(tuple(ids))
        return {i: sims[i] for i in ids}

    hits = expand_per_hop({"a": 0.735, "w": 0.42}, table.outgoing, None, GraphOptions(), similarity=similarity)
    assert {k: round(h.score, 8) for k, h in hits.items()} == {"b": 0.50435, "c": 0.03782625, "d": 0.21938}
    assert hits["d"].context.from_chunk_id == "w" and hits["d"].context.weight == 0.9
    assert hits["b"].similarity == 0.75
    assert asked == [("b", "d"), ("c",)]  # one similarity call per hop, new chunks only
    ranked = blend_and_rank({"a": 0.735, "w": 0.42}, hits, 5, blend="propagate")
    assert [r.chunk_id for r in ranked] == ["a", "b", "w", "d", "c"]


def test_propagate_without_similarity_scores_by_edges_alone():
    table = EdgeTable([edge("a", "b", 1.0)])
    hits = expand_per_hop({"a": 0.5}, table.outgoing, None, GraphOptions())
    # own closeness unknown: cos 0 -> 0.3 * 0.5 * 1.0 * 0.7
    assert hits["b"].score == pytest.approx(0.105) and hits["b"].similarity is None


def test_graph_options_blend_and_entity_weight_defaults():
    assert GraphOptions().blend == "propagate"
    assert GraphOptions().entity_weight == 0.35 and GraphOptions(blend="seed").entity_weight == 0.0
    assert GraphOptions(blend="seed", entity_seed_weight=0.5).entity_weight == 0.5
    assert GraphOptions().entity_max_chunks == 25
    with pytest.raises(ConfigurationError, match="blend"):
        GraphOptions(blend="mix")
    with pytest.raises(ConfigurationError, match="entity_seed_weight"):
        GraphOptions(entity_seed_weight=-1)
    with pytest.raises(ConfigurationError, match="blend"):
        blend_and_rank({}, {}, 1, blend="mix")
