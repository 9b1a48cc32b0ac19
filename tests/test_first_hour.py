"""What a new user trips on in the first hour (issue 35): the demo on a taken port, a chunk
id to look up, silent empty results, documents named by their file, explanations whose parts
add up. CLI tests run click's runner against the real server."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from kgrag_neo4j.cli import cli
from tests.conftest import load_demo

ROOT = Path(__file__).resolve().parent.parent


# --- 1. the demo on a taken port ----------------------------------------------------------


@pytest.fixture
def held_port():
    """A port on 127.0.0.1 another program listens on (as Neo4j Desktop holds 7687)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        yield s.getsockname()[1]


def test_the_demo_honours_kgrag_port(monkeypatch, tmp_path):
    monkeypatch.setenv("KGRAG_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("KGRAG_PORT", "7787")
    monkeypatch.setenv("KGRAG_HTTP_PORT", "7788")
    server = load_demo().start_server()
    assert (server.port, server.http_port, server.data_dir) == (7787, 7788, tmp_path)


def test_the_demo_picks_a_free_port_and_says_so_when_its_port_is_taken(monkeypatch, tmp_path, held_port, capsys):
    monkeypatch.setenv("KGRAG_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("KGRAG_PORT", raising=False)
    # the port a start without KGRAG_PORT takes: the last one recorded (7687 the first time)
    (tmp_path / "server.json").write_text(json.dumps({"port": held_port}))
    server = load_demo().start_server()
    err = capsys.readouterr().err
    assert server.port and server.port != held_port
    assert f"port {held_port} on 127.0.0.1 is taken" in err and f"starting on {server.port}" in err
    assert "KGRAG_PORT" in err


def test_a_bad_kgrag_port_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("KGRAG_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("KGRAG_PORT", "seventy")
    with pytest.raises(SystemExit, match="KGRAG_PORT must be a port number"):
        load_demo().start_server()


def test_server_start_help_shows_the_port_variables_and_the_readme_activates_the_venv():
    out = CliRunner().invoke(cli, ["server", "start", "--help"], terminal_width=200).stdout
    assert "env var: KGRAG_PORT" in out and "env var: KGRAG_HTTP_PORT" in out
    readme = (ROOT / "README.md").read_text()
    cli_block = readme[readme.index("**CLI**") :]
    assert ". .venv/bin/activate" in cli_block[: cli_block.index("kgrag server start")]


# --- CLI against the real server ------------------------------------------------------------

PAPERS = {
    "Free Guy.txt": "Free Guy is a 2021 action comedy film directed by Shawn Levy. It stars Ryan Reynolds.",
    "Shawn Levy.txt": "Shawn Levy is a Canadian film director and producer, born in Montreal in 1968.",
    "Montreal.txt": "Montreal is the largest city of Quebec, on an island in the Saint Lawrence River.",
}


@pytest.fixture
def kgrag(neo4j_settings, schema_ready, namespace):
    """``kgrag(*args)`` in the test's namespace: (exit code, stdout, stderr)."""

    def invoke(*args: str, namespace_: str | None = None):
        base = ["--uri", neo4j_settings.uri, "--user", neo4j_settings.user]
        if neo4j_settings.password:
            base += ["--password", neo4j_settings.password]
        if neo4j_settings.database:
            base += ["--database", neo4j_settings.database]
        result = CliRunner().invoke(cli, base + list(args) + ["--namespace", namespace_ or namespace])
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result.exit_code, result.stdout, result.stderr

    return invoke


@pytest.fixture
def papers(kgrag, tmp_path):
    """Three small documents ingested from files of ``tmp_path/papers``, with their entities."""
    folder = tmp_path / "papers"
    folder.mkdir()
    for name, text in PAPERS.items():
        (folder / name).write_text(text)
    code, _, err = kgrag("ingest", str(folder), "--embedder", "hashing", "--sequence-edges")
    assert code == 0, err
    code, _, err = kgrag("entities", "build", "--embedder", "hashing")
    assert code == 0, err
    return folder


# --- 4. mistakes are said, not silent --------------------------------------------------------


def test_search_on_a_namespace_without_documents_says_so_and_fails(kgrag, make_namespace):
    empty = make_namespace()
    for extra in ((), ("--json",), ("--mode", "graph")):
        code, out, err = kgrag("search", "anything", "--embedder", "hashing", *extra, namespace_=empty)
        assert code == 1 and out == "", (extra, out)
        assert f"namespace {empty!r} has no documents" in err and "Traceback" not in err


def test_docs_list_says_how_many_more_exist(kgrag, papers):
    code, out, err = kgrag("docs", "list", "--limit", "2")
    assert code == 0 and len(out.splitlines()) == 2
    assert "1 more document not shown (--limit 3 lists all)" in err
    code, out, err = kgrag("docs", "list", "--limit", "2", "--json")
    assert code == 0 and len(json.loads(out)) == 2 and "1 more document" in err
    code, out, err = kgrag("docs", "list", "--limit", "3")
    assert code == 0 and len(out.splitlines()) == 3 and "more" not in err


def test_docs_delete_and_show_take_the_path_of_the_ingested_file(kgrag, papers, monkeypatch):
    code, out, _ = kgrag("docs", "list", "--json")
    by_source = {d["source"]: d["id"] for d in json.loads(out)}
    montreal = str(papers / "Montreal.txt")
    code, out, err = kgrag("docs", "show", montreal, "--json")
    assert code == 0 and json.loads(out)["id"] == by_source[montreal]
    monkeypatch.chdir(papers)  # relative, as typed in the folder
    code, out, err = kgrag("docs", "delete", "Montreal.txt")
    assert code == 0 and f"deleted {by_source[montreal]} (Montreal.txt)" in out, err
    code, out, err = kgrag("docs", "delete", "Montreal.txt")
    assert code == 1 and "no document 'Montreal.txt'" in err and "Traceback" not in err
    # an id still works, and the others are untouched
    levy = str(papers / "Shawn Levy.txt")
    code, out, _ = kgrag("docs", "delete", by_source[levy], "--json")
    assert code == 0 and json.loads(out) == {"id": by_source[levy], "deleted": True}
    code, out, _ = kgrag("docs", "list", "--json")
    assert [d["source"] for d in json.loads(out)] == [str(papers / "Free Guy.txt")]


@pytest.mark.parametrize("mode", ["ppr", "local", "graph", "hybrid"])
def test_every_mode_gives_its_results_their_document_title(kgrag, papers, mode):
    code, out, err = kgrag("search", "Who directed Free Guy?", "--embedder", "hashing", "--mode", mode, "--json")
    assert code == 0, err
    results = json.loads(out)["results"]
    assert results and all(r["title"] for r in results), results
    assert {r["title"] for r in results} <= set(PAPERS) | {n.removesuffix(".txt") for n in PAPERS}


# --- 3. explanations a reader can follow ----------------------------------------------------


def _parts_sum(result: dict) -> float:
    return sum(v for k, v in result["scores"].items() if k in ("vector", "fused", "graph", "boost"))


@pytest.mark.parametrize(
    "flags",
    [
        (),
        ("--seed-top-k", "1"),
        ("--blend", "seed", "--seed-top-k", "1"),
        ("--seed-keyword-weight", "0.5", "--blend", "seed"),
        ("--bidirectional",),
    ],
)
def test_graph_json_explains_every_result_with_parts_that_add_up(kgrag, papers, flags):
    code, out, err = kgrag("search", "Who directed Free Guy?", "--embedder", "hashing", "--mode", "graph", "--json", *flags)
    assert code == 0, err
    results = json.loads(out)["results"]
    assert len(results) == 3
    for r in results:
        assert r["explanation"], r
        assert _parts_sum(r) == pytest.approx(r["score"], abs=1e-9), r
        seed = r["explanation"][0].startswith("seed:")
        # a seed is never "reached from" another chunk: graph_context is for graph-found ones
        assert (r["graph_context"] == []) == seed, r
    if flags == ("--seed-top-k", "1"):
        reached = [r for r in results if r["graph_context"]]
        assert reached and all(any(r["graph_context"][0]["from_chunk_id"] in line for line in r["explanation"]) for r in reached)


def test_the_ids_a_search_prints_can_be_looked_up(kgrag, papers):
    code, out, err = kgrag("search", "Who directed Free Guy?", "--embedder", "hashing", "--mode", "graph", "--seed-top-k", "1")
    assert code == 0 and "kgrag chunks show CHUNK_ID" in err
    import re

    printed = set(re.findall(r"\bchk_[0-9a-f]{32}\b", out))
    came_from = set(re.findall(r"↳ Related: .*from (chk_[0-9a-f]{32})\)", out))
    assert came_from and came_from <= printed and len(printed) == 3
    for chunk_id in printed:
        code, out, err = kgrag("chunks", "show", chunk_id, "--json")
        assert code == 0, err
        detail = json.loads(out)
        assert detail["chunk"]["id"] == chunk_id and detail["document"]["source"].startswith(str(papers))
        assert detail["chunk"]["content"] in PAPERS.values()
        for edge in detail["outgoing"] + detail["incoming"]:
            assert {"chunk_id", "relation", "weight", "origin"} <= set(edge) and edge["chunk_id"] in printed
        code, text, _ = kgrag("chunks", "show", chunk_id[:12])  # cut short, as a narrow terminal shows it
        assert code == 0 and text.startswith(chunk_id) and "outgoing edges" in text and "entities mentioned" in text
    levy = next(c for c in printed if "Shawn Levy is" in json.loads(kgrag("chunks", "show", c, "--json")[1])["chunk"]["content"])
    detail = json.loads(kgrag("chunks", "show", levy, "--json")[1])
    assert {"Shawn Levy", "Montreal"} <= {e["name"] for e in detail["entities"]}
    assert any(e["origin"] == "entities" and e["relation"] == "references" for e in detail["outgoing"] + detail["incoming"])
    code, _, err = kgrag("chunks", "show", "chk_")
    assert code == 1 and "more than one chunk id starts with 'chk_'" in err
    code, _, err = kgrag("chunks", "show", "chk_nothing")
    assert code == 1 and "no chunk 'chk_nothing'" in err and "Traceback" not in err


# --- 5. Browser: the same retrieval as the CLI, and as a graph --------------------------------


def _cypher_values(kgrag, name: str, query: str) -> dict:
    from kgrag_neo4j.cypher_params import parse_params

    code, out, err = kgrag("cypher", "params", name, "--query", query)
    assert code == 0, err
    return parse_params(out)


@pytest.mark.parametrize("name", ["graph/retrieve", "graph/retrieve_graph"])
def test_cypher_params_and_run_use_the_search_defaults(kgrag, papers, name):
    from kgrag_neo4j.entities.gazetteer import query_name_keys
    from kgrag_neo4j.options import GraphOptions

    query = "Who directed Free Guy?"
    values = _cypher_values(kgrag, name, query)
    o = GraphOptions()
    assert values["refine_seeds"] is True and values["blend"] == o.blend
    assert values["entity_seed_weight"] == pytest.approx(o.entity_weight)
    assert values["fetch_k"] == 200 and values["seed_top_k"] == o.seed_top_k and values["top_k"] == 5
    assert [k["key"] for k in values["entity_keys"]] == [k["key"] for k in map(dict, query_name_keys(query))]
    assert {"key": "free guy", "start": 2, "end": 4} in values["entity_keys"]
    # what `cypher run` answers is what `search` answers
    code, out, err = kgrag("search", query, "--mode", "graph", "--embedder", "hashing", "--json")
    searched = [(r["id"], round(r["score"], 6)) for r in json.loads(out)["results"]]
    code, out, err = kgrag("cypher", "run", name, "--query", query)
    assert code == 0, err
    rows = json.loads(out)
    if name == "graph/retrieve":
        ran = [(r["chunk"]["id"], round(r["score"], 6)) for r in rows]
    else:
        ran = [(r["id"], round(r["score"], 6)) for r in rows[0]["results"]]
        assert {n["id"] for n in rows[0]["nodes"]} >= {i for i, _ in ran}
        # a chunk of a namespace with an entity graph is also in the chunk_names index (its label)
        assert all("embedding" not in n and n["labels"] in (["Chunk"], ["Chunk", "NameScanned"]) for n in rows[0]["nodes"])
    assert ran == searched and len(searched) == 3


def test_the_graph_view_is_the_retrieval_as_nodes_and_relationships(kgrag, papers, store, hashing_embedder):
    from kgrag_neo4j import GraphRetriever

    query = "Who directed Free Guy?"
    for flags in ((), ("--seed-top-k", "1"), ("--seed-top-k", "1", "--bidirectional", "--blend", "seed")):
        code, out, err = kgrag("search", query, "--mode", "graph", "--embedder", "hashing", "--json", *flags)
        expected = json.loads(out)["results"]
        code, out, err = kgrag("search", query, "--mode", "graph", "--embedder", "hashing", "--json", "--graph-view", *flags)
        assert code == 0, err
        view = json.loads(out)
        assert [(r["id"], round(r["score"], 6)) for r in view["results"]] == [(r["id"], round(r["score"], 6)) for r in expected]
        ids = {n["id"] for n in view["nodes"]}
        assert {r["id"] for r in expected} <= ids
        assert all(e["source"] in ids and e["target"] in ids and e["relation"] and e["origin"] for e in view["relationships"])
        for r, e in zip(view["results"], expected):
            came = e["graph_context"][0]["from_chunk_id"] if e["graph_context"] else None
            assert r["came_from"] == came or r["hop"] == 0
            if r["came_from"]:  # the edge it came through is drawn
                assert any({x["source"], x["target"]} == {r["id"], r["came_from"]} for x in view["relationships"])
        if flags:
            assert any(r["hop"] > 0 for r in view["results"]) and view["relationships"]
    code, out, err = kgrag("search", query, "--mode", "graph", "--embedder", "hashing", "--graph-view")
    assert code == 0 and "nodes (" in out and "relationships (" in out and "graph/retrieve_graph" in err
    code, _, err = kgrag("search", query, "--mode", "vector", "--embedder", "hashing", "--graph-view")
    assert code == 2 and "--graph-view takes --mode graph" in err
    # the library call behind it
    view = GraphRetriever(store, hashing_embedder, seed_top_k=1).graph_view(query, 3)
    assert [r["id"] for r in view["results"]] == [
        r.id for r in GraphRetriever(store, hashing_embedder, seed_top_k=1).retrieve(query, 3)
    ]


# --- 6. other namespaces move keyword ranks, never what a namespace finds ---------------------


def test_other_namespaces_change_keyword_order_at_most_never_membership_or_vector_ranks(store, make_namespace, hashing_embedder):
    """docs/retrieval.md "Namespaces share the full-text statistics" (measured by
    ``python -m bench namespaces``): BM25 statistics are index-wide, so another namespace can
    reorder this one's keyword hits; which chunks match, and the vector list, stay its own."""
    from kgrag_neo4j import HybridRetriever, Ingestor

    texts = {
        "graph.md": "Graph retrieval expands from seed chunks over typed edges, hop by hop.",
        "index.md": "The vector index finds seed chunks; the full-text index finds words.",
        "ns.md": "Every namespace is a tenant: chunks, edges and entities carry it.",
        "bm25.md": "BM25 ranks chunks by term frequency and the rarity of each word in the index.",
    }
    for name, text in texts.items():
        Ingestor(store, hashing_embedder).ingest_text(text, source=name)
    queries = ["seed chunks edges", "index words rarity", "namespace tenant chunks"]

    def read():
        out = {}
        for q in queries:
            vector = [r.id for r in store.search_chunks(hashing_embedder.embed([q], input_type="query")[0], 10)]
            keyword = [(r.id, r.score) for r in store.search_chunks_keyword(q, 10)]
            hybrid = [r.id for r in HybridRetriever(store, hashing_embedder).retrieve(q, 10)]
            out[q] = (vector, keyword, hybrid)
        return out

    alone = read()
    other = store.with_namespace(make_namespace())
    for i in range(12):  # the same words at other frequencies: "chunks" common, "rarity" less rare
        Ingestor(other, hashing_embedder).ingest_text(f"chunks chunks edges seed {i} rarity of words", source=f"o{i}.md")
    beside = read()
    for q in queries:
        (v0, k0, h0), (v1, k1, h1) = alone[q], beside[q]
        assert v1 == v0 and {i for i, _ in k1} == {i for i, _ in k0} and set(h1) == set(h0), q
    # the scores (the statistics) did move: the measurement is not of a no-op
    assert any(dict(alone[q][1]) != dict(beside[q][1]) for q in queries)
