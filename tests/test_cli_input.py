"""Bad input to the CLI (red-team findings 5 and 14): every option a mode cannot honour is
refused, and every hostile value ends in one ``Error:`` line with a non-zero exit code, never a
traceback; what names and values print cannot forge or colour an output line."""

from __future__ import annotations

import json

import pytest

from kgrag_neo4j.cli.search_cmd import honoured_by_reranker, option_of
from kgrag_neo4j.errors import ConfigurationError
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.retrieval.modes import MODES
from kgrag_neo4j.settings import Neo4jSettings, validate_namespace

from .reliability_helpers import no_leaked_threads  # noqa: F401

BIG = str(2**63)  # one past the largest 64-bit integer


@pytest.fixture
def run(kgrag_cli):
    return kgrag_cli


def one_error(result) -> str:
    """The run failed with an ``Error:`` line as its last word and no traceback; returns it."""
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("Error: "), result.stderr
    return lines[-1]


# -- 5. options a mode cannot honour are refused -------------------------------------------------------


FLAGS = {
    "rerank": ["--rerank", "score"],
    "min_score": ["--min-score", "0.2"],
    "hops": ["--hops", "1"],
    "bidirectional": ["--bidirectional"],
    "relations": ["--relations", "references"],
    "seed_top_k": ["--seed-top-k", "3"],
    "refine_seeds": ["--refine-seeds"],
    "vector_candidates": ["--vector-candidates", "50"],
    "keyword_weight": ["--keyword-weight", "0.5"],
    "max_tokens": ["--max-tokens", "100"],
}


def honoured(mode: str, flag: str) -> bool:
    """What the modes' declarations say (``--min-score`` alone, without ``--rerank score``)."""
    return option_of(flag, mode) is not None


REFUSED = [(mode, flag) for mode in MODES for flag in FLAGS if not honoured(mode, flag)]


@pytest.mark.parametrize("mode, flag", REFUSED, ids=[f"{m}-{f}" for m, f in REFUSED])
def test_an_option_the_mode_cannot_honour_is_refused(run, namespace, mode, flag):
    result = run("search", "anything", "--mode", mode, *FLAGS[flag], "--namespace", namespace, "--embedder", "hashing")
    line = one_error(result)
    assert FLAGS[flag][0] in line and f"--mode {mode}" in line


def test_filters_apply_in_every_mode_that_takes_them(run, store, hashing_embedder):
    from kgrag_neo4j.entities.pipeline import build_entities

    ingestor = Ingestor(store, hashing_embedder)
    wanted = ingestor.ingest_text("Ned Stark rules Winterfell in the north.", "north.txt").document_id
    ingestor.ingest_text("Ned Stark rides south to Kings Landing.", "south.txt")
    build_entities(store, hashing_embedder)
    for mode in MODES:  # every mode honours --filter
        # graph mode filters its seeds, and its edges may lead beyond them (docs/retrieval.md);
        # the entity build links the two documents, so the seeds alone are looked at
        seeds_only = ["--hops", "0"] if mode == "graph" else []
        result = run(
            "search",
            "Ned Stark",
            "--mode",
            mode,
            "--filter",
            f"document={wanted}",
            *seeds_only,
            "--json",
            "--namespace",
            store.namespace,
            "--embedder",
            "hashing",
        )
        assert result.exit_code == 0, result.stderr
        documents = {r["document_id"] for r in json.loads(result.stdout)["results"]}
        assert documents == {wanted}, mode
    # --min-score is honoured in graph mode through the score reranker
    assert honoured_by_reranker("min_score", "graph", "score") and not honoured_by_reranker("min_score", "graph", "none")
    result = run(
        "search",
        "Ned Stark",
        "--mode",
        "graph",
        "--rerank",
        "score",
        "--min-score",
        "0.99",
        "--json",
        "--namespace",
        store.namespace,
        "--embedder",
        "hashing",
    )
    assert result.exit_code == 0 and all(r["score"] >= 0.99 for r in json.loads(result.stdout)["results"])


# -- 14. hostile values: one Error line each ---------------------------------------------------------------


