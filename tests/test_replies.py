"""kgrag_neo4j.replies: the one parser of model replies (JSON found in fences or prose, validated
against a pydantic model of the reply, every failure one ProviderResponseError line)."""

from __future__ import annotations

import ast
import json
import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrag_neo4j.errors import ProviderResponseError
from kgrag_neo4j.replies import (
    CommunityReportReply,
    EdgesReply,
    EntitiesReply,
    RatingsReply,
    TriplesReply,
    find_json,
    parse_reply,
)

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "kgrag_neo4j"


@pytest.mark.parametrize(
    "text, value",
    [
        ('{"a": 1}', {"a": 1}),
        ("[1, 2]", [1, 2]),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ("```\n[1]\n```", [1]),
        ('Sure! {"a": [1, {"b": 2}]} Hope that helps.', {"a": [1, {"b": 2}]}),
        ('Here:\n```json\n{"a": 1}\n```\nand more ```text``` after', {"a": 1}),
        # the first fence that holds JSON wins, not the first fence
        ('```text\nno json\n```\n```json\n{"a": 2}\n```', {"a": 2}),
        ("  42  ", 42),
    ],
)
def test_find_json_finds_the_value(text, value):
    assert find_json(text) == value


@pytest.mark.parametrize("text", ["", "   ", "no json here", "```json\n{broken\n```", "{'a': 1}"])
def test_find_json_refuses_text_without_json_in_one_line(text):
    with pytest.raises(ProviderResponseError, match="the edge reply is not JSON") as caught:
        find_json(text, what="the edge reply")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("value", [None, 42, b'{"a": 1}', {"a": 1}])
def test_find_json_refuses_a_reply_that_is_not_text(value):
    with pytest.raises(ProviderResponseError, match="must be text"):
        find_json(value)


@pytest.mark.parametrize(
    "model, text, message",
    [
        (RatingsReply, '{"scores": [1, 2, 11]}', r"^rating reply: scores\[2\] is 11: must be a number in 0..10$"),
        (RatingsReply, '{"scores": [true, "x"]}', r"scores\[0\] is True: .* \(and 1 more problem\)$"),
        (RatingsReply, '{"score": [1]}', r"^rating reply has no 'scores'$"),
        (RatingsReply, '"ten"', r"must be a list or an object with 'scores', got 'ten'"),
        (EdgesReply, '{"edges": {"a": 1}}', r"edges is \{'a': 1\}: must be a list"),
        (CommunityReportReply, '{"title": " ", "summary": "s"}', r"title is ' ': must be non-empty text"),
        (CommunityReportReply, '{"title": 3, "summary": "s"}', r"title is 3: must be text"),
        (CommunityReportReply, '[{"title": "t"}]', r"must be an object"),
        (EntitiesReply, "[1, 2]", r"must be a JSON object"),
        (EntitiesReply, '{"entities": null}', r"entities is None: must be a list"),
    ],
)
def test_a_reply_of_the_wrong_shape_is_one_provider_error_line(model, text, message):
    with pytest.raises(ProviderResponseError, match=message) as caught:
        parse_reply(text, model, what="rating reply" if model is RatingsReply else "the reply")
    assert "\n" not in str(caught.value)


def test_invalid_edges_become_none_and_the_others_stay():
    good = {"source": "a", "target": "b", "relation": "references", "weight": 0.5}
    items = [
        good,
        {**good, "weight": 0},  # (0, 1]
        {**good, "weight": True},  # a bool is not a weight
        {**good, "weight": "0.5"},  # nor is text
        {**good, "source": 7},
        {**good, "description": 3},  # a description that is not text reads as ""
        "a->b",
    ]
    reply = parse_reply(json.dumps({"edges": items}), EdgesReply)
    kept = [e for e in reply.edges if e is not None]
    assert [e is None for e in reply.edges] == [False, True, True, True, True, False, True]
    assert [(e.source, e.weight, e.description) for e in kept] == [("a", 0.5, ""), ("a", 0.5, "")]
    assert parse_reply(json.dumps([good]), EdgesReply).edges[0].relation == "references"  # a bare list


def test_ratings_accept_a_bare_list_and_ints_as_floats():
    assert parse_reply("[10, 0, 7.5]", RatingsReply).scores == [10.0, 0.0, 7.5]


@pytest.mark.parametrize(
    "rating, kept",
    [(7, 7.0), (0, 0.0), (10.0, 10.0), (11, None), (-1, None), (True, None), ("5", None), (None, None), (float("nan"), None)],
)
def test_a_report_rating_outside_0_to_10_is_recorded_as_none(rating, kept):
    reply = parse_reply(json.dumps({"title": " T ", "summary": " S ", "rating": rating}), CommunityReportReply)
    assert (reply.title, reply.summary, reply.rating) == ("T", "S", kept)


def test_entities_reply_takes_relations_for_relationships_and_defaults_to_empty():
    (only,) = parse_reply('{"relations": [{"source": "a", "weight": 0.5}]}', EntitiesReply).relationships
    assert (only.source, only.strength) == ("a", 0.5)  # weight is read for a missing strength
    both = parse_reply('{"relationships": [{"strength": null, "weight": 2}], "relations": [{}, {}]}', EntitiesReply)
    assert [r.strength for r in both.relationships] == [None]
    assert parse_reply("{}", EntitiesReply) == EntitiesReply(entities=[], relationships=[])


def test_entity_items_are_lenient_field_by_field_and_none_when_not_objects():
    reply = parse_reply(
        json.dumps({"entities": [
            {"name": 3, "type": ["X"], "description": None, "chunk_ids": "c1"},
            {"name": "Ned", "type": "PERSON", "chunk_ids": ["c1", 2]},
            {"name": "Jon", "chunk_ids": {"c1": True}},
            "Arya",
        ]}),
        EntitiesReply,
    )  # fmt: skip
    first, second, third, fourth = reply.entities
    assert (first.name, first.type, first.description, first.chunk_ids) == ("", None, "", ["c1"])
    assert (second.name, second.type, second.chunk_ids) == ("Ned", "PERSON", ["c1", 2])
    assert third.chunk_ids == [] and fourth is None


def test_triples_reply_is_a_list_or_an_object_with_triples():
    assert parse_reply('[{"subject": "a"}]', TriplesReply).triples == [{"subject": "a"}]
    assert parse_reply('{"triples": [], "note": "x"}', TriplesReply).triples == []


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200))
def test_any_text_gives_a_reply_or_a_provider_error(text):
    for model in (EdgesReply, RatingsReply, EntitiesReply, CommunityReportReply, TriplesReply):
        try:
            parse_reply(text, model)
        except ProviderResponseError as exc:
            assert "\n" not in str(exc)


def test_no_other_module_decodes_model_replies_itself():
    """The four hand-written reply parsers are gone: only replies.py finds JSON in model text."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "raw_decode":
                offenders.append(f"{path.relative_to(PACKAGE)}: raw_decode")
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value.startswith("```")
                and "(" in node.value
            ):
                offenders.append(f"{path.relative_to(PACKAGE)}: a fence pattern")
    assert [o for o in offenders if not o.startswith("replies.py")] == []


def test_importing_the_package_and_the_cli_imports_no_pydantic():
    """pydantic costs ~0.2 s at import: only parsing a model reply may load it."""
    import subprocess
    import sys

    code = (
        "import sys, kgrag_neo4j, kgrag_neo4j.cli, kgrag_neo4j.ingestion.ingestor, kgrag_neo4j.retrieval, "
        "kgrag_neo4j.entities, kgrag_neo4j.triples, kgrag_neo4j.communities; print('pydantic' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PACKAGE.parent, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "False"
