"""The kgrag CLI against the real server (click's runner): each command in text and JSON form,
and one clear line for every connection problem."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from kgrag_neo4j.cli import cli
from kgrag_neo4j.loopback import free_port

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture
def kgrag(neo4j_settings, schema_ready):
    """Run ``kgrag`` against the test server; returns (exit_code, stdout, stderr)."""

    def invoke(*args: str, input: str | None = None):
        base = ["--uri", neo4j_settings.uri, "--user", neo4j_settings.user]
        if neo4j_settings.password:
            base += ["--password", neo4j_settings.password]
        if neo4j_settings.database:
            base += ["--database", neo4j_settings.database]
        result = CliRunner().invoke(cli, base + list(args), input=input)
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result.exit_code, result.stdout, result.stderr

    return invoke


def test_help_lists_every_command_with_text():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in ("server", "init", "schema", "cypher", "ingest", "docs", "search", "edges"):
        assert re.search(rf"^\s+{name}\s+\S", result.stdout, re.M), name


def test_schema_status_and_init_are_idempotent(kgrag, namespace):
    code, out, _ = kgrag("init", "--dimensions", "256", "--namespace", namespace, "--json")
    assert code == 0 and json.loads(out)["ready"] is True
    code, out, _ = kgrag("schema", "status", "--json")
    status = json.loads(out)
    assert status["dimensions"] == 256 and not status["missing"]
    assert {"chunk_embedding", "chunk_content", "entity_embedding", "document_id"} <= {i["name"] for i in status["indexes"]}
    vector = {i["name"]: i for i in status["indexes"] if i["type"] == "VECTOR"}
    assert {"chunk_embedding", "entity_embedding"} <= set(vector)
    if not os.environ.get("NEO4J_URI"):  # a server given from outside may hold an index made before
        assert all((v["hnsw_m"], v["hnsw_ef_construction"], v["quantized"]) == (16, 100, False) for v in vector.values()), vector
    code, out, _ = kgrag("schema", "status")
    assert re.search(r"chunk_embedding\s+VECTOR\s+ONLINE\s+HNSW m \d+, ef_construction \d+", out), out
    code, out, err = kgrag("init", "--dimensions", "64", "--namespace", namespace)
    assert code == 1 and "256" in err and "64" in err and "Traceback" not in err


def test_cypher_list_show_and_run(kgrag, namespace):
    code, out, _ = kgrag("cypher", "list", "--json")
    names = {q["name"]: q for q in json.loads(out)}
    assert names["graph/retrieve"]["mode"] == "read" and "namespace" in names["graph/retrieve"]["params"]
    code, out, _ = kgrag("cypher", "show", "documents/list_documents")
    assert out.startswith("// ") and "// browser: :params" in out and "MATCH (d:Document" in out
    code, out, _ = kgrag("cypher", "run", "documents/list_documents", "--param", f"namespace={namespace}", "--param", "limit=5")
    assert code == 0 and json.loads(out) == []
    # a parameter not given takes the file's example value, and the command says so
    code, out, err = kgrag("cypher", "run", "documents/list_documents", "--param", f"namespace={namespace}")
    assert code == 0 and json.loads(out) == [] and "from the file's example: limit" in err
    code, out, err = kgrag("cypher", "run", "chunks/search_vector", "--namespace", namespace)
    assert code == 1 and "takes a query vector: pass --query" in err
    code, out, err = kgrag("cypher", "run", "documents/list_documents", "--param", "limits=5")
    assert code == 1 and "has no parameter limits" in err
    code, out, err = kgrag("cypher", "run", "nope/nothing")
    assert code == 1 and "no cypher query named" in err


def test_ingest_a_folder_search_and_manage_documents(kgrag, namespace, tmp_path):
    folder = tmp_path / "kb"
    (folder / "sub").mkdir(parents=True)
    (folder / "graphs.md").write_text(
        "# Graphs\n\nNeo4j stores nodes and relationships.\n\n## Indexes\n\nVector indexes find similar chunks.\n"
    )
    (folder / "sub" / "cats.txt").write_text("Cats sleep most of the day in warm places.")
    (folder / "sub" / "broken.txt").write_bytes(b"\x00\x01\x02binary\x00\xff")
    (folder / ".hidden.txt").write_text("never ingested")
    code, out, _ = kgrag("ingest", str(folder), "--namespace", namespace, "--embedder", "hashing", "--sequence-edges", "--json")
    report = json.loads(out)
    assert code == 1  # one file failed; the others were ingested
    assert report["summary"]["new"] == 2 and report["summary"]["failed"] == 1
    failed = [f for f in report["files"] if f["status"] == "failed"]
    assert failed[0]["path"].endswith("broken.txt") and "ExtractionError" in failed[0]["error"]
    code, out, err = kgrag("ingest", str(folder / "graphs.md"), "--namespace", namespace, "--embedder", "hashing")
    assert code == 0 and "0 new, 1 unchanged" in out

    code, out, _ = kgrag(
        "search", "vector indexes", "--namespace", namespace, "--embedder", "hashing", "--mode", "hybrid", "--json"
    )
    results = json.loads(out)["results"]
    assert results and "Vector indexes" in results[0]["content"]
    assert {"id", "document_id", "content", "score", "scores"} <= set(results[0])
    assert "fused" in results[0]["scores"]
    code, out, _ = kgrag("search", "nodes", "--namespace", namespace, "--embedder", "hashing", "--mode", "graph", "--hops", "1")
    assert code == 0 and "1." in out
    code, out, _ = kgrag(
        "search",
        "cats",
        "--namespace",
        namespace,
        "--embedder",
        "hashing",
        "--mode",
        "vector",
        "--filter",
        "source=" + str(folder / "sub"),
        "--json",
    )
    assert [r["source"].endswith("cats.txt") for r in json.loads(out)["results"]] == [True]
    code, out, err = kgrag("search", "cats", "--namespace", namespace, "--embedder", "hashing", "--filter", "colour=red")
    assert code == 1 and "unknown --filter key" in err

    code, out, _ = kgrag("docs", "list", "--namespace", namespace, "--json")
    docs = json.loads(out)
    assert len(docs) == 2 and all(d["chunks"] >= 1 for d in docs)
    doc_id = next(d["id"] for d in docs if d["source"].endswith("graphs.md"))
    code, out, _ = kgrag("docs", "show", doc_id, "--namespace", namespace, "--json")
    assert json.loads(out)["chunks"][0]["content"].startswith("Graphs")
    code, out, _ = kgrag("docs", "delete", doc_id, "--namespace", namespace, "--json")
    assert json.loads(out) == {"id": doc_id, "deleted": True}
    code, out, err = kgrag("docs", "delete", doc_id, "--namespace", namespace)
    assert code == 1 and "no document" in err


def test_search_with_another_embedder_than_the_namespace_was_built_with(kgrag, namespace, tmp_path):
    (tmp_path / "a.txt").write_text("some text")
    kgrag("ingest", str(tmp_path / "a.txt"), "--namespace", namespace, "--embedder", "hashing")
    code, out, err = kgrag("search", "text", "--namespace", namespace, "--embedder", "wordllama")
    assert code == 1 and "hashing-256" in err and "wordllama" in err


def test_edges_build(kgrag, namespace, tmp_path):
    (tmp_path / "long.txt").write_text("\n\n".join(f"Paragraph {i}. " + "More words here. " * 80 for i in range(4)))
    kgrag("ingest", str(tmp_path / "long.txt"), "--namespace", namespace, "--embedder", "hashing")
    code, out, _ = kgrag("edges", "build", "--namespace", namespace, "--similarity-threshold", "0.1", "--json")
    counts = json.loads(out)
    assert code == 0 and counts["documents"] == 1 and counts["edges"] > 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--password", "definitely-wrong"], "rejected the credentials"),
        (["--uri", f"bolt://127.0.0.1:{free_port()}"], "cannot reach Neo4j"),
        (["--database", "nosuchdb"], "nosuchdb"),
    ],
)
def test_connection_problems_are_one_clear_line(neo4j_settings, args, message):
    base = {"--uri": neo4j_settings.uri, "--password": neo4j_settings.password or "", "--user": neo4j_settings.user}
    for i in range(0, len(args), 2):
        base[args[i]] = args[i + 1]
    flat = [x for kv in base.items() for x in kv]
    result = CliRunner().invoke(cli, flat + ["docs", "list"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in result.stderr
    assert "definitely-wrong" not in result.stderr
    if neo4j_settings.password:
        assert neo4j_settings.password not in result.stderr


def test_docs_folder_ingests(kgrag, namespace):
    code, out, _ = kgrag("ingest", str(DOCS), "--namespace", namespace, "--embedder", "hashing", "--json")
    summary = json.loads(out)["summary"]
    assert code == 0 and summary["failed"] == 0 and summary["new"] >= 5 and summary["chunks"] > 10


def test_search_tuning_flags_show_defaults_apply_and_are_refused_for_other_modes(kgrag, namespace, tmp_path):
    code, out, _ = kgrag("search", "--help")
    for flag, default in [
        ("--graph-weight", "0.3"),
        ("--vector-weight", "0.7"),
        ("--hop-decay", "1.0,0.7,0.5"),
        ("--min-traversal-score", "0.0"),
        ("--seed-keyword-weight", "0.0"),
        ("--keyword-weight", "0.3"),
        ("--overfetch", "3"),
        ("--boost-direct", "0.3"),
        ("--boost-indirect", "0.1"),
        ("--top-k-entities", "10"),
        ("--top-k-relationships", "20"),
        ("--top-k-reports", "3"),
        ("--top-k-text-units", "10"),
        ("--max-tokens", "4000"),
        ("--seed-top-k", "10"),
    ]:
        assert re.search(rf"{re.escape(flag)}\b[^\[]*\[default: {re.escape(default)}\]", out, re.S), flag
    (tmp_path / "a.txt").write_text("Neo4j stores nodes and relationships.\n\nVector indexes find similar chunks.")
    kgrag("ingest", str(tmp_path / "a.txt"), "--namespace", namespace, "--embedder", "hashing", "--sequence-edges")
    # the original formula (--blend seed) makes the tuned score checkable by hand
    base = [
        "search",
        "nodes",
        "--namespace",
        namespace,
        "--embedder",
        "hashing",
        "--json",
        "--mode",
        "graph",
        "--top-k",
        "1",
        "--blend",
        "seed",
    ]
    _, out, _ = kgrag(*base)
    default_score = json.loads(out)["results"][0]["score"]
    _, out, _ = kgrag(*base, "--graph-weight", "0.5", "--vector-weight", "0.5")
    tuned = json.loads(out)["results"][0]
    assert tuned["score"] != pytest.approx(default_score)
    # the parts add up: vector = 0.5 x the seed's vector score, graph = 0.5 for being a seed
    assert tuned["scores"]["graph"] == pytest.approx(0.5)
    assert tuned["score"] == pytest.approx(tuned["scores"]["vector"] + tuned["scores"]["graph"])
    code, _, err = kgrag(
        "search",
        "nodes",
        "--namespace",
        namespace,
        "--embedder",
        "hashing",
        "--mode",
        "vector",
        "--graph-weight",
        "0.5",
        "--hops",
        "1",
    )
    assert code == 2 and "--hops, --graph-weight cannot be used with --mode vector" in err


def test_ingest_and_edges_refuse_llm_flags_without_the_llm(kgrag, namespace, tmp_path):
    (tmp_path / "a.txt").write_text("text")
    code, _, err = kgrag(
        "ingest", str(tmp_path / "a.txt"), "--namespace", namespace, "--embedder", "hashing", "--graph-batch-size", "8"
    )
    assert code == 2 and "--graph-batch-size need(s) --extract-graph" in err
    code, _, err = kgrag("edges", "build", "--namespace", namespace, "--embedder", "hashing", "--cross-document-batch-size", "8")
    assert code == 2 and "--cross-document-batch-size need(s) --cross-document" in err
