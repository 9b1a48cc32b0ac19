"""The entity graph kept current from the CLI, on the real server: ``kgrag ingest`` links what
it writes when the namespace has an entity graph (``--no-entities`` leaves it, and status and
search say so), ``kgrag docs delete`` takes the document's part back, ``kgrag entities
status`` tells how current it is."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def run(kgrag_cli, namespace):
    def invoke(group: str, command: str, *args: str, code: int = 0):
        result = kgrag_cli(group, command, "--namespace", namespace, *args)
        assert result.exit_code == code, result.output
        return result

    return invoke


def _status(run) -> dict:
    return json.loads(run("entities", "status", "--json").stdout)


def test_ingest_keeps_the_entity_graph_current_and_status_says_how_current(run, tmp_path):
    (tmp_path / "ned.txt").write_text("Ned Stark rode to Winterfell. Ned Stark met Robert Baratheon there.")
    (tmp_path / "arya.txt").write_text("Arya Stark trained in Braavos. Arya Stark missed Winterfell.")
    run("ingest", str(tmp_path / "ned.txt"), "--embedder", "hashing")
    # no entity graph yet: a plain ingest makes none
    assert _status(run)["entities"] == 0
    run("entities", "build", "--embedder", "hashing")
    built = _status(run)
    assert built["documents"] == built["documents_linked"] == 1 and built["last_build"]
    assert set(built) == {
        "documents",
        "documents_linked",
        "chunks",
        "chunks_linked",
        "chunks_to_relink",
        "entities",
        "communities",
        "stale_communities",
        "last_build",
    }
    assert built["chunks_to_relink"] == 0

    run("ingest", str(tmp_path / "arya.txt"), "--embedder", "hashing", "--no-entities")
    left = _status(run)
    assert (left["documents"], left["documents_linked"]) == (2, 1)
    searched = run("search", "Arya Stark", "--mode", "ppr", "--embedder", "hashing")
    assert "1 document(s) are not linked into the entity graph" in searched.stderr
    assert "not linked" not in run("search", "Arya Stark", "--mode", "vector", "--embedder", "hashing").stderr

    (tmp_path / "jon.txt").write_text("Jon Snow wrote to Arya Stark from the Wall.")
    ingested = json.loads(run("ingest", str(tmp_path / "jon.txt"), "--embedder", "hashing", "--json").stdout)
    # it links everything not linked, and says what that took
    upkeep = ingested["summary"]["entity_graph"]
    assert upkeep["documents"] == 2 and upkeep["chunks"] >= 2 and upkeep["names_entered"] >= 2
    assert set(upkeep["seconds"]) >= {"scan", "link", "entities", "references"}
    assert (
        "entity_graph"
        not in json.loads(run("ingest", str(tmp_path / "jon.txt"), "--embedder", "hashing", "--no-entities", "--json").stdout)[
            "summary"
        ]
    )
    now = _status(run)
    assert now["documents"] == now["documents_linked"] == 3 and now["chunks"] == now["chunks_linked"]
    arya = json.loads(run("entities", "show", "Arya Stark", "--json").stdout)[0]
    assert arya["mention_total"] == 2
    assert "not linked" not in run("search", "Arya Stark", "--mode", "ppr", "--embedder", "hashing").stderr

    run("docs", "delete", str(tmp_path / "jon.txt"))
    arya = json.loads(run("entities", "show", "Arya Stark", "--json").stdout)[0]
    assert arya["mention_total"] == 1
    run("entities", "show", "Jon Snow", code=1)
    after = _status(run)
    assert after["documents"] == after["documents_linked"] == 2


def test_ingest_entities_builds_a_graph_on_a_plain_namespace(run, tmp_path):
    (tmp_path / "ned.txt").write_text("Ned Stark rode to Winterfell.")
    run("ingest", str(tmp_path / "ned.txt"), "--embedder", "hashing", "--entities")
    state = _status(run)
    assert state["entities"] >= 2 and state["documents_linked"] == 1


def test_docs_delete_takes_several_documents_and_refuses_all_when_one_is_unknown(run, tmp_path):
    names = {
        "ned.txt": "Ned Stark rode to Winterfell.",
        "arya.txt": "Arya Stark trained in Braavos.",
        "jon.txt": "Jon Snow wrote to Arya Stark from the Wall.",
    }
    for name, text in names.items():
        (tmp_path / name).write_text(text)
    run("ingest", str(tmp_path), "--embedder", "hashing", "--entities")
    refused = run("docs", "delete", str(tmp_path / "ned.txt"), "no-such-doc", "--json", code=1)
    assert "no document 'no-such-doc'" in refused.stderr and "nothing deleted" in refused.stderr
    assert [r["deleted"] for r in json.loads(refused.stdout)] == [False, False]
    assert _status(run)["documents"] == 3

    done = run("docs", "delete", str(tmp_path / "ned.txt"), str(tmp_path / "jon.txt"), "--json")
    assert [r["deleted"] for r in json.loads(done.stdout)] == [True, True]
    run("entities", "show", "Jon Snow", code=1)
    run("entities", "show", "Ned Stark", code=1)
    arya = json.loads(run("entities", "show", "Arya Stark", "--json").stdout)[0]
    assert arya["mention_total"] == 1
    after = _status(run)
    assert after["documents"] == after["documents_linked"] == 1


def test_ingest_chunk_tokens_sizes_the_chunks_and_is_refused_where_it_cannot_apply(run, tmp_path):
    text = " ".join(f"Sentence {i} tells of the river Tamar and the town of Launceston." for i in range(40))
    (tmp_path / "river.txt").write_text(text)
    small = json.loads(
        run("ingest", str(tmp_path / "river.txt"), "--embedder", "hashing", "--chunk-tokens", "32", "--json").stdout
    )
    assert small["summary"]["chunks"] > 8  # about 600 tokens, in pieces of at most 32
    default = json.loads(run("ingest", str(tmp_path / "river.txt"), "--embedder", "hashing", "--json").stdout)
    assert default["summary"]["replaced"] == 1 and default["summary"]["chunks"] < small["summary"]["chunks"]
    refused = run("ingest", str(tmp_path / "river.txt"), "--embedder", "hashing", "--chunk-overlap", "4", code=2)
    assert "--chunk-overlap need(s) --chunk-tokens" in refused.stderr
    refused = run(
        "ingest",
        str(tmp_path / "river.txt"),
        "--embedder",
        "hashing",
        "--chunk-tokens",
        "32",
        "--strategy",
        "parent-child",
        code=2,
    )
    assert "--chunk-tokens sizes flat chunks" in refused.stderr
    refused = run(
        "ingest", str(tmp_path / "river.txt"), "--embedder", "hashing", "--chunk-tokens", "8", "--chunk-overlap", "8", code=2
    )
    assert "--chunk-overlap must be smaller than --chunk-tokens (8)" in refused.stderr
