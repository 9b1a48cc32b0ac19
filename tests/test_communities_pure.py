"""Leiden communities and community reports, without a database."""

from __future__ import annotations

import itertools
import json
import logging
import random
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrag_neo4j.communities import (
    Community,
    CommunityAssignment,
    community_assignments,
    community_id,
    extractive_report,
    leiden_communities,
    llm_report,
)
from kgrag_neo4j.errors import ConfigurationError, InputError, ProviderError
from kgrag_neo4j.types.entities import Entity, EntityRelation


def clique(prefix: str, n: int, weight: float = 1.0) -> tuple[list[str], list[tuple[str, str, float]]]:
    nodes = [f"{prefix}{i}" for i in range(n)]
    return nodes, [(a, b, weight) for a, b in itertools.combinations(nodes, 2)]


def two_cliques():
    a, ea = clique("a", 5)
    b, eb = clique("b", 5)
    return a + b, ea + eb + [("a0", "b0", 1.0)]


def four_cliques():
    """Cliques g0..g3; g0-g1 and g2-g3 strongly linked, the two pairs barely."""
    nodes, edges = [], []
    for g in range(4):
        n, e = clique(f"g{g}n", 5)
        nodes += n
        edges += e
    for left, right in (("g0", "g1"), ("g2", "g3")):
        edges += [(f"{left}n{i}", f"{right}n{i}", 1.0) for i in range(3)]
    edges.append(("g1n4", "g2n4", 0.2))
    return nodes, edges


def by_level(communities):
    out: dict[int, list[Community]] = {}
    for c in communities:
        out.setdefault(c.level, []).append(c)
    return out


# --- Leiden ---------------------------------------------------------------------------------


def test_two_cliques_joined_by_one_edge_give_two_communities():
    nodes, edges = two_cliques()
    communities = leiden_communities(nodes, edges)
    assert {c.members for c in communities} == {tuple(f"a{i}" for i in range(5)), tuple(f"b{i}" for i in range(5))}
    assert all(c.level == 0 and c.size == 5 and c.parent_id is None for c in communities)
    for c in communities:
        assert c.id == community_id(0, c.members)


def test_same_seed_same_result_whatever_the_input_order():
    nodes, edges = four_cliques()
    first = leiden_communities(nodes, edges, seed=7)
    assert first == leiden_communities(nodes, edges, seed=7)
    rng = random.Random(3)
    shuffled_nodes = nodes[:]
    rng.shuffle(shuffled_nodes)
    flipped = [(b, a, w) for a, b, w in edges]
    rng.shuffle(flipped)
    assert leiden_communities(shuffled_nodes, flipped, seed=7) == first


def test_hierarchy_levels_coarsen_and_link_parents():
    nodes, edges = four_cliques()
    communities = leiden_communities(nodes, edges, levels=4)
    levels = by_level(communities)
    assert sorted(levels) == [0, 1]  # level 2 would merge nothing more: it stops
    assert sorted(c.size for c in levels[0]) == [5, 5, 5, 5]
    assert {frozenset(c.members) for c in levels[1]} == {
        frozenset(n for n in nodes if n[:2] in ("g0", "g1")),
        frozenset(n for n in nodes if n[:2] in ("g2", "g3")),
    }
    ids = {c.id: c for c in communities}
    for child in levels[0]:
        parent = ids[child.parent_id]
        assert parent.level == 1 and set(child.members) <= set(parent.members)
    assert all(c.parent_id is None for c in levels[1])
    only_finest = leiden_communities(nodes, edges, levels=1)
    assert only_finest == [Community(c.id, c.level, c.members, None, c.size) for c in levels[0]]


def test_a_level_that_merges_nothing_is_not_emitted():
    nodes, edges = two_cliques()
    assert {c.level for c in leiden_communities(nodes, edges, levels=5)} == {0}


def test_isolated_nodes_are_skipped_unless_min_size_is_one():
    nodes, edges = two_cliques()
    communities = leiden_communities(nodes + ["lonely"], edges)
    assert all("lonely" not in c.members for c in communities)
    singles = leiden_communities(nodes + ["lonely"], edges, min_size=1)
    assert ("lonely",) in {c.members for c in singles}
    assert leiden_communities(["x", "y"], []) == []
    assert leiden_communities([], []) == []