@pytest.mark.parametrize(
    "args, says",
    [
        (["search", "q", "--top-k", BIG], "top_k"),
        (["search", "q", "--filter", f"after={2**64}"], "64-bit"),
        (["docs", "list", "--limit", BIG], "64"),
        (["docs", "list", "--limit", "0"], "--limit"),
        (["search", "q", "--min-score", "nan"], "finite"),
        (["search", "q", "--min-score", "inf"], "finite"),
        (["cypher", "run", "documents/list_documents", "--param", "namespace=x", "--param", f"limit={BIG}"], "64-bit"),
        (
            [
                "cypher",
                "run",
                "documents/list_documents",
                "--param",
                "namespace=x",
                "--param",
                "limit=" + "[" * 30000 + "]" * 30000,
            ],
            "nested",
        ),
        (
            [
                "cypher",
                "run",
                "documents/list_documents",
                "--param",
                "namespace=x",
                "--param",
                "limit=" + "[" * 500 + "1" + "]" * 500,
            ],
            "nested",
        ),
        (["docs", "list", "--namespace", "a\u200bb"], "U+200B"),
        (["docs", "list", "--namespace", "evil\u202etxt"], "U+202E"),
        (["docs", "list", "--namespace", "bad\udcff"], "U+DCFF"),
    ],
    ids=[
        "top-k",
        "filter-after",
        "docs-limit-big",
        "docs-limit-zero",
        "min-score-nan",
        "min-score-inf",
        "param-int",
        "param-deep",
        "param-deep-json",
        "namespace-zero-width",
        "namespace-bidi",
        "namespace-surrogate",
    ],
)
def test_hostile_values_are_one_error_line(run, namespace, args, says):
    args = [*args, "--embedder", "hashing"] if args[0] == "search" else list(args)
    if args[0] in ("search",) and "--namespace" not in args:
        args += ["--namespace", namespace]
    line = one_error(run(*args))
    assert says in line, line


@pytest.mark.parametrize("uri", ["bolt://localhost:notaport", "bolt://localhost:70000", "neo4j://user:pw@h:x/"])
def test_a_bad_uri_port_is_one_error_line(run, uri):
    line = one_error(run("--uri", uri, "docs", "list", connect=False))
    assert "port" in line and "pw" not in line


def test_server_start_with_a_port_out_of_range_is_one_error_line(run, tmp_path):
    line = one_error(run("server", "start", "--port", "70000", "--data-dir", str(tmp_path / "srv"), connect=False))
    assert "70000" in line
    assert not (tmp_path / "srv").exists()


def test_docs_delete_of_a_missing_id_fails_with_json_too(run, namespace):
    result = run("docs", "delete", "doc_nothing_here", "--json", "--namespace", namespace)
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {"id": "doc_nothing_here", "deleted": False}
    assert result.stderr.strip().startswith("Error: NotFoundError")


def test_names_cannot_forge_or_colour_output_lines(run, namespace, tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "good.txt").write_text("a good file")
    evil = "evil\x1b[31m red\nfailed: forged.txt\u202e.txt"
    (kb / evil).write_text("")  # empty: it fails, and its name is printed
    result = run("ingest", str(kb), "--namespace", namespace, "--embedder", "hashing")
    assert result.exit_code == 1
    failed = [line for line in result.stderr.splitlines() if line.startswith("failed:")]
    assert len(failed) == 1, result.stderr
    assert "\x1b" not in result.stderr and "\u202e" not in result.stderr
    assert "\\x1b[31m" in failed[0] and "\\nfailed: forged" in failed[0] and "\\u202e" in failed[0]


def test_namespace_validation_refuses_what_cannot_be_seen():
    for name in ("a\u200bb", "\u202eevil", "x\u2066y", "tab\tname", "nul\x00", "line\u2028break", "bad\udcff"):
        with pytest.raises(ConfigurationError):
            validate_namespace(name)
    for name in ("default", "tenant-42", "Équipe Nord", "日本語", "a b"):
        assert validate_namespace(name) == name


def test_settings_refuse_a_bad_port_without_echoing_the_password():
    for uri in ("bolt://u:secret@h:notaport", "bolt://h:99999"):
        with pytest.raises(ConfigurationError) as caught:
            Neo4jSettings(uri=uri)
        assert "secret" not in str(caught.value)
