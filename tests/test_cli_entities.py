"""``kgrag entities ...`` and ``kgrag communities ...`` against the real server."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kgrag_neo4j.cli import cli

from .entity_helpers import put_document

DOC_A = [
    "Ned Stark is the Lord of Winterfell. Ned Stark married Catelyn Stark.",
    "Robert Baratheon and Ned Stark fought together in the rebellion.",
]
DOC_B = [
    "Cersei Lannister married Robert Baratheon. Tywin Lannister is the father of Cersei Lannister.",
    "Tywin Lannister and Cersei Lannister rode to Casterly Rock.",
]


@pytest.fixture
def kgrag(neo4j_settings, namespace):
    runner = CliRunner()

    def run(*args: str, ok: bool = True):
        base = ["--uri", neo4j_settings.uri, "--user", neo4j_settings.user]
        if neo4j_settings.password is not None:
            base += ["--password", neo4j_settings.password]
        group, command, *rest = args
        result = runner.invoke(cli, [*base, group, command, "--namespace", namespace, *rest])
        if ok:
            assert result.exit_code == 0, result.output
        return result

    return run


@pytest.fixture
def corpus(store, hashing_embedder):
    put_document(store, "a.txt", DOC_A, embedder=hashing_embedder)
    put_document(store, "b.txt", DOC_B, embedder=hashing_embedder)
    return store


def test_entities_build_list_show(kgrag, corpus):
    built = kgrag("entities", "build", "--embedder", "hashing", "--json")
    counts = json.loads(built.stdout)
    assert counts["documents"] == 2 and counts["chunks"] == 4
    assert counts["entities"] == len(corpus.list_entities()) > 0
    assert "link: 4 chunks" in built.stderr and "hashing-256" in built.stderr  # progress on stderr

    listed = json.loads(kgrag("entities", "list", "--limit", "3", "--json").stdout)
    assert len(listed) == 3
    assert listed[0]["name"] in {"Ned Stark", "Cersei Lannister", "Tywin Lannister"}
    assert [x["mentions"] for x in listed] == sorted((x["mentions"] for x in listed), reverse=True)

    [ned] = json.loads(kgrag("entities", "show", "ned stark", "--json").stdout)
    assert ned["name"] == "Ned Stark" and ned["type"] == "PERSON" and ned["mention_total"] == 2
    assert {r["other"] for r in ned["relations"]} == {"Catelyn Stark", "Winterfell", "Robert Baratheon"}
    assert all(m["content"] for m in ned["mentions"])

    text = kgrag("entities", "show", "Ned Stark").stdout
    assert "Ned Stark (PERSON)" in text and "Robert Baratheon" in text and "mentioned by 2 chunks" in text
    assert "Ned Stark" in kgrag("entities", "list").stdout


def test_unknown_entity_is_one_clear_line(kgrag, corpus):
    result = kgrag("entities", "show", "Arya Stark", ok=False)
    assert result.exit_code == 1
    assert "NotFoundError" in result.output and "Arya Stark" in result.output
    assert "Traceback" not in result.output


def test_communities_build_list_show(kgrag, corpus):
    kgrag("entities", "build", "--embedder", "hashing")
    summary = json.loads(kgrag("communities", "build", "--levels", "2", "--seed", "7", "--json").stdout)
    assert summary["engine"] == "python" and summary["communities"] >= 2
    assert summary["entities"] == len(corpus.list_entities())

    listed = json.loads(kgrag("communities", "list", "--json").stdout)
    assert len(listed) == summary["communities"]
    level0 = json.loads(kgrag("communities", "list", "--level", "0", "--json").stdout)
    assert level0 and all(c["level"] == 0 for c in level0)

    shown = json.loads(kgrag("communities", "show", listed[0]["id"], "--json").stdout)
    assert shown["id"] == listed[0]["id"] and shown["member_entities"]
    names = {m["name"] for m in shown["member_entities"]}
    assert any(n in shown["full_content"] for n in names)
    assert listed[0]["id"] in kgrag("communities", "list").stdout
    assert shown["title"] in kgrag("communities", "show", listed[0]["id"]).stdout

    # a rebuild replaces: same seed, same communities, the old ones deleted
    again = json.loads(kgrag("communities", "build", "--levels", "2", "--seed", "7", "--json").stdout)
    assert again["deleted"] == summary["communities"] and again["communities"] == summary["communities"]

    def unstamped(rows: list[dict]) -> list[dict]:  # when a report was written differs, of course
        return [{k: v for k, v in r.items() if k != "reported_at"} for r in rows]

    relisted = json.loads(kgrag("communities", "list", "--json").stdout)
    assert all(r["reported_at"] for r in relisted)
    assert unstamped(relisted) == unstamped(listed)

    missing = kgrag("communities", "show", "com_missing", ok=False)
    assert missing.exit_code == 1 and "NotFoundError" in missing.output


def test_commands_have_help_with_an_example():
    runner = CliRunner()
    for group in ("entities", "communities"):
        for command in ("build", "list", "show"):
            result = runner.invoke(cli, [group, command, "--help"])
            assert result.exit_code == 0 and "Example: kgrag " + group in result.output