def test_parallel_edges_add_up_and_self_loops_are_ignored():
    nodes = ["a", "b", "c", "d"]
    # a-b twice (both directions) outweighs the single b-c and c-d edges.
    edges = [("a", "b", 0.5), ("b", "a", 0.5), ("c", "d", 1.0), ("b", "c", 0.1), ("a", "a", 5.0)]
    assert {c.members for c in leiden_communities(nodes, edges)} == {("a", "b"), ("c", "d")}


@pytest.mark.parametrize(
    "edges, message",
    [
        ([("a", "zz", 1.0)], "not in node_ids"),
        ([("a", "b", -1.0)], "weight"),
        ([("a", "b", float("inf"))], "weight"),
        ([("a", "b")], "source, target, weight"),
    ],
)
def test_bad_edges_are_input_errors(edges, message):
    with pytest.raises(InputError, match=message):
        leiden_communities(["a", "b"], edges)


@pytest.mark.parametrize("kwargs", [{"levels": 0}, {"resolution": 0}, {"level_decay": 0}, {"level_decay": 1.5}, {"min_size": 0}])
def test_bad_options_are_input_errors(kwargs):
    with pytest.raises(InputError):
        leiden_communities(["a", "b"], [("a", "b", 1.0)], **kwargs)


def test_missing_leidenalg_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "leidenalg", None)  # makes `import leidenalg` fail
    with pytest.raises(ConfigurationError, match=r"kgrag-neo4j\[communities\]"):
        leiden_communities(["a", "b"], [("a", "b", 1.0)])


def test_community_ids_depend_on_level_and_members_only():
    assert community_id(0, ["b", "a"]) == community_id(0, ["a", "b"])
    assert community_id(0, ["a", "b"]) != community_id(1, ["a", "b"])
    assert community_id(0, ["ab", "c"]) != community_id(0, ["a", "bc"])


def test_community_assignments_rows():
    nodes, edges = four_cliques()
    communities = leiden_communities(nodes, edges)
    rows = community_assignments(communities)
    assert len(rows) == sum(c.size for c in communities)
    assert CommunityAssignment("g0n0", next(c.id for c in communities if c.level == 0 and "g0n0" in c.members), 0) in rows
    for level in (0, 1):
        assert sorted(r.node_id for r in rows if r.level == level) == sorted(nodes)


@st.composite
def random_graphs(draw):
    n = draw(st.integers(min_value=1, max_value=25))
    nodes = [f"n{i:02d}" for i in range(n)]
    pairs = list(itertools.combinations(nodes, 2))
    chosen = draw(st.lists(st.sampled_from(pairs), max_size=60)) if pairs else []
    weights = draw(st.lists(st.floats(min_value=0.01, max_value=1.0), min_size=len(chosen), max_size=len(chosen)))
    return nodes, [(a, b, w) for (a, b), w in zip(chosen, weights)]


@settings(max_examples=60, deadline=None)
@given(random_graphs(), st.integers(min_value=0, max_value=3))
def test_random_graphs_give_nested_partitions(graph, seed):
    nodes, edges = graph
    communities = leiden_communities(nodes, edges, levels=3, seed=seed, min_size=1)
    levels = by_level(communities)
    ids = {c.id: c for c in communities}
    for level, group in levels.items():
        members = [m for c in group for m in c.members]
        assert sorted(members) == sorted(nodes)  # a partition of all nodes at each level
        if level > 0:
            assert len(group) < len(levels[level - 1])  # every emitted level merged something
        for c in group:
            assert c.size == len(c.members) and c.id == community_id(level, c.members)
            if c.parent_id is not None:
                assert set(c.members) <= set(ids[c.parent_id].members)
            else:
                assert level == max(levels)
    assert communities == leiden_communities(list(reversed(nodes)), edges, levels=3, seed=seed, min_size=1)


# --- reports --------------------------------------------------------------------------------

NED = Entity.create("Ned Stark", "PERSON", description="Lord of Winterfell.")
ROBERT = Entity.create("Robert Baratheon", "PERSON", description="The king.")
JON = Entity.create("Jon Arryn", "PERSON", description="Hand of the King.")
WINTERFELL = Entity.create("Winterfell", "LOCATION", description="A castle in the North.")
TYWIN = Entity.create("Tywin Lannister", "PERSON")  # not a member
RELATIONS = [
    EntityRelation(NED.id, ROBERT.id, "ALLY", 0.9, "fought together"),
    EntityRelation(JON.id, NED.id, "MENTOR", 0.8, "raised Ned"),
    EntityRelation(NED.id, WINTERFELL.id, "LORD_OF", 0.6),
    EntityRelation(JON.id, ROBERT.id, "MENTOR", 0.3),
    EntityRelation(ROBERT.id, TYWIN.id, "ENEMY", 1.0, "outside the community"),
]
MEMBERS = (NED, ROBERT, JON, WINTERFELL)
COMMUNITY = Community(
    id=community_id(0, [e.id for e in MEMBERS]),
    level=0,
    members=tuple(sorted(e.id for e in MEMBERS)),
    parent_id=None,
    size=4,
)


def test_extractive_report_content():
    report = extractive_report(COMMUNITY, [*MEMBERS, TYWIN], RELATIONS)
    internal = [r for r in RELATIONS if r.target_id != TYWIN.id]
    assert report.community_id == COMMUNITY.id
    assert report.rank == pytest.approx(sum(r.weight for r in internal))
    # Weighted degrees: Ned 0.9+0.8+0.6, Robert 0.9+0.3, Jon 0.8+0.3, Winterfell 0.6.
    assert report.title == "Ned Stark, Robert Baratheon and Jon Arryn (+1)"
    assert report.summary.startswith("Community of 4 entities (3 PERSON, 1 LOCATION) at level 0.")
    assert "Ned Stark ALLY Robert Baratheon (0.90)" in report.summary
    assert "Jon Arryn MENTOR Robert Baratheon" not in report.summary  # only the top 3 relations
    for e in MEMBERS:
        assert e.name in report.full_content
    assert "Lord of Winterfell." in report.full_content
    assert "Tywin" not in report.full_content and "ENEMY" not in report.full_content
    lines = report.full_content.splitlines()
    relation_lines = [ln for ln in lines if " -[" in ln]
    assert len(relation_lines) == 4
    assert relation_lines[0].startswith("- Ned Stark -[ALLY 0.90]-> Robert Baratheon")


def test_extractive_report_of_members_without_entities_or_relations():
    lonely = Community(id="com_x", level=1, members=("ent_a", "ent_b"), parent_id=None, size=2)
    report = extractive_report(lonely, [], [])
    assert report.rank == 0
    assert report.title == "ent_a and ent_b"
    assert "(none inside this community)" in report.full_content


class ScriptedChat:
    def __init__(self, answer):
        self.answer = answer
        self.calls = []

    def chat(self, messages, *, json_schema=None):
        self.calls.append((messages, json_schema))
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def test_llm_report_uses_the_model_title_summary_and_rating():
    chat = ScriptedChat(
        "```json\n"
        + json.dumps({"title": "The Stark alliance", "summary": "Ned and Robert are allies.", "rating": 7.5})
        + "\n```"
    )
    report = llm_report(chat, COMMUNITY, MEMBERS, RELATIONS)
    assert (report.title, report.summary, report.rating) == ("The Stark alliance", "Ned and Robert are allies.", 7.5)
    assert report.rank == extractive_report(COMMUNITY, MEMBERS, RELATIONS).rank
    assert report.full_content.startswith("# The Stark alliance\n\nNed and Robert are allies.")
    ((messages, schema),) = chat.calls
    assert "Ned Stark -[ALLY 0.90]-> Robert Baratheon" in messages[-1]["content"]
    assert schema["required"] == ["title", "summary", "rating"]


@pytest.mark.parametrize("rating", [11, -1, "high", None, True])
def test_llm_report_ignores_a_bad_rating(rating):
    chat = ScriptedChat(json.dumps({"title": "T", "summary": "S", "rating": rating}))
    report = llm_report(chat, COMMUNITY, MEMBERS, RELATIONS)
    assert (report.title, report.rating) == ("T", None)


@pytest.mark.parametrize(
    "answer",
    [
        "not json at all",
        json.dumps({"title": "", "summary": "S", "rating": 3}),
        json.dumps({"title": "T", "rating": 3}),
        json.dumps(["T", "S"]),
        ProviderError("timeout"),
        RuntimeError("boom"),
    ],
)
def test_llm_report_falls_back_to_extractive(answer, caplog):
    with caplog.at_level(logging.WARNING, logger="kgrag_neo4j.communities.reports"):
        report = llm_report(ScriptedChat(answer), COMMUNITY, MEMBERS, RELATIONS)
    assert report == extractive_report(COMMUNITY, MEMBERS, RELATIONS)
    assert any(COMMUNITY.id in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
